"""Finding a resource by what a person types: its id, or its name."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .errors import USAGE, CliError

T = TypeVar("T")


def by_id_or_name(items: Sequence[T], value: str, *, id_of: Callable[[T], str | None],
                  name_of: Callable[[T], str | None], noun: str, casefold: bool = False,
                  describe: Callable[[T], str] | None = None) -> tuple[str, T | None]:
    """``(id, list entry)`` of the item ``value`` identifies or names.

    An id wins over a name; a name shared by several items is a usage error listing their ids; a value that
    is neither is passed on as an id (an admin, or a public resource, may be outside the caller's list).
    """
    for item in items:
        if id_of(item) == value:
            return value, item

    def same(name: str | None) -> bool:
        return (name or "").casefold() == value.casefold() if casefold else name == value

    named = [item for item in items if same(name_of(item)) and id_of(item)]
    if len(named) > 1:
        ids = ", ".join(describe(item) if describe else str(id_of(item)) for item in named)
        raise CliError(f"{len(named)} {noun}s are named '{value}' ({ids}); give the id", USAGE)
    if named:
        return str(id_of(named[0])), named[0]
    return value, None


def named(resource_id: str, entry: Any) -> str:
    """``'name' (id)`` when the entry has a name, else the id."""
    name = getattr(entry, "name", None) or getattr(entry, "workspace_name", None)
    return f"'{name}' ({resource_id})" if name else resource_id
