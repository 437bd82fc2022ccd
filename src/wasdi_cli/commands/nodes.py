"""``wasdi nodes ...``: compute nodes and their sharing (``client.nodes``).  Most commands are for admins."""

from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import listing_of
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, cell, message
from ..sharing import add_share_commands

if TYPE_CHECKING:
    pass

app = typer.Typer(name="nodes", help="Compute nodes: list, show, create, update, delete and share (admins).",
                  no_args_is_help=True)

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


ApiUrlOpt = Annotated[str | None, typer.Option("--api-url", help="Base URL of the node's API.")]
CloudOpt = Annotated[str | None, typer.Option("--cloud-provider", help="Cloud the node runs on.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description of the node.")]
GeoserverOpt = Annotated[str | None, typer.Option("--geoserver-address", help="Address of the node's map server.")]
ActiveOpt = Annotated[bool | None, typer.Option("--active/--inactive",
                                                help="Whether users may use the node (inactive nodes are hidden).")]
SharedOpt = Annotated[bool | None, typer.Option("--shared/--private",
                                                help="Public to every user, or only to users it is shared with.")]





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
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        nodes = listing_of(lambda: client.nodes.list(all=all_), "nodes")
    out.items(nodes, LIST_COLUMNS, id_of=lambda n: n.node_code, empty="No nodes.")


@app.command()
def show(node: NodeArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
         quiet: QuietOpt = False) -> None:
    """Everything about one node (admins)."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
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
    with connection.client(profile, base_url) as client:
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
    with connection.client(profile, base_url) as client:
        current = client.nodes.get(node)
        for name, value in changes.items():
            setattr(current, name, value)
        current.node_code = current.node_code or node
        client.nodes.update(current)
    message(f"Updated node {node}: " + ", ".join(f"{name.replace('_', ' ')}={cell(v)}" for name, v in changes.items()))


@app.command()
def delete(node: NodeArg, yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Remove a registered node and its sharings (admins)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    if not yes and not typer.confirm(f"Delete node {node}?", default=False, err=True):
        message("Cancelled")
        raise typer.Exit(1)
    with connection.client(profile, base_url) as client:
        client.nodes.delete(node)
    message(f"Deleted node {node}")


add_share_commands(app, noun="node", group="nodes", id_param="node",
                   resource_arg=NodeArg, columns=(("user", lambda s: s.user_id), ("node", lambda s: s.node_code)))
