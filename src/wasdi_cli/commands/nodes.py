"""``wasdi nodes ...``: compute nodes and their sharing (``client.nodes``).  Most commands are for admins."""

import enum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import connection
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, cell, message

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient

app = typer.Typer(name="nodes", help="Compute nodes: list, show, create, update and share (admins).",
                  no_args_is_help=True)
share_app = typer.Typer(name="share", help="Users a node is shared with (admins).", no_args_is_help=True)
app.add_typer(share_app)

NodeArg = Annotated[str, typer.Argument(metavar="NODE", help="Node code.")]

LIST_COLUMNS = (
    ("code", lambda n: n.node_code),
    ("cloud", lambda n: n.cloud_provider),
    ("api url", lambda n: n.api_url),
)

SHOW_FIELDS = (
    ("code", lambda n: n.node_code),
    ("cloud", lambda n: n.cloud_provider),
    ("api url", lambda n: n.api_url),
    ("description", lambda n: n.node_description),
    ("geoserver", lambda n: n.node_geoserver_address),
    ("active", lambda n: n.active),
    ("public", lambda n: n.shared),
)

SHARE_COLUMNS = (
    ("user", lambda s: s.user_id),
    ("node", lambda s: s.node_code),
)

ApiUrlOpt = Annotated[str | None, typer.Option("--api-url", help="Base URL of the node's API.")]
CloudOpt = Annotated[str | None, typer.Option("--cloud-provider", help="Cloud the node runs on.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description of the node.")]
GeoserverOpt = Annotated[str | None, typer.Option("--geoserver-address", help="Address of the node's map server.")]
ActiveOpt = Annotated[bool | None, typer.Option("--active/--inactive",
                                                help="Whether users may use the node (inactive nodes are hidden).")]
SharedOpt = Annotated[bool | None, typer.Option("--shared/--private",
                                                help="Public to every user, or only to users it is shared with.")]


class Rights(enum.StrEnum):
    read = "read"
    write = "write"


def _client(profile: str | None, base_url: str | None) -> "WasdiClient":
    return connection.connect(connection.resolve(profile, base_url))


def _changes(**fields: Any) -> dict[str, Any]:
    return {name: value for name, value in fields.items() if value is not None}


@app.command("list")
def list_(
    all_: Annotated[bool, typer.Option("--all", help="Include inactive nodes.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Nodes you may run work on (admins: all of them)."""
    from wasdi_sdk import EmptyResultError

    out = Output(json_output=json, quiet=quiet)
    with _client(profile, base_url) as client:
        try:
            nodes = client.nodes.list(all=all_)
        except EmptyResultError as e:
            raise CliError("the server listed no nodes (is the session still valid? try `wasdi login`)") from e
    out.items(nodes, LIST_COLUMNS, id_of=lambda n: n.node_code, empty="No nodes.")


@app.command()
def show(node: NodeArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Everything about one node (admins)."""
    out = Output(json_output=json, quiet=quiet)
    with _client(profile, base_url) as client:
        details = client.nodes.get(node)
    out.item(details, SHOW_FIELDS, id_of=lambda n: n.node_code)


@app.command()
def create(
    node: NodeArg,
    api_url: ApiUrlOpt = None,
    cloud_provider: CloudOpt = None,
    description: DescriptionOpt = None,
    geoserver_address: GeoserverOpt = None,
    active: ActiveOpt = None,
    shared: SharedOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Register a node (admins).  New nodes are active and private unless told otherwise."""
    from wasdi_sdk.models import NodeFullViewModel

    body = NodeFullViewModel(node_code=node, **_changes(
        api_url=api_url, cloud_provider=cloud_provider, node_description=description,
        node_geoserver_address=geoserver_address, active=active, shared=shared))
    with _client(profile, base_url) as client:
        client.nodes.create(body)
    message(f"Created node {node}")


@app.command()
def update(
    node: NodeArg,
    api_url: ApiUrlOpt = None,
    cloud_provider: CloudOpt = None,
    description: DescriptionOpt = None,
    geoserver_address: GeoserverOpt = None,
    active: ActiveOpt = None,
    shared: SharedOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change a node (admins); options left out keep their value."""
    changes = _changes(api_url=api_url, cloud_provider=cloud_provider, node_description=description,
                       node_geoserver_address=geoserver_address, active=active, shared=shared)
    if not changes:
        raise CliError("nothing to change: give at least one option (see --help)", USAGE)
    with _client(profile, base_url) as client:
        current = client.nodes.get(node)
        for name, value in changes.items():
            setattr(current, name, value)
        current.node_code = current.node_code or node
        client.nodes.update(current)
    message(f"Updated node {node}: " + ", ".join(f"{name.replace('_', ' ')}={cell(v)}" for name, v in changes.items()))


@share_app.command("add")
def share_add(
    node: NodeArg,
    user: Annotated[str, typer.Argument(metavar="USER", help="User id (e-mail) to share with.")],
    rights: Annotated[Rights, typer.Option("--rights", help="Rights of the user.")] = Rights.read,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Share a node with a user (admins)."""
    with _client(profile, base_url) as client:
        result = client.nodes.share_add(node=node, user_id=user, rights=rights.value)
    if (result.string_value or "").lower().startswith("already"):
        message(f"Node {node} is already shared with {user}")
    else:
        message(f"Shared node {node} with {user} ({rights.value})")


@share_app.command("list")
def share_list(node: NodeArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
               quiet: QuietOpt = False) -> None:
    """Users a node is shared with (non-admins see only themselves)."""
    out = Output(json_output=json, quiet=quiet)
    with _client(profile, base_url) as client:
        sharings = client.nodes.share_list(node)
    out.items(sharings, SHARE_COLUMNS, id_of=lambda s: s.user_id, empty=f"Node {cell(node)} is not shared.")


@share_app.command("remove")
def share_remove(
    node: NodeArg,
    user: Annotated[str, typer.Argument(metavar="USER", help="User id (e-mail) to stop sharing with.")],
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Stop sharing a node with a user (admins, or that user)."""
    with _client(profile, base_url) as client:
        client.nodes.share_delete(node=node, user_id=user)
    message(f"Stopped sharing node {node} with {user}")
