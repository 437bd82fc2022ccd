"""One look for every ``--help`` of ``wasdi`` and ``wasdi-server``: flags show no metavar, values show a
uniform one (``N`` for numbers, ``FILE``/``DIR`` for paths, the option's name for text, ``ID_OR_NAME``
where a command set it), arguments show their name only."""

from __future__ import annotations

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


def uniform(command: Any) -> None:
    """Set the help metavars of ``command`` and of everything under it (once per process run)."""
    for param in getattr(command, "params", ()):
        if getattr(param, "param_type_name", "") == "argument":
            param.display_type_rich = _no_type  # the name says it; "<str>" adds nothing
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
    for sub in getattr(command, "commands", {}).values():
        uniform(sub)
