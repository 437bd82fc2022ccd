"""The root group of ``wasdi``: a command's module is imported (and its click command built) only
when that command runs, so ``wasdi ws --help`` does not pay for every other group."""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import typer.main

from .errors import WasdiGroup


class LazyGroup(WasdiGroup):
    """``lazy`` maps a command name to ``"<module>"`` (that module's ``app`` is the group) or to
    ``"<module>.<command>"`` (a command of that module's ``app``, at the top level); modules are
    under ``wasdi_cli.commands``."""

    lazy: ClassVar[dict[str, str]] = {}

    # Typer vendors its own Click and names its context type only privately: `ctx` is that context (typer.Context
    # at run time); no `import click`, which is not a dependency and not the Click Typer uses.
    def list_commands(self, ctx: Any) -> list[str]:
        eager = super().list_commands(ctx)
        return [*eager, *(name for name in self.lazy if name not in eager)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        target = self.lazy.get(cmd_name)
        if command is not None or target is None:
            return command
        module_name, _, command_name = target.partition(".")
        module: Any = importlib.import_module(f"wasdi_cli.commands.{module_name}")
        group = typer.main.get_group(module.app)
        built = group.get_command(ctx, command_name) if command_name else group
        if built is None:  # a mistake in the table of main.py, not the user's
            raise LookupError(f"wasdi_cli.commands.{module_name} has no command {command_name!r}")
        built.name = cmd_name
        from wasdi_command_line.help_style import uniform

        uniform(built)  # the root styled what it had at construction; a lazy group arrives later
        self.add_command(built, cmd_name)  # built once per run
        return built
