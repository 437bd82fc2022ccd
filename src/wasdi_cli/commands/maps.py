"""``wasdi maps ...``: published bands as map layers (``client.file_buffer.publish_band``, ``client.maps``)."""

import shlex
from pathlib import Path
from typing import Annotated, Any

import typer

from .. import connection
from ..errors import CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt, WorkspaceOpt
from ..output import Output, message
from ..waiting import follow, wait_bar
from .styles import resolve_style
from .workspaces import resolve_workspace

app = typer.Typer(name="maps", help="Map layers of published bands: publish a band, list and preview layers.",
                  no_args_is_help=True)

LayerArg = Annotated[str, typer.Argument(metavar="LAYER", help="Layer id (layerId of a published band).")]
StyleOpt = Annotated[str | None, typer.Option("--style", metavar="ID_OR_NAME",
                                              help="Style id or name (default: the product's style).")]


@app.command()
def publish(
    product: Annotated[str, typer.Argument(metavar="PRODUCT", help="File name of the product in the workspace.")],
    band: Annotated[str, typer.Argument(metavar="BAND", help="Band name, as 'wasdi products show' lists them.")],
    workspace: WorkspaceOpt = None,
    style: StyleOpt = None,
    wait: Annotated[bool, typer.Option("--wait/--no-wait", help="Wait until the layer is drawn.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting after this many "
                                                                           "seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
) -> None:
    """Publish a band as a map layer; prints the WMS address to add in QGIS (the layer is listed under its id)."""
    from wasdi_sdk import EmptyResultError, ProcessFailedError, ProcessTimeoutError
    from wasdi_sdk.events.waits import wait_for_process

    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        style_name = None
        if style:
            _, entry = resolve_style(client, style)
            if entry is None:
                raise CliError(f"no style '{style}' among yours, public or shared with you; "
                               "'wasdi styles list' shows them")
            style_name = entry.name
        try:
            answer = client.file_buffer.publish_band(product, workspace_id, band, style=style_name)
            if answer.message_code == "WAITFORRABBIT" and wait:
                with wait_bar(f"Drawing {product} {band}") as advance:
                    wait_for_process(client, str(answer.payload), timeout=timeout, poll_interval=0.5,
                                     max_interval=5.0, on_update=follow(advance))
                answer = client.file_buffer.publish_band(product, workspace_id, band, style=style_name)
        except EmptyResultError as e:
            raise CliError(_why_not_published(client, workspace_id, workspace or workspace_id, product, band)) from e
        except (ProcessFailedError, ProcessTimeoutError) as e:
            raise CliError(f"the band was not published: {e}") from e
        url = client.maps.wms_url()
    if json:
        Output(json_output=True).item(answer, (), id_of=lambda a: a.payload)
        return
    if answer.message_code == "PUBLISHBAND":
        payload = dict(answer.payload or {})
        Output().value(str(payload.get("geoserverUrl") or url))
        message(f"Published as layer {payload.get('layerId')}: in QGIS, Layer > Add Layer > Add WMS Layer with the "
                "address above (send your session as the x-session-token header, or 'wasdi maps url "
                "--with-token')")
        return
    Output().value(url)
    message(f"Drawing the layer (process {answer.payload}); once drawn, 'wasdi maps list --ws "
            f"{shlex.quote(workspace or workspace_id)}' shows its layer id (--wait waits for it)")


def _why_not_published(client: Any, workspace_id: str, workspace: str, product: str, band: str) -> str:
    """Which of the two is missing, the product or its band, and the command that lists what there is."""
    from wasdi_sdk import EmptyResultError

    try:
        details = client.products.get(product, workspace_id)
    except EmptyResultError:
        return (f"there is no product '{product}' in workspace '{workspace}'; list them with: wasdi products list "
                f"--ws {shlex.quote(workspace)}")
    group = details.bands_groups
    names = [str(b.name) for b in (group.bands if group else None) or []]
    if not names:
        return f"product '{product}' has no bands to publish (it is not a raster this server can read)"
    return f"product '{product}' has no band '{band}'; its bands: {', '.join(names)}"


class LayerRow(dict[str, Any]):
    """A map layer as ``wasdi maps list`` shows it (its JSON is these fields)."""

    def to_wire(self, *, keep_none: bool = False) -> dict[str, Any]:
        return dict(self) if keep_none else {k: v for k, v in self.items() if v is not None}


def published_layers(products: list[Any]) -> list[LayerRow]:
    """The published bands of ``products``, one row per map layer."""
    rows = []
    for product in products:
        group = product.bands_groups
        for band in (group.bands if group else None) or []:
            if band.published and band.layer_id:
                rows.append(LayerRow(layerId=band.layer_id, productName=product.file_name, bandName=band.name,
                                     style=product.style, geoserverUrl=band.geoserver_url))
    return rows


@app.command("list")
def list_(
    workspace: WorkspaceOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Map layers published in a workspace: layer id, product, band, style (-q: layer ids only)."""
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        rows = published_layers(client.products.list(workspace_id))
    Output(json_output=json, quiet=quiet).items(
        rows, (("layer", lambda r: r["layerId"]), ("product", lambda r: r["productName"]),
               ("band", lambda r: r["bandName"]), ("style", lambda r: r["style"])),
        id_of=lambda r: r["layerId"],
        empty=f"No map layers in workspace '{workspace or workspace_id}'; publish one with: wasdi maps publish "
              f"PRODUCT BAND --ws {shlex.quote(workspace or workspace_id)}")


@app.command()
def url(
    layer: Annotated[str | None, typer.Argument(metavar="[LAYER]", help="Check that this layer is visible.")] = None,
    with_token: Annotated[bool, typer.Option("--with-token", help="Put the session in the address (for map "
                                                                  "clients that cannot send headers); keep it "
                                                                  "secret.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Print this server's WMS address."""
    from wasdi_sdk import NotFoundError

    with connection.client(profile, base_url) as client:
        try:
            Output().value(client.maps.wms_url(layer, include_token=with_token))
        except NotFoundError as e:
            raise CliError(f"no layer '{layer}' visible to you; 'wasdi maps list --ws WORKSPACE' lists a "
                           "workspace's layers") from e


@app.command()
def preview(
    layer: LayerArg,
    to: Annotated[Path, typer.Option("--output", "-o", metavar="PATH", help="PNG file to write.")],
    size: Annotated[int, typer.Option("--size", min=1, max=4096, help="Longest side in pixels.")] = 1024,
    style: StyleOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Write a PNG of a layer's whole extent (EPSG:4326); prints the path written."""
    from wasdi_sdk import NotFoundError

    with connection.client(profile, base_url) as client:
        style_name = None
        if style:
            _, entry = resolve_style(client, style)
            if entry is None:
                raise CliError(f"no style '{style}' among yours, public or shared with you; "
                               "'wasdi styles list' shows them")
            style_name = entry.name
        try:
            image = client.maps.preview(layer, size=size, style=style_name)
        except NotFoundError as e:
            raise CliError(f"no layer '{layer}' visible to you; 'wasdi maps list --ws WORKSPACE' lists a "
                           "workspace's layers") from e
    temp = to.with_name(f".{to.name}.partial")
    temp.write_bytes(image)
    temp.replace(to)
    Output().value(str(to))
    message(f"Wrote {to} ({len(image)} bytes)")
