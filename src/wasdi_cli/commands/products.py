"""``wasdi products ...``: the products of a workspace (``client.products``, ``client.files``)."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, WorkspaceOpt, YesOpt
from ..output import Output, message, progress
from ..waiting import wait_for
from .workspaces import resolve_workspace

if TYPE_CHECKING:
    pass

app = typer.Typer(name="products", help="Products of a workspace: list, show, metadata, upload, add, edit, "
                                        "download, copy, delete.", no_args_is_help=True)

ProductArg = Annotated[str, typer.Argument(metavar="FILE", help="File name of the product in the workspace.")]


def _bands(product: Any) -> str:
    group = product.bands_groups
    bands = (group.bands if group else None) or []
    return ", ".join(str(b.name) for b in bands)


def _published(product: Any) -> str:
    group = product.bands_groups
    bands = (group.bands if group else None) or []
    return ", ".join(f"{b.name}: layer {b.layer_id}" for b in bands if b.published)


def nwse(bbox: str | None) -> str:
    """A product's footprint as ``N,W,S,E`` (what ``wasdi search --bbox`` takes), from the service's ten numbers
    (the corners as latitude,longitude pairs); anything else as it is."""
    if not bbox:
        return ""
    try:
        numbers = [float(part) for part in bbox.split(",")]
    except ValueError:
        return bbox
    if len(numbers) < 4 or len(numbers) % 2:
        return bbox
    lats, lons = numbers[0::2], numbers[1::2]
    return ",".join(f"{round(value, 6):g}" for value in (max(lats), min(lons), min(lats), max(lons)))


LIST_COLUMNS = (
    ("file", lambda p: p.file_name),
    ("name", lambda p: p.product_friendly_name),
    ("bands", _bands),
    ("style", lambda p: p.style),
    ("N,W,S,E", lambda p: nwse(p.bbox)),
)

LIGHT_COLUMNS = (
    ("file", lambda p: p.file_name),
    ("name", lambda p: p.product_friendly_name or p.name),
    ("N,W,S,E", lambda p: nwse(p.bbox)),
)

GENERATING = "Generating Metadata, try later"
"""The name of the placeholder the server answers while it reads a product's metadata."""

SHOW_FIELDS = (
    ("file", lambda p: p.file_name),
    ("name", lambda p: p.name),
    ("friendly name", lambda p: p.product_friendly_name),
    ("bands", _bands),
    ("bbox (N,W,S,E)", lambda p: nwse(p.bbox)),
    ("style", lambda p: p.style),
    ("description", lambda p: p.description),
    ("published", _published),
    ("metadata read", lambda p: p.metadata_file_created),
)



@app.command("list")
def list_(
    workspace: WorkspaceOpt = None,
    light: Annotated[bool, typer.Option("--light", help="Only file, name and footprint (faster for big "
                                                       "workspaces).")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Products of a workspace (file, friendly name, bands, style, footprint); -q: their file names only."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        if quiet:
            for file_name in sorted(client.products.list_names(workspace_id)):
                out.value(file_name)
            return
        products = client.products.list_light(workspace_id) if light else client.products.list(workspace_id)
    out.items(products, LIGHT_COLUMNS if light else LIST_COLUMNS, id_of=lambda p: p.file_name,
              empty="No products.")


@app.command()
def show(product: ProductArg, workspace: WorkspaceOpt = None, profile: ProfileOpt = None, base_url: BaseUrlOpt = None,
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


def _tree(element: Any, depth: int = 0) -> None:
    pad = "  " * depth
    output.Output().value(f"{pad}{element.name or ''}")
    for attribute in element.attributes or []:
        output.Output().value(f"{pad}  {attribute.description}: {attribute.data if attribute.data is not None else ''}")
    for child in element.elements or []:
        _tree(child, depth + 1)


@app.command()
def metadata(
    product: ProductArg,
    workspace: WorkspaceOpt = None,
    timeout: Annotated[float, typer.Option("--timeout", min=0, help="While the server reads the metadata (the first "
                                                                    "time it is asked), wait this many seconds "
                                                                    "for it.")] = 60,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
) -> None:
    """The metadata tree of a product: its elements, indented, with their attributes."""
    import time

    from wasdi_sdk import EmptyResultError

    out = Output(json_output=json)
    deadline = time.monotonic() + timeout
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        while True:
            try:
                tree = client.products.get_metadata(product, workspace_id)
            except EmptyResultError as e:
                raise CliError(f"no metadata for '{product}' (no such product, or it has none)") from e
            if tree.name != GENERATING:
                break
            if time.monotonic() >= deadline:
                raise CliError(f"the server is still reading the metadata of '{product}'; try again in a moment")
            time.sleep(0.2)
    if out.json:
        out.item(tree, (), id_of=lambda t: t.name)
        return
    _tree(tree)


@app.command()
def add(product: ProductArg, workspace: WorkspaceOpt = None, profile: ProfileOpt = None,
        base_url: BaseUrlOpt = None) -> None:
    """Make a file already in the workspace's folder (written by an app, say) one of its products."""
    from wasdi_sdk import EmptyResultError

    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        try:
            result = client.products.add_to_workspace(product, workspace_id)
        except EmptyResultError:
            result = None
    if result is None or not result.bool_value:
        raise CliError(f"'{product}' was not added: is the file in the workspace's folder?")
    message(f"{product} is a product of the workspace")


@app.command()
def edit(
    product: ProductArg,
    workspace: WorkspaceOpt = None,
    friendly_name: Annotated[str | None, typer.Option("--friendly-name", help="The name shown for it.")] = None,
    style: Annotated[str | None, typer.Option("--style", help="Its default style.")] = None,
    description: Annotated[str | None, typer.Option("--description", help="Its description.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Change a product's friendly name, default style or description."""
    from wasdi_sdk import EmptyResultError

    if friendly_name is None and style is None and description is None:
        raise CliError("nothing to change: give --friendly-name, --style or --description", USAGE)
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        try:
            current = client.products.get(product, workspace_id)
        except EmptyResultError as e:
            raise CliError(f"no product '{product}' in the workspace (or it is not accessible)") from e
        if friendly_name is not None:
            current.product_friendly_name = friendly_name
        if style is not None:
            current.style = style
        if description is not None:
            current.description = description
        current.file_name = current.file_name or product
        client.products.update(workspace_id, current)
    message(f"Updated {product}")


@app.command()
def copy(
    products: Annotated[list[str], typer.Argument(metavar="FILE...", help="File names of the products.")],
    to: Annotated[str, typer.Option("--to", metavar="ID_OR_NAME", help="The workspace to copy them to.")],
    workspace: WorkspaceOpt = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until each copy is done.")] = True,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting after this many "
                                                                           "seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Copy products to another workspace (a background SHARE process each; prints their ids with --no-wait)."""

    with connection.client(profile, base_url) as client:
        origin_id, _ = resolve_workspace(client, workspace)
        destination_id, _ = resolve_workspace(client, to)
        if origin_id == destination_id:
            raise CliError("--ws and --to are the same workspace", USAGE)
        for product in products:
            started = client.file_buffer.share(origin_id, destination_id, product)
            process_id = started.string_value or ""
            if process_id == "PRODUCT_ALREADY_PRESENT":
                message(f"{product} is already in the destination workspace")
                continue
            if not wait:
                Output().value(process_id)
                message(f"Copying {product}: process {process_id}")
                continue
            wait_for(client, process_id, f"Copying {product}", timeout, f"the copy of {product} failed")
            message(f"Copied {product}")


@app.command()
def upload(
    path: Annotated[Path, typer.Argument(metavar="PATH", exists=True, dir_okay=False, readable=True,
                                         help="The local file to upload (streamed).")],
    workspace: WorkspaceOpt = None,
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
        wait_for(client, started.string_value or "", f"Ingesting {file_name}", timeout,
                 f"the upload of {file_name} was not ingested")
    Output().value(file_name)
    message(f"Uploaded and ingested {file_name}")


@app.command()
def download(
    product: ProductArg,
    workspace: WorkspaceOpt = None,
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
    workspace: WorkspaceOpt = None,
    keep_files: Annotated[bool, typer.Option("--keep-files", help="Keep the files, only forget the products.")]
    = False,
    keep_layers: Annotated[bool, typer.Option("--keep-layers", help="Keep their published map layers.")] = False,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="With several products (deleted in the background): "
                                                                "wait until they are gone.")] = True,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting after this many "
                                                                           "seconds.")] = None,
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
        if len(products) == 1:
            client.products.delete(products[0], workspace_id, deletefile=not keep_files,
                                   deletelayer=not keep_layers)
            message(f"Deleted {products[0]}")
            return
        started = client.products.delete_many(workspace_id, list(products), deletefile=not keep_files,
                                              deletelayer=not keep_layers)
        if not wait:
            Output().value(started.string_value or "")
            message(f"Deleting {len(products)} products: process {started.string_value}")
            return
        wait_for(client, started.string_value or "", f"Deleting {len(products)} products", timeout,
                 "the deletion failed")
    message(f"Deleted {len(products)} products: {', '.join(products)}")
