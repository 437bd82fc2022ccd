"""``wasdi ws ...``: workspaces and their sharing (``client.workspaces``)."""

from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..errors import AUTH, CONNECTION, USAGE, CliError
from ..lookup import by_id_or_name, named
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, message, when
from ..profiles import normalize_url
from ..sharing import add_share_commands

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import WorkspaceListInfoViewModel

app = typer.Typer(name="ws", help="Workspaces: list, create, show, name, rename, set, delete, share and watch.",
                  no_args_is_help=True)

WorkspaceArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="Workspace id, or its exact name.")]

LIST_COLUMNS = (
    ("id", lambda w: w.workspace_id),
    ("name", lambda w: w.name),
    ("owner", lambda w: w.owner_user_id),
    ("node", lambda w: w.node_code),
    ("size", lambda w: w.storage_size),
    ("shared with", lambda w: w.shared_users),
    ("read-only", lambda w: w.read_only),
)

SHOW_FIELDS = (
    ("id", lambda w: w.workspace_id),
    ("name", lambda w: w.name),
    ("owner", lambda w: w.user_id),
    ("node", lambda w: w.node_code),
    ("api url", lambda w: w.api_url),
    ("created", lambda w: when(w.creation_date)),
    ("last edit", lambda w: when(w.last_edit_date)),
    ("size", lambda w: w.storage_size),
    ("processes", lambda w: w.processes_count),
    ("shared with", lambda w: w.shared_users),
    ("public", lambda w: w.is_public),
    ("read-only", lambda w: w.read_only),
)






def resolve_workspace(client: "WasdiClient", id_or_name: str | None) -> tuple[str, "WorkspaceListInfoViewModel | None"]:
    """The workspace ``id_or_name`` identifies or names among yours; anything else is passed on as an id
    (a public workspace is not in the user's list).  ``None`` (no ``--ws``): the profile's default workspace
    (``wasdi ws use``), else a usage error saying how to give one."""
    if id_or_name is None:
        id_or_name = default_workspace()
        if id_or_name is None:
            target = connection.current_target()
            profile = f" of profile '{target.profile_name}'" if target else ""
            raise CliError(f"no workspace given: add --ws ID_OR_NAME, or set the default{profile} with "
                           "'wasdi ws use NAME'", USAGE)
    return by_id_or_name(client.workspaces.list(), id_or_name, id_of=lambda w: w.workspace_id,
                         name_of=lambda w: w.name, noun="workspace",
                         fetch=client.workspaces.get, listing="ws list")


def optional_workspace(client: "WasdiClient", id_or_name: str | None) -> str | None:
    """The id of the workspace ``--ws`` gives, else the profile's default; ``None`` when neither is set (for the
    commands where a workspace is optional)."""
    if id_or_name is None and default_workspace() is None:
        return None
    return resolve_workspace(client, id_or_name)[0]


def default_workspace() -> str | None:
    """The default workspace of the command's profile, when the command speaks to that profile's server."""
    target = connection.current_target()
    if target is None or not target.profile.workspace or not target.profile.base_url:
        return None
    if normalize_url(target.profile.base_url) != target.base_url:
        return None  # --base-url points elsewhere: the profile's workspace is not one of that server
    return target.profile.workspace


@app.command()
def use(
    workspace: Annotated[str | None, typer.Argument(metavar="ID_OR_NAME", help="Workspace id, or its exact name.",
                                                    show_default=False)] = None,
    clear: Annotated[bool, typer.Option("--clear", help="Forget the default workspace.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Set the workspace that commands use when --ws is not given, for this profile (like 'gh repo
    set-default'); without ID_OR_NAME, show it."""
    target = connection.resolve(profile, base_url)
    where = f"profile '{target.profile_name}' ({target.base_url})"
    if clear or workspace is None:
        current = target.profile.workspace
        if clear:
            target.profile.workspace = None
            target.profiles.put(target.profile)
            target.profiles.save()
            message(f"Forgot the default workspace of {where}" if current else f"No default workspace in {where}")
        elif current:
            Output().value(current)
        else:
            message(f"No default workspace in {where}: set one with 'wasdi ws use NAME'")
        return
    if target.profile.base_url and normalize_url(target.profile.base_url) != target.base_url:
        raise CliError(f"profile '{target.profile_name}' belongs to {target.profile.base_url}, not "
                       f"{target.base_url}: its default workspace must be one of that server", USAGE)
    with connection.connect(target) as client:
        workspace_id, entry = resolve_workspace(client, workspace)
    label = named(workspace_id, entry)
    target.profile.base_url = target.profile.base_url or target.base_url
    target.profile.workspace = workspace_id
    target.profiles.put(target.profile)
    target.profiles.save()
    message(f"Commands of {where} now use workspace {label} when --ws is not given")


@app.command("list")
def list_(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Workspaces you own or that are shared with you."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        workspaces = connection.confirm_session_if_empty(client, client.workspaces.list())
    out.items(workspaces, LIST_COLUMNS, id_of=lambda w: w.workspace_id, empty="No workspaces.")


def _name_given(client: "WasdiClient", workspace_id: str) -> str | None:
    """The name the server gave (a taken name gets a '(n)' suffix), when it says."""
    from wasdi_sdk import WasdiError

    try:
        return client.workspaces.get(workspace_id).name
    except WasdiError:
        return None


@app.command()
def create(
    name: Annotated[str, typer.Argument(metavar="NAME",
                                        help="Name of the workspace (a taken name gets a '(n)' suffix).")],
    node: Annotated[str | None, typer.Option("--node", help="Node code of the computing node.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create a workspace; prints its id on stdout."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        try:
            result = client.workspaces.create(name=name, node=node)
        except EmptyResultError as e:
            raise CliError(f"the server refused to create the workspace '{name}' (it does not say why: "
                           "an invalid name or node, or no active subscription)") from e
        if not result.string_value:
            raise CliError(f"the server did not return the id of the workspace '{name}'")
        given = _name_given(client, result.string_value) or name
    Output().value(result.string_value)
    message(f"Created workspace '{given}'")


@app.command()
def show(workspace: WorkspaceArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Details of one workspace."""
    from wasdi_sdk import EmptyResultError

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        try:
            details = client.workspaces.get(workspace_id)
        except EmptyResultError as e:
            raise CliError(f"no workspace '{workspace}' (or it is not accessible)") from e
    out.item(details, SHOW_FIELDS, id_of=lambda w: w.workspace_id)


@app.command()
def rename(
    workspace: WorkspaceArg,
    new_name: Annotated[str, typer.Argument(metavar="NEW_NAME",
                                            help="The new name (a taken name gets a '(n)' suffix).")],
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Give a workspace a new name."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        workspace_id, entry = resolve_workspace(client, workspace)
        try:
            updated = client.workspaces.rename(workspace_id, new_name)
        except EmptyResultError as e:
            raise CliError(f"cannot rename the workspace '{workspace}' (not found, or no write access)") from e
    message(f"Renamed workspace {named(workspace_id, entry)} to '{updated.name or new_name}'")


@app.command("name")
def name_(
    workspace_id: Annotated[str, typer.Argument(metavar="ID", help="Workspace id (a process's or a log's, say).")],
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Print the name of the workspace with this id (also one shared with you, or public)."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        try:
            found = client.workspaces.name_by_id(workspace_id)
        except EmptyResultError as e:
            raise CliError(f"no workspace has the id '{workspace_id}' (or it is not accessible)") from e
    if not found:
        raise CliError(f"no workspace has the id '{workspace_id}' (or it is not accessible)")
    Output().value(found)


@app.command("set")
def set_(
    workspace: WorkspaceArg,
    public: Annotated[bool | None, typer.Option("--public/--private", help="Visible to every user (read-only), "
                                                                           "or only to you and those you share "
                                                                           "it with.")] = None,
    new_name: Annotated[str | None, typer.Option("--name", help="A new name (a taken name gets a '(n)' suffix).")]
    = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Make a workspace public or private, and/or rename it."""
    from wasdi_sdk import EmptyResultError

    if public is None and new_name is None:
        raise CliError("nothing to change: give --public/--private or --name", USAGE)
    with connection.client(profile, base_url) as client:
        workspace_id, entry = resolve_workspace(client, workspace)
        try:
            current = client.workspaces.get(workspace_id)
            if public is not None:
                current.is_public = public
            if new_name is not None:
                current.name = new_name
            updated = client.workspaces.update(current)
        except EmptyResultError as e:
            raise CliError(f"cannot change the workspace '{workspace}' (not found, or no write access)") from e
    changes = [f"named '{updated.name or new_name}'"] if new_name is not None else []
    if public is not None:
        changes.append("public" if updated.is_public else "private")
    message(f"Workspace {named(workspace_id, entry)} is now {' and '.join(changes)}")


@app.command()
def delete(
    workspace: WorkspaceArg,
    keep_files: Annotated[bool, typer.Option("--keep-files", help="Keep the workspace's files on the server.")] = False,
    yes: YesOpt = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Delete a workspace you own (or leave one shared with you)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    target = connection.resolve(profile, base_url)
    with connection.connect(target) as client:
        workspace_id, entry = resolve_workspace(client, workspace)
        label = named(workspace_id, entry)
        owner = getattr(entry, "owner_user_id", None)
        leaving = bool(owner and target.profile.user and target.token_source == "profile"
                       and owner != target.profile.user)
        if not yes:
            question = (f"Leave workspace {label}, shared with you by {owner}?" if leaving else
                        f"Delete workspace {label}{'' if keep_files else ' and its files'}?")
            if not typer.confirm(question, default=False, err=True):
                message("Cancelled")
                raise typer.Exit(1)
        client.workspaces.delete(workspace_id, deletefile=not keep_files)
    message(f"Left workspace {label}" if leaving else f"Deleted workspace {label}")


@app.command()
def watch(
    workspace: WorkspaceArg,
    code: Annotated[list[str] | None, typer.Option("--code", metavar="CODE", help="Only messages with this code "
                                                   "(e.g. UPDATEPROCESSES); repeat for more.")] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Stop after this many seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
) -> None:
    """Print the workspace's messages as they happen, one line each, until interrupted (Ctrl-C) or --timeout.

    What WASDI's web client hears: process updates (id, status, progress), products added, bands published,
    deletions, app notices.  With --json each line is the message's JSON object, as the server sent it.
    """
    import json as json_lib
    import time

    from wasdi_sdk import PermissionDeniedError
    from wasdi_sdk.events.stream import EventsUnavailableError

    with connection.client(profile, base_url) as client:
        workspace_id, entry = resolve_workspace(client, workspace)
        label = named(workspace_id, entry)
        try:
            stream = client.events.listen(workspace_id, codes=[c.upper() for c in code or []] or None,
                                          timeout=timeout)
        except PermissionDeniedError as e:
            raise CliError(f"you may not read workspace {label}: ask its owner to share it with you", AUTH) from e
        except EventsUnavailableError as e:
            raise CliError(f"cannot listen to {label}: {e}", CONNECTION) from e
        message(f"Watching workspace {label}; Ctrl-C stops")
        with stream:
            for event in stream:
                if json:
                    typer.echo(json_lib.dumps(event.to_wire(keep_none=True), ensure_ascii=False))
                else:
                    result = event.message_result or ""
                    typer.echo(f"{time.strftime('%H:%M:%S')}  {event.message_code or '?':<17} {result:<2}  "
                               f"{event.text()}")


add_share_commands(app, noun="workspace", group="workspaces", id_param="workspace",
                   resource_arg=WorkspaceArg, resolve=resolve_workspace, label=named)
