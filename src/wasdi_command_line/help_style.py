"""One look for every ``--help`` of ``wasdi`` and ``wasdi-server``: flags show no metavar, values show a
uniform one (``N`` for numbers, ``FILE``/``DIR`` for paths, the option's name for text, ``ID_OR_NAME``
where a command set it), arguments show their name only."""

from __future__ import annotations

import inspect
from typing import Any


def _kind(param: Any) -> str:
    described = getattr(param, "type_descriptor", None)  # Typer >= 0.26
    if described is not None:
        annotation = getattr(described, "annotation", None)
        if getattr(described, "is_choice", False):
            return "choice"
        if annotation is bool:
            return "flag"
        if annotation in (int, float):
            return "number"
        if getattr(described, "is_path", False) or getattr(described, "is_file", False):
            return "path"
        return "text"
    name = getattr(getattr(param, "type", None), "name", "")  # older Typer: Click's types
    return {"integer": "number", "float": "number", "integer range": "number", "float range": "number"}.get(
        name, name if name in ("choice", "path") else "text")


def _metavar(param: Any) -> str | None:
    kind = _kind(param)
    if kind == "choice":
        return None  # the choices themselves are the best hint
    if kind == "number":
        return "N"
    name = (param.name or "value").upper()
    if kind == "path":
        return "DIR" if "DIR" in name or "FOLDER" in name else "FILE"
    return name


def _no_type(ctx: Any) -> None:
    return None


def _usage_pieces(param: Any) -> Any:
    """An argument as the usage line shows it, the way man pages write it: ``URL...``, ``[LAYER]`` (Typer's own
    braces, ``{URL...}...`` and ``[[LAYER]]``, read as syntax nobody types)."""
    def pieces(ctx: Any) -> list[str]:
        name = str(param.metavar or str(param.name or "value").upper()).strip("[]").removesuffix("...")
        if getattr(param, "nargs", 1) != 1:
            name += "..."
        return [name if param.required else f"[{name}]"]

    return pieces


def uniform(command: Any) -> None:
    """Set the help metavars of ``command`` and of everything under it (once per process run)."""
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", "") == "argument":
            param.display_type_rich = _no_type  # the name says it; "<str>" adds nothing
            param.get_usage_pieces = _usage_pieces(param)
        elif getattr(param, "is_flag", False) or getattr(param, "count", False) or _kind(param) == "flag":
            param.metavar = ""
        elif param.metavar is None:
            param.metavar = _metavar(param)
    original = getattr(command, "get_help_option", None)
    if original is not None and not getattr(original, "_uniform", False):
        def get_help_option(ctx: Any) -> Any:
            option = original(ctx)
            if option is not None:
                option.metavar = ""
            return option

        get_help_option._uniform = True  # type: ignore[attr-defined]
        command.get_help_option = get_help_option
    help_text = getattr(command, "help", None)
    if help_text and not getattr(command, "short_help", None):
        first = inspect.cleandoc(help_text).split("\n\n")[0]
        if not first.startswith("\b"):
            # the rich help lists a command with the first paragraph of its help; saying so here makes
            # the plain help (see ``plain_help``) list it whole too, where Click would cut it at 45 characters
            command.short_help = first
    for sub in getattr(command, "commands", {}).values():
        uniform(sub)


def plain_help(argv: list[str], stdout: Any) -> None:
    """Print ``--help`` without rich when it goes to a pipe or a file, not a terminal: the same text
    without the boxes and colours, and it spares importing rich, markdown-it and rich's tracebacks,
    which cost more than the rest of ``wasdi ws --help`` together (issue 10).  Only the help: any other
    run keeps Typer's rich errors."""
    if any(arg in ("-h", "--help") for arg in argv) and not _is_terminal(stdout):
        import typer.core

        typer.core.HAS_RICH = False  # read by TyperGroup/TyperCommand.format_help at each call


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False
