"""Finding one thing by its name in a listing: the one match, or an error that names what was asked."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from ._exceptions import ConflictError, NotFoundError

T = TypeVar("T")
SHOWN = 5
"""How many of the names there are an error lists."""


def find_one(items: Iterable[T], name: str, *, name_of: Callable[[T], str | None], id_of: Callable[[T], str | None],
             noun: str, call: str) -> T:
    """The item of ``items`` named ``name`` (exactly).  ``NotFoundError`` naming ``name``, the call and a few of
    the names there are when none is; ``ConflictError`` listing their ids when several are."""
    listed = list(items)
    matches = [item for item in listed if name_of(item) == name]
    if len(matches) == 1:
        return matches[0]
    if matches:
        ids = ", ".join(str(id_of(item)) for item in matches)
        raise ConflictError(f"{len(matches)} {noun}s are named {name!r} ({call}): give the id, one of {ids}",
                            endpoint=call)
    names = sorted({str(name_of(item)) for item in listed if name_of(item)})
    there = (f"; the {noun}s here: {', '.join(repr(n) for n in names[:SHOWN])}{' …' if len(names) > SHOWN else ''}"
             if names else f"; there are no {noun}s here")
    raise NotFoundError(f"no {noun} named {name!r} ({call}){there}", endpoint=call)
