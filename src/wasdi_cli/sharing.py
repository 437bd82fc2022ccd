"""``wasdi <group> share add|list|remove``: the same three commands for every shareable resource."""

# No ``from __future__ import annotations``: the command signatures below are built from arguments of
# ``add_share_commands`` and Typer must see them as objects, not as strings to look up.

import enum
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Annotated, Any

import typer

from . import connection
from .options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from .output import Column, Output, cell, message

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient

Resolver = Callable[["WasdiClient", str], tuple[str, Any]]
"""``(client, what the user typed) -> (resource id, its list entry or None)``."""
Labeler = Callable[[str, Any], str]

SHARE_COLUMNS: tuple[Column, ...] = (
    ("user", lambda s: s.user_id),
    ("rights", lambda s: getattr(s, "permissions", None)),
    ("owner", lambda s: getattr(s, "owner_id", None)),
)


class Rights(enum.StrEnum):
    read = "read"
    write = "write"


UserArg = Annotated[str, typer.Argument(metavar="USER", help="User id (e-mail).")]
RightsOpt = Annotated[Rights, typer.Option("--rights", help="What the user may do.")]


def as_given(client: "WasdiClient", value: str) -> tuple[str, Any]:
    """A resolver for resources named by their id only (nodes)."""
    return value, None


def add_share_commands(app: typer.Typer, *, noun: str, group: str, id_param: str, resource_arg: Any,
                       resolve: Resolver = as_given, label: Labeler | None = None,
                       columns: Sequence[Column] = SHARE_COLUMNS) -> None:
    """Add ``share add|list|remove`` for ``client.<group>.share_*`` (the id keyword is ``id_param``)."""
    article = "an" if noun[:1].lower() in "aeiou" else "a"
    share_app = typer.Typer(name="share", help=f"Share {article} {noun}: add, list, remove users.",
                            no_args_is_help=True)
    app.add_typer(share_app)
    name_of = label or (lambda resource_id, entry: resource_id)

    def resource_api(client: "WasdiClient") -> Any:
        return getattr(client, group)

    @share_app.command("add", help=f"Share a {noun} with a user.")
    def share_add(resource: resource_arg, user: UserArg, rights: RightsOpt = Rights.read,
                  profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
        with connection.connect(connection.resolve(profile, base_url)) as client:
            resource_id, entry = resolve(client, resource)
            outcome = resource_api(client).share_add(**{id_param: resource_id}, user_id=user, rights=rights.value)
        said = getattr(outcome, "message", None) or getattr(outcome, "string_value", None) or ""
        if said.lower().startswith("already"):
            message(f"{noun.capitalize()} {name_of(resource_id, entry)} was already shared with {user} "
                    "(its rights are unchanged)")
        else:
            message(f"Shared {noun} {name_of(resource_id, entry)} with {user} ({rights.value})")

    @share_app.command("list", help=f"Users {article} {noun} is shared with.")
    def share_list(resource: resource_arg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
                   json: JsonOpt = False, quiet: QuietOpt = False) -> None:
        out = Output(json_output=json, quiet=quiet)
        with connection.connect(connection.resolve(profile, base_url)) as client:
            resource_id, _ = resolve(client, resource)
            sharings = resource_api(client).share_list(resource_id)
        out.items(sharings, columns, id_of=lambda s: s.user_id,
                  empty=f"{noun.capitalize()} {cell(resource)} is not shared.")

    @share_app.command("remove", help=f"Stop sharing a {noun} with a user.")
    def share_remove(resource: resource_arg, user: UserArg, profile: ProfileOpt = None,
                     base_url: BaseUrlOpt = None) -> None:
        with connection.connect(connection.resolve(profile, base_url)) as client:
            resource_id, entry = resolve(client, resource)
            resource_api(client).share_delete(**{id_param: resource_id}, user_id=user)
        message(f"Stopped sharing {noun} {name_of(resource_id, entry)} with {user}")
