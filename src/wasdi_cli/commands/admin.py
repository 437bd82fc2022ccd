"""``wasdi admin ...``: the operators' console (``client.admin``): users, lookups, permissions, node metrics
and the process queue.  Every command but ``permissions types`` needs an admin's session."""

import json as jsonlib
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, cell, message, when

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import UserListViewModel

app = typer.Typer(name="admin", help="Operators' console: users, workspaces, apps, resources, permissions, node "
                                     "metrics and the process queue (admins).", no_args_is_help=True)
users_app = typer.Typer(name="users", help="Users: list, find, show, summary, update and delete.",
                        no_args_is_help=True)
permissions_app = typer.Typer(name="permissions", help="Who may use what: list, add and remove permissions.",
                              no_args_is_help=True)
metrics_app = typer.Typer(name="metrics", help="Node metrics: show the latest, push an entry.", no_args_is_help=True)
app.add_typer(users_app)
app.add_typer(permissions_app)
app.add_typer(metrics_app)

UserArg = Annotated[str, typer.Argument(metavar="USER", help="User id (e-mail), or their public nickname.")]
TextArg = Annotated[str, typer.Argument(metavar="TEXT", help="Part of the name (at least 3 characters).")]
TypeArg = Annotated[str, typer.Argument(metavar="TYPE", help="WORKSPACE, PROCESSOR, SUBSCRIPTION, ORGANIZATION, "
                                                             "WORKFLOW, STYLE, PARAMETER, NODE, VOLUME or MISSION.")]
ResourceArg = Annotated[str, typer.Argument(metavar="RESOURCE", help="Resource id, or its name (searchable types).")]
OffsetOpt = Annotated[int | None, typer.Option("--offset", min=0, help="Skip this many (default 0).")]
LimitOpt = Annotated[int | None, typer.Option("--limit", min=1, help="At most this many (default 10).")]

USER_COLUMNS = (
    ("user", lambda u: u.user_id),
    ("name", lambda u: u.name),
    ("surname", lambda u: u.surname),
    ("nickname", lambda u: u.public_nick_name),
    ("type", lambda u: u.type),
    ("active", lambda u: u.active),
    ("last login", lambda u: when(u.last_login)),
)
FOUND_USER_COLUMNS = (
    ("user", lambda u: u.user_id),
    ("name", lambda u: u.name),
    ("surname", lambda u: u.surname),
    ("role", lambda u: u.role),
    ("nickname", lambda u: u.public_nick_name),
)
USER_FIELDS = (
    ("user", lambda u: u.user_id), ("name", lambda u: u.name), ("surname", lambda u: u.surname),
    ("nickname", lambda u: u.public_nick_name), ("role", lambda u: u.role), ("type", lambda u: u.type),
    ("active", lambda u: u.active), ("default node", lambda u: u.default_node),
    ("registered", lambda u: when(u.registration_date)), ("confirmed", lambda u: when(u.confirmation_date)),
    ("last login", lambda u: when(u.last_login)), ("link", lambda u: u.link), ("description", lambda u: u.description),
)
SUMMARY_FIELDS = (
    ("users", lambda s: s.total_users), ("without subscription", lambda s: s.none_users),
    ("free", lambda s: s.free_users), ("standard", lambda s: s.standard_users),
    ("professional", lambda s: s.pro_users), ("organizations", lambda s: s.organizations),
)
WORKSPACE_COLUMNS = (
    ("id", lambda w: w.workspace_id), ("name", lambda w: w.name), ("owner", lambda w: w.owner_user_id),
    ("node", lambda w: w.node_code), ("size", lambda w: w.storage_size),
)
APP_COLUMNS = (
    ("id", lambda p: p.processor_id), ("name", lambda p: p.processor_name), ("owner", lambda p: p.publisher),
    ("type", lambda p: p.type), ("public", lambda p: bool(p.is_public)),
)
RESOURCE_COLUMNS = (
    ("type", lambda r: r.resource_type), ("id", lambda r: r.resource_id), ("name", lambda r: r.resource_name),
    ("owner", lambda r: r.user_id),
)
PERMISSION_COLUMNS = (
    ("type", lambda p: p.resource_type), ("resource", lambda p: p.resource_id), ("user", lambda p: p.user_id),
    ("owner", lambda p: p.owner_id), ("rights", lambda p: p.permissions), ("by", lambda p: p.created_by),
    ("since", lambda p: when(p.created_date)),
)
USER_PAGE = 1000
SEARCHABLE = ("WORKSPACE", "PROCESSOR", "SUBSCRIPTION", "ORGANIZATION", "WORKFLOW", "STYLE")


def resolve_user(client: "WasdiClient", value: str) -> str:
    """The user id ``value`` is, or the id of the one user whose public nickname it is."""
    if "@" in value:
        return value.strip().lower()
    # Nicknames are not searchable on the server: walk the user list a page at a time.
    found: list[UserListViewModel] = []
    while True:
        page = client.admin.list_users(offset=len(found), limit=USER_PAGE)
        found += page
        if len(page) < USER_PAGE:
            break
    user_id, _ = by_id_or_name(found, value, id_of=lambda u: u.user_id, name_of=lambda u: u.public_nick_name,
                               noun="user", casefold=True)
    return user_id


def resolve_resource(client: "WasdiClient", resource_type: str, value: str) -> str:
    """The id of the resource ``value`` identifies or names (names are looked up for searchable types)."""
    kind = resource_type.strip().upper()
    if kind not in SEARCHABLE or len(value.strip()) < 3:
        return value
    found = client.admin.find_resources(resource_type=kind, partial_name=value, limit=1000)
    resource_id, _ = by_id_or_name(found, value, id_of=lambda r: r.resource_id, name_of=lambda r: r.resource_name,
                                   noun=kind.lower(), describe=lambda r: f"{r.resource_id} of {r.user_id}")
    return resource_id


def confirm(question: str, yes: bool) -> None:
    if yes:
        return
    if not output.stdin_is_tty():
        raise CliError("refusing without confirmation: stdin is not a terminal; pass --yes", USAGE)
    if not typer.confirm(question, default=False, err=True):
        message("Cancelled")
        raise typer.Exit(1)


# -- users ------------------------------------------------------------------------------------------------
@users_app.command("list")
def users_list(
    filter_: Annotated[str | None, typer.Option("--filter", help="Only users whose id, name or surname "
                                                                 "contains this.")] = None,
    sort: Annotated[str, typer.Option("--sort", help="name, surname or userId.")] = "userId",
    desc: Annotated[bool, typer.Option("--desc", help="Descending order.")] = False,
    offset: OffsetOpt = None, limit: LimitOpt = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """A sorted page of users."""
    if sort not in ("name", "surname", "userId"):
        raise CliError(f"cannot sort by '{sort}': use name, surname or userId", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        rows = client.admin.list_users(partial_name=filter_, offset=offset, limit=limit, sortedby=sort,
                                       order="desc" if desc else "asc")
    out.items(rows, USER_COLUMNS, id_of=lambda u: u.user_id, empty="No users.")


@users_app.command("find")
def users_find(text: TextArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
               quiet: QuietOpt = False) -> None:
    """Users whose id, name or surname contains TEXT."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.admin.find_users(text)
    out.items(found, FOUND_USER_COLUMNS, id_of=lambda u: u.user_id, empty=f"No user matches '{text}'.")


@users_app.command("show")
def users_show(user: UserArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
               quiet: QuietOpt = False) -> None:
    """Everything about one user."""
    from wasdi_sdk import BadRequestError

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        try:
            details = client.admin.get_user(resolve_user(client, user))
        except BadRequestError as e:
            raise CliError(f"no user '{user}'; find them with 'wasdi admin users find TEXT'") from e
    out.item(details, USER_FIELDS, id_of=lambda u: u.user_id)


@users_app.command("summary")
def users_summary(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False) -> None:
    """How many users, by subscription type, and organizations."""
    out = Output(json_output=json)
    with connection.client(profile, base_url) as client:
        summary = client.admin.users_summary()
    out.item(summary, SUMMARY_FIELDS, id_of=lambda s: s.total_users)


@users_app.command("update")
def users_update(
    user: UserArg,
    name: Annotated[str | None, typer.Option("--name")] = None,
    surname: Annotated[str | None, typer.Option("--surname")] = None,
    role: Annotated[str | None, typer.Option("--role", help="ADMIN, DEVELOPER or USER.")] = None,
    nickname: Annotated[str | None, typer.Option("--nickname", help="Public nickname.")] = None,
    description: Annotated[str | None, typer.Option("--description")] = None,
    link: Annotated[str | None, typer.Option("--link")] = None,
    node: Annotated[str | None, typer.Option("--node", help="Preferred node code.")] = None,
    registered: Annotated[str | None, typer.Option("--registered", help="Registration date (ISO 8601).")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """Change a user's name, surname, role, nickname, description, link, node or registration date."""
    from wasdi_sdk.models import FullUserViewModel

    changes = {"name": name, "surname": surname, "role": role, "public_nick_name": nickname,
               "description": description, "link": link, "default_node": node, "registration_date": registered}
    if all(v is None for v in changes.values()):
        raise CliError("nothing to change: give --name, --surname, --role, --nickname, --description, --link, "
                       "--node or --registered", USAGE)
    with connection.client(profile, base_url) as client:
        user_id = resolve_user(client, user)
        client.admin.update_user(FullUserViewModel(user_id=user_id, **changes))
    message(f"Updated user {user_id}")


@users_app.command("delete")
def users_delete(user: UserArg, yes: YesOpt = False, profile: ProfileOpt = None,
                 base_url: BaseUrlOpt = None) -> None:
    """Delete a user and everything they own, for good."""
    with connection.client(profile, base_url) as client:
        user_id = resolve_user(client, user)
        confirm(f"Delete user {user_id} with all their workspaces, files, apps and sharings? This cannot be undone.",
                yes)
        client.admin.delete_user(user_id)
    message(f"Deleted user {user_id}")


# -- lookups ----------------------------------------------------------------------------------------------
@app.command("workspaces")
def workspaces(text: TextArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
               quiet: QuietOpt = False) -> None:
    """Workspaces of any user whose name contains TEXT."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.admin.find_workspaces(text)
    out.items(found, WORKSPACE_COLUMNS, id_of=lambda w: w.workspace_id, empty=f"No workspace matches '{text}'.")


@app.command("apps")
def apps(text: TextArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Apps (processors) of any user whose name contains TEXT."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.admin.find_processors(text)
    out.items(found, APP_COLUMNS, id_of=lambda p: p.processor_id, empty=f"No app matches '{text}'.")


@app.command("resources")
def resources(
    resource_type: Annotated[str, typer.Argument(metavar="TYPE", help="WORKSPACE, PROCESSOR, SUBSCRIPTION, "
                                                                      "ORGANIZATION, WORKFLOW or STYLE.")],
    text: TextArg, offset: OffsetOpt = None, limit: LimitOpt = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Resources of one type whose name contains TEXT, a page at a time."""
    if resource_type.strip().upper() not in SEARCHABLE:
        raise CliError(f"cannot search '{resource_type}': use one of {', '.join(SEARCHABLE)}", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        found = client.admin.find_resources(resource_type=resource_type.strip().upper(), partial_name=text,
                                            offset=offset, limit=limit)
    out.items(found, RESOURCE_COLUMNS, id_of=lambda r: r.resource_id, empty=f"No {resource_type} matches '{text}'.")


# -- permissions ------------------------------------------------------------------------------------------
@permissions_app.command("list")
def permissions_list(
    resource_type: Annotated[str | None, typer.Option("--type", help="Resource type.")] = None,
    resource: Annotated[str | None, typer.Option("--resource", help="Resource id, or its name (with --type).")] = None,
    user: Annotated[str | None, typer.Option("--user", help="User id, or their public nickname.")] = None,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False, quiet: QuietOpt = False,
) -> None:
    """Permissions matching every filter given (at least one)."""
    if resource_type is None and resource is None and user is None:
        raise CliError("give at least one of --type, --resource, --user", USAGE)
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        resource_id = resolve_resource(client, resource_type, resource) if resource and resource_type else resource
        user_id = resolve_user(client, user) if user else None
        found = client.admin.list_resource_permissions(resource_type=resource_type, resource_id=resource_id,
                                                       user_id=user_id)
    out.items(found, PERMISSION_COLUMNS, id_of=lambda p: f"{p.resource_type}|{p.resource_id}|{p.user_id}",
              empty="No permissions match.")


@permissions_app.command("add")
def permissions_add(
    resource_type: TypeArg, resource: ResourceArg, user: UserArg,
    write: Annotated[bool, typer.Option("--write", help="Write rights (default: read).")] = False,
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """Give USER read (or --write) rights on a resource, under the sharing rules of its type (admins; an owner
    shares with 'wasdi <group> share add', e.g. 'wasdi ws share add')."""
    with connection.client(profile, base_url) as client:
        resource_id = resolve_resource(client, resource_type, resource)
        user_id = resolve_user(client, user)
        client.admin.add_resource_permission(resource_type=resource_type.upper(), resource_id=resource_id,
                                             user_id=user_id, rights="write" if write else "read")
    shown = resource_id if resource == resource_id else f"'{resource}' ({resource_id})"
    message(f"Shared {resource_type.lower()} {shown} with {user_id} ({'write' if write else 'read'})")


@permissions_app.command("remove")
def permissions_remove(resource_type: TypeArg, resource: ResourceArg, user: UserArg, profile: ProfileOpt = None,
                       base_url: BaseUrlOpt = None) -> None:
    """Take away USER's permission on a resource (admins; an owner uses 'wasdi <group> share remove')."""
    with connection.client(profile, base_url) as client:
        resource_id = resolve_resource(client, resource_type, resource)
        user_id = resolve_user(client, user)
        client.admin.remove_resource_permission(resource_type=resource_type.upper(), resource_id=resource_id,
                                                user_id=user_id)
    message(f"Removed {user_id}'s permission on {resource_type.lower()} {resource_id}")


@permissions_app.command("types")
def permissions_types(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False) -> None:
    """The resource types permissions exist for."""
    with connection.client(profile, base_url) as client:
        names = client.admin.resource_types()
    if json:
        output.Output(json_output=True).value(jsonlib.dumps(names))
        return
    for name in names:
        Output().value(name)


# -- metrics ----------------------------------------------------------------------------------------------
def _size(value: Any) -> str:
    from wasdi_sdk.units import human_size

    return human_size(value) if isinstance(value, int | float) and not isinstance(value, bool) else cell(value)


def _decimals(value: Any, places: int = 2) -> str:
    """A measured number, rounded for reading (a load of 0.38037109375 is 0.38)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return f"{round(float(value), places):g}"
    return cell(value)


def _percent(value: Any) -> str:
    return f"{_decimals(value, 1)} %" if isinstance(value, int | float) and not isinstance(value, bool) else cell(value)


METRICS_FIELDS = (
    ("node", lambda m: m.node),
    ("time", lambda m: when((m.timestamp or {}).get("millis"))),
    ("cpus", lambda m: ((m.cpu or {}).get("count") or {}).get("logical")),
    ("load (1 min)", lambda m: _decimals((((m.cpu or {}).get("load") or {}).get("absolute") or {}).get("load1"))),
    ("memory used", lambda m: _percent((m.memory or {}).get("percentageUsed"))),
    ("memory available", lambda m: _size((m.memory or {}).get("absoluteAvailable"))),
    ("disk used", lambda m: _percent(((m.disks or [{}])[0]).get("percentageUsed"))),
    ("disk available", lambda m: _size(((m.disks or [{}])[0]).get("absoluteAvailable"))),
    ("licences", lambda m: ", ".join(str(x.get("name")) for x in m.licenses or [] if x.get("status")) or "none"),
)


@metrics_app.command("show")
def metrics_show(node: Annotated[str | None, typer.Option("--node", help="Node code (default: the newest "
                                                                         "entry of any node).")] = None,
                 profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False) -> None:
    """The latest metrics of a node."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        try:
            entry = client.admin.latest_metrics(node_code=node)
        except EmptyResultError as e:
            raise CliError(f"no metrics from {node or 'any node'} yet; nodes push them every minute") from e
    Output(json_output=json).item(entry, METRICS_FIELDS, id_of=lambda m: m.node)


@metrics_app.command("push")
def metrics_push(
    file: Annotated[Path, typer.Argument(metavar="FILE", exists=True, dir_okay=False, readable=True,
                                         help="A MetricsEntry as JSON (- is not accepted).")],
    profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """Store a node's metrics entry from a JSON file."""
    from wasdi_sdk.models import MetricsEntry

    try:
        entry = MetricsEntry.model_validate(jsonlib.loads(file.read_text()))
    except ValueError as e:
        raise CliError(f"{file} is not a metrics entry in JSON: {str(e).splitlines()[0]}", USAGE) from e
    with connection.client(profile, base_url) as client:
        client.admin.push_metrics(entry)
    message(f"Stored the metrics of node {entry.node}")


# -- the process queue ----------------------------------------------------------------------------------------
@app.command("clean-queue")
def clean_queue(
    stale: Annotated[bool, typer.Option("--stale", help="Close stale RUNNING/WAITING/READY processes (worker gone "
                                                        "or unchanged too long) instead of queued ones.")] = False,
    yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
) -> None:
    """Move every queued (CREATED) process of the node to ERROR, or with --stale the stale ones."""
    confirm("Close every stale process?" if stale else "Move every queued process to ERROR?", yes)
    with connection.client(profile, base_url) as client:
        closed = client.admin.clean_old_processes() if stale else client.admin.clean_processes_queue()
    what = "stale" if stale else "queued"
    if closed is None:  # a server that does not say how many
        message(f"Closed the {what} processes")
    else:
        message(f"Closed {closed} {what} process{'' if closed == 1 else 'es'}")
