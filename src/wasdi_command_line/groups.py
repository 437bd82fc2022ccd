"""The root command group both command lines derive from."""

from __future__ import annotations

import os
from typing import Any

from typer.core import TyperGroup

from .help_style import uniform


def debug_enabled() -> bool:
    """``WASDI_DEBUG`` asks for tracebacks instead of one-sentence errors."""
    return os.environ.get("WASDI_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


class UniformHelpGroup(TyperGroup):
    """A group whose commands' ``--help`` all follow ``help_style``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        uniform(self)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        uniform(self)  # again: the shell-completion options are added after construction
        super().format_help(ctx, formatter)
