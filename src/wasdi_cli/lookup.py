"""Finding a resource by what a person types: its id, or its name."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from .errors import ERROR, USAGE, CliError

T = TypeVar("T")
_UUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def listing_of(fetch: Callable[[], list[T]], noun: str) -> list[T]:
    """``fetch()``'s list; a listing the server answered with nothing at all (how these endpoints say the
    session is not valid) is an error saying so."""
    from wasdi_sdk import EmptyResultError

    try:
        return fetch()
    except EmptyResultError as e:
        raise CliError(f"the server listed no {noun} (is the session still valid? try 'wasdi login')") from e


def by_id_or_name(items: Sequence[T], value: str, *, id_of: Callable[[T], str | None],
                  name_of: Callable[[T], str | None], noun: str, casefold: bool = False,
                  describe: Callable[[T], str] | None = None, fetch: Callable[[str], object] | None = None,
                  listing: str | None = None) -> tuple[str, T | None]:
    """``(id, list entry)`` of the item ``value`` identifies or names.

    An id wins over a name; a name shared by several items is a usage error listing their ids.  A value that
    is neither is an id if ``fetch(value)`` finds it (an admin, or a public resource, may be outside the
    caller's list) or it is shaped like one (a UUID: the server then answers for it); otherwise it is an
    error naming what was not found (``listing``: the command that lists them, for the hint).
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
    if (fetch is not None and _found(fetch, value)) or _UUID.match(value):
        # Shaped like an id: the server answers for it (a stranger's workspace is its 403, not our guess).
        return value, None
    if not items:
        from .connection import confirm_session_of_empty_listing

        confirm_session_of_empty_listing()  # an unknown session lists nothing: say that, not "no such name"
    hint = f" (run 'wasdi {listing}' to see them)" if listing else ""
    raise CliError(f"no {noun} has the id or name '{value}' among yours{hint}", ERROR)


def _found(fetch: Callable[[str], object], value: str) -> bool:
    from wasdi_sdk import AuthenticationError, PermissionDeniedError, WasdiError

    try:
        found = fetch(value)
    except (AuthenticationError, PermissionDeniedError):
        raise  # it exists but is not the caller's: the server's answer says so (exit 4)
    except WasdiError:
        return False
    return bool(found)


def named(resource_id: str, entry: Any) -> str:
    """``'name' (id)`` when the entry has a name, else the id."""
    name = getattr(entry, "name", None)
    return f"'{name}' ({resource_id})" if name else resource_id
