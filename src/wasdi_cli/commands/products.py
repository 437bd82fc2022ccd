"""``wasdi products ...``: the products of a workspace (``client.products``, ``client.files``)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, YesOpt
from ..output import Output, message, progress
from .workspaces import resolve_workspace

if TYPE_CHECKING:
    pass

app = typer.Typer(name="products", help="Products of a workspace: list, show, upload, download, delete.",
                  no_args_is_help=True)

WorkspaceOpt = Annotated[str, typer.Option("--ws", metavar="ID_OR_NAME", help="Workspace id, or its exact name.")]
ProductArg = Annotated[str, typer.Argument(metavar="FILE", help="File name of the product in the workspace.")]


def _bands(product: Any) -> str:
    group = product.bands_groups
    bands = (group.bands if group else None) or []
    return ", ".join(str(b.name) for b in bands)


def _published(product: Any) -> str:
    group = product.bands_groups
    bands = (group.bands if group else None) or []
    return ", ".join(f"{b.name}: {b.geoserver_url}" for b in bands if b.published)


LIST_COLUMNS = (
    ("file", lambda p: p.file_name),
    ("name", lambda p: p.product_friendly_name),
    ("bands", _bands),
    ("style", lambda p: p.style),
    ("bbox", lambda p: p.bbox),
)

SHOW_FIELDS = (
    ("file", lambda p: p.file_name),
    ("name", lambda p: p.name),
    ("friendly name", lambda p: p.product_friendly_name),
    ("bands", _bands),
    ("bbox", lambda p: p.bbox),
    ("style", lambda p: p.style),
    ("description", lambda p: p.description),
    ("published", _published),
    ("metadata read", lambda p: p.metadata_file_created),
)



def wait_bar(description: str) -> Any:
    """A 0-100 bar fed by process states (``on_update`` of the SDK's waits)."""
    return progress(description, total=100)


def follow(advance: Any) -> Any:
    done = [0]

    def update(state: object) -> None:
        perc = int(getattr(state, "progress_perc", 0) or 0)
        advance(max(0, perc - done[0]))
        done[0] = max(done[0], perc)

    return update


@app.command("list")
def list_(workspace: WorkspaceOpt, profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Products of a workspace (file, friendly name, bands, style, footprint)."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        products = client.products.list(workspace_id)
    out.items(products, LIST_COLUMNS, id_of=lambda p: p.file_name, empty="No products.")


@app.command()
def show(product: ProductArg, workspace: WorkspaceOpt, profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
         json: JsonOpt = False, quiet: QuietOpt = False) -> None:
    """One product: bands, footprint, style, published layers."""
    from wasdi_sdk import EmptyResultError

    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        try:
            details = client.products.get(product, workspace_id)
        except EmptyResultError as e:
            raise CliError(f"no product '{product}' in the workspace (or it is not accessible)") from e
    out.item(details, SHOW_FIELDS, id_of=lambda p: p.file_name)


@app.command()
def upload(
    path: Annotated[Path, typer.Argument(metavar="PATH", exists=True, dir_okay=False, readable=True,
                                         help="The local file to upload (streamed).")],
    workspace: WorkspaceOpt,
    name: Annotated[str | None, typer.Option("--name", help="File name in the workspace (default: PATH's).")] = None,
    style: Annotated[str | None, typer.Option("--style", help="Default style of the product.")] = None,
    platform: Annotated[str | None, typer.Option("--platform", help="Mission of the product, e.g. Sentinel-1.")]
    = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the product is ingested.")] = True,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting after this many "
                                                                           "seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Upload a file into a workspace and make it a product; prints its file name on stdout."""
    from wasdi_sdk import ProcessFailedError, ProcessTimeoutError

    file_name = name or path.name
    size = path.stat().st_size
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        if not wait:
            with progress(f"Uploading {file_name}", total=size) as advance:
                client.products.upload(workspace_id, path, name=file_name, style=style, platform=platform,
                                       on_progress=advance)
            Output().value(file_name)
            message(f"Uploaded {file_name}; the server is ingesting it")
            return
        with progress(f"Uploading {file_name}", total=size) as advance:
            client.products.upload_without_ingest(workspace_id, path, name=file_name, on_progress=advance)
        started = client.files.ingest(file_name, workspace_id, style=style, platform=platform)
        try:
            with wait_bar(f"Ingesting {file_name}") as advance:
                client.wait_for_process(started.string_value or "", timeout=timeout, poll_interval=0.5,
                                        max_interval=5.0, on_update=follow(advance))
        except (ProcessFailedError, ProcessTimeoutError) as e:
            raise CliError(f"the upload of {file_name} was not ingested: {e}") from e
    Output().value(file_name)
    message(f"Uploaded and ingested {file_name}")


@app.command()
def download(
    product: ProductArg,
    workspace: WorkspaceOpt,
    to: Annotated[Path | None, typer.Option("--output", "-o", metavar="PATH",
                                            help="File or existing folder to write to (default: the current "
                                                 "folder).")] = None,
    force: Annotated[bool, typer.Option("--force", "-f", help="Replace a file that exists already.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Download a workspace file (streamed; written atomically); prints the path written on stdout."""
    target = to if to is not None else Path.cwd()
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        size: int | None = None
        try:
            size = int(client.files.properties(product, workspace_id).get("size") or 0) or None
        except Exception:  # the size only feeds the bar
            size = None
        try:
            with progress(f"Downloading {product}", total=size) as advance:
                written = client.files.download(product, workspace_id, target, on_progress=advance, overwrite=force)
        except FileExistsError as e:
            raise CliError(f"{e}: pass --force to replace it, or --output to write elsewhere") from e
    Output().value(str(written))
    message(f"Downloaded {product}")


@app.command()
def delete(
    products: Annotated[list[str], typer.Argument(metavar="FILE...", help="File names of the products.")],
    workspace: WorkspaceOpt,
    keep_files: Annotated[bool, typer.Option("--keep-files", help="Keep the files, only forget the products.")]
    = False,
    keep_layers: Annotated[bool, typer.Option("--keep-layers", help="Keep their published map layers.")] = False,
    yes: YesOpt = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Delete products from a workspace (with their files and map layers unless kept)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        if not yes:
            what = ", ".join(products)
            if not typer.confirm(f"Delete {what}{'' if keep_files else ' and the files'}?", default=False, err=True):
                message("Cancelled")
                raise typer.Exit(1)
        for product in products:
            client.products.delete(product, workspace_id, deletefile=not keep_files, deletelayer=not keep_layers)
            message(f"Deleted {product}")
