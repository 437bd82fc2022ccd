"""``wasdi workflows ...``: SNAP graph workflows, their runs and their sharing (``client.workflows``)."""

import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name, listing_of, named
from ..options import BaseUrlOpt, DownloadOutOpt, JsonOpt, ProfileOpt, PublicOpt, QuietOpt, WorkspaceOpt, YesOpt
from ..output import Output, cell, message, progress, save_download
from ..sharing import add_share_commands
from ..waiting import wait_for
from .workspaces import resolve_workspace

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import SnapWorkflowViewModel

app = typer.Typer(name="workflows", help="SNAP graph workflows: list, show, upload, update, run, download, delete "
                                         "and share.", no_args_is_help=True)

WorkflowArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="Workflow id, or its name.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description of the workflow.")]


def _nodes(names: list[str] | None) -> str:
    return ", ".join(names or [])


LIST_COLUMNS = (
    ("id", lambda w: w.workflow_id),
    ("name", lambda w: w.name),
    ("owner", lambda w: w.user_id),
    ("inputs", lambda w: _nodes(w.input_node_names)),
    ("outputs", lambda w: _nodes(w.output_node_names)),
    ("public", lambda w: w.is_public),
    ("shared with me", lambda w: w.shared_with_me),
    ("read-only", lambda w: w.read_only),
)

SHOW_FIELDS = (
    ("id", lambda w: w.workflow_id),
    ("name", lambda w: w.name),
    ("description", lambda w: w.description),
    ("owner", lambda w: w.user_id),
    ("input nodes", lambda w: _nodes(w.input_node_names)),
    ("output nodes", lambda w: _nodes(w.output_node_names)),
    ("public", lambda w: w.is_public),
    ("shared with me", lambda w: w.shared_with_me),
    ("read-only", lambda w: w.read_only),
    ("node", lambda w: w.node_url),
)


def resolve_workflow(client: "WasdiClient", id_or_name: str) -> tuple[str, "SnapWorkflowViewModel | None"]:
    """The workflow ``id_or_name`` identifies or names among the caller's list; else the server's byname."""
    from wasdi_sdk import BadRequestError

    # (not unpacked in the same statement: mypy then solves the list entries' type as optional)
    found = by_id_or_name(client.workflows.list(), id_or_name, id_of=lambda w: w.workflow_id,
                          name_of=lambda w: w.name, noun="workflow", casefold=True,
                          describe=lambda w: f"{w.workflow_id} of {w.user_id}")
    workflow_id, entry = found
    if entry is None:
        try:
            entry = client.workflows.get_by_name(id_or_name)
        except BadRequestError:
            return workflow_id, None
        workflow_id = entry.workflow_id or workflow_id
    return workflow_id, entry


def _known(entry: "SnapWorkflowViewModel | None", value: str) -> "SnapWorkflowViewModel":
    if entry is None:
        raise CliError(f"no workflow '{value}' among yours, the public ones and those shared with you "
                       "(see 'wasdi workflows list')")
    return entry


@app.command("list")
def list_(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Workflows you own, public ones, and those shared with you."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        flows = listing_of(client.workflows.list, "workflows")
    out.items(flows, LIST_COLUMNS, id_of=lambda w: w.workflow_id, empty="No workflows.")


@app.command()
def show(
    workflow: WorkflowArg,
    xml: Annotated[bool, typer.Option("--xml", help="Print the workflow's graph XML instead of its details.")]
    = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Details of one workflow (its Read and Write nodes), or its graph with --xml."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        workflow_id, entry = resolve_workflow(client, workflow)
        if xml:
            out.value(client.workflows.get_xml(workflow_id).rstrip("\n"))
            return
    out.item(_known(entry, workflow), SHOW_FIELDS, id_of=lambda w: w.workflow_id)


@app.command()
def upload(
    file: Annotated[Path, typer.Argument(metavar="FILE", exists=True, dir_okay=False, readable=True,
                                         help="The SNAP graph (XML) file.")],
    name: Annotated[str | None, typer.Option("--name", help="Workflow name (default: the file's name without "
                                                           "extension).")] = None,
    description: DescriptionOpt = None,
    public: PublicOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create a workflow from a SNAP graph; prints its id on stdout."""
    flow_name = name or file.stem
    with (connection.client(profile, base_url) as client,
          progress(f"Uploading {file.name}", file.stat().st_size) as advance):
        client.workflows.upload(file, name=flow_name, description=description, public=bool(public),
                                on_progress=advance)
        created = client.workflows.get_by_name(flow_name)
    Output().value(str(created.workflow_id))
    message(f"Created workflow '{created.name}': reads {_nodes(created.input_node_names) or 'nothing'}, "
            f"writes {_nodes(created.output_node_names) or 'nothing'}")


@app.command()
def update(
    workflow: WorkflowArg,
    file: Annotated[str | None, typer.Option("--file", metavar="PATH", help="A new SNAP graph file, or - to read "
                                                                            "its XML from stdin.")] = None,
    name: Annotated[str | None, typer.Option("--name", help="New name.")] = None,
    description: DescriptionOpt = None,
    public: PublicOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Replace a workflow's graph and/or change its name, description or visibility."""
    from wasdi_sdk import NotModifiedError

    if file is None and name is None and description is None and public is None:
        raise CliError("nothing to change: give --file, --name, --description or --public/--private", USAGE)
    if file not in (None, "-") and not Path(str(file)).is_file():
        raise CliError(f"no file {file}", USAGE)
    with connection.client(profile, base_url) as client:
        workflow_id, entry = resolve_workflow(client, workflow)
        label = named(workflow_id, entry)
        if file is not None:
            try:
                if file == "-":
                    client.workflows.update_xml(workflow_id=workflow_id, xml=sys.stdin.read())
                else:
                    client.workflows.update_file(Path(file), workflowid=workflow_id)
                message(f"Replaced the graph of workflow {label}")
            except NotModifiedError:
                message(f"The graph of workflow {label} is unchanged")
        if name is not None or description is not None or public is not None:
            client.workflows.update_params(workflow_id, name=name, description=description, public=public)
            changes = {"name": name, "description": description, "public": public}
            message(f"Updated workflow {label}: " + ", ".join(f"{k}={cell(v)}" for k, v in changes.items()
                                                              if v is not None))


def _params(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CliError(f"--param takes KEY=VALUE, not '{pair}'", USAGE)
        out[key] = value
    return out


@app.command()
def run(
    workflow: WorkflowArg,
    inputs: Annotated[list[str], typer.Option("--input", "-i", metavar="FILE",
                                              help="Input file of the workspace, once per Read node, in order.")],
    workspace: WorkspaceOpt = None,
    outputs: Annotated[list[str] | None, typer.Option("--output", "-o", metavar="FILE",
                                                      help="Output file name, once per Write node (default: "
                                                           "<input>_<workflow>).")] = None,
    params: Annotated[list[str] | None, typer.Option("--param", metavar="KEY=VALUE",
                                                     help="Text replaced in the graph (templateParams).")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the run ends.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting after this many "
                                                                           "seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Run a workflow on files of a workspace; prints the GRAPH process id (with --wait, once it is DONE)."""

    template = _params(params or [])
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        workflow_id, entry = resolve_workflow(client, workflow)
        started = client.workflows.run(workspace=workspace_id, workflow_id=workflow_id, input_file_names=inputs,
                                       output_file_names=outputs or None, template_params=template or None)
        process_id = started.string_value or ""
        if not wait:
            Output().value(process_id)
            message(f"Workflow {named(workflow_id, entry)} started: process {process_id}")
            return
        wait_for(client, process_id, f"Running {entry.name if entry else workflow_id}", timeout,
                 f"the workflow run failed ('wasdi processes logs {process_id}' shows its log)")
    Output().value(process_id)
    message(f"Workflow {named(workflow_id, entry)} done")


@app.command()
def download(
    workflow: WorkflowArg,
    out: DownloadOutOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Download a workflow's graph file."""
    from wasdi_sdk import NoContentError

    with connection.client(profile, base_url) as client:
        workflow_id, _ = resolve_workflow(client, workflow)
        try:
            save_download(out, workflow, partial(client.workflows.download, workflow_id))
        except NoContentError as e:
            raise CliError(f"no workflow '{workflow}' (or its file is missing on the server)") from e


@app.command()
def delete(workflow: WorkflowArg, yes: YesOpt = False, profile: ProfileOpt = None,
           base_url: BaseUrlOpt = None) -> None:
    """Delete a workflow you own (or stop having one shared with you)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        workflow_id, entry = resolve_workflow(client, workflow)
        _known(entry, workflow)
        label = named(workflow_id, entry)
        leaving = bool(entry is not None and entry.shared_with_me)
        if not yes:
            question = f"Leave workflow {label}, shared with you?" if leaving else f"Delete workflow {label}?"
            if not typer.confirm(question, default=False, err=True):
                message("Cancelled")
                raise typer.Exit(1)
        client.workflows.delete(workflow_id)
    message(f"Left workflow {label}" if leaving else f"Deleted workflow {label}")


add_share_commands(app, noun="workflow", group="workflows", id_param="workflow_id",
                   resource_arg=WorkflowArg, resolve=resolve_workflow, label=named)
