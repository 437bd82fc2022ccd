"""``wasdi styles ...``: map styles (SLD files) and their sharing (``client.styles``)."""

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..errors import USAGE, CliError
from ..lookup import by_id_or_name, listing_of, named
from ..options import BaseUrlOpt, DownloadOutOpt, JsonOpt, ProfileOpt, PublicOpt, QuietOpt, YesOpt
from ..output import Output, cell, message, progress, save_download
from ..sharing import add_share_commands

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import StyleViewModel

app = typer.Typer(name="styles", help="Map styles (SLD): list, show, upload, update, download, delete and share.",
                  no_args_is_help=True)

StyleArg = Annotated[str, typer.Argument(metavar="ID_OR_NAME", help="Style id, or its name.")]
DescriptionOpt = Annotated[str | None, typer.Option("--description", help="Description of the style.")]

LIST_COLUMNS = (
    ("id", lambda s: s.style_id),
    ("name", lambda s: s.name),
    ("owner", lambda s: s.user_id),
    ("public", lambda s: s.is_public),
    ("shared with me", lambda s: s.shared_with_me),
    ("read-only", lambda s: s.read_only),
    ("description", lambda s: s.description),
)

SHOW_FIELDS = (
    ("id", lambda s: s.style_id),
    ("name", lambda s: s.name),
    ("description", lambda s: s.description),
    ("owner", lambda s: s.user_id),
    ("public", lambda s: s.is_public),
    ("shared with me", lambda s: s.shared_with_me),
    ("read-only", lambda s: s.read_only),
    ("preview", lambda s: s.img_link),
)






def resolve_style(client: "WasdiClient", id_or_name: str) -> tuple[str, "StyleViewModel | None"]:
    """The style ``id_or_name`` identifies or names (style names are unique, ignoring case)."""
    return by_id_or_name(client.styles.list(), id_or_name, id_of=lambda s: s.style_id, name_of=lambda s: s.name,
                         noun="style", casefold=True, fetch=client.styles.get_xml,
                         listing="styles list")




@app.command("list")
def list_(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
          quiet: QuietOpt = False) -> None:
    """Styles you own, public ones, and those shared with you."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        styles = listing_of(client.styles.list, "styles")
    out.items(styles, LIST_COLUMNS, id_of=lambda s: s.style_id, empty="No styles.")


@app.command()
def show(
    style: StyleArg,
    xml: Annotated[bool, typer.Option("--xml", help="Print the style's SLD instead of its details.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
    json: JsonOpt = False,
    quiet: QuietOpt = False,
) -> None:
    """Details of one style, or its SLD with --xml."""
    out = Output(json_output=json, quiet=quiet)
    with connection.client(profile, base_url) as client:
        style_id, entry = resolve_style(client, style)
        if xml:
            out.value(client.styles.get_xml(style_id).rstrip("\n"))
            return
    if entry is None:
        raise CliError(f"no style '{style}' among yours, the public ones and those shared with you")
    out.item(entry, SHOW_FIELDS, id_of=lambda s: s.style_id)


@app.command()
def upload(
    file: Annotated[Path, typer.Argument(metavar="FILE", exists=True, dir_okay=False, readable=True,
                                         help="The SLD file.")],
    name: Annotated[str | None, typer.Option("--name", help="Unique style name (default: the file's name "
                                                           "without extension).")] = None,
    description: DescriptionOpt = None,
    public: PublicOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Create a style from an SLD file; prints its id on stdout."""
    style_name = name or file.stem
    with (connection.client(profile, base_url) as client,
          progress(f"Uploading {file.name}", file.stat().st_size) as advance):
        result = client.styles.upload(file, name=style_name, description=description, public=bool(public),
                                      on_progress=advance)
    if result.string_value:
        Output().value(result.string_value)
    message(f"Created style '{style_name}'")


def _sld_text(file: Path) -> str:
    try:
        return file.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise CliError(f"{file} is not a UTF-8 SLD file (give a .sld, or a .zip holding one)", USAGE) from e


@app.command()
def update(
    style: StyleArg,
    file: Annotated[Path | None, typer.Option("--file", exists=True, dir_okay=False, readable=True,
                                              help="A new SLD, or a .zip holding one.")] = None,
    description: DescriptionOpt = None,
    public: PublicOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Replace a style's SLD and/or change its description or visibility."""
    from wasdi_sdk import NotModifiedError

    if file is None and description is None and public is None:
        raise CliError("nothing to change: give --file, --description or --public/--private", USAGE)
    with connection.client(profile, base_url) as client:
        style_id, entry = resolve_style(client, style)
        label = named(style_id, entry)
        if file is not None:
            try:
                if file.suffix.lower() == ".zip":
                    client.styles.update_file(file, style_id=style_id, zipped=True)
                else:
                    client.styles.update_xml(style_id=style_id, style_xml=_sld_text(file))
                message(f"Replaced the SLD of style {label}")
            except NotModifiedError:
                message(f"The SLD of style {label} is unchanged")
        if description is not None or public is not None:
            client.styles.update_params(style_id, description=description, public=public)
            changes = {"description": description, "public": public}
            message(f"Updated style {label}: " + ", ".join(f"{k}={cell(v)}" for k, v in changes.items()
                                                           if v is not None))


@app.command()
def download(
    style: StyleArg,
    out: DownloadOutOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Download a style's SLD file."""
    from wasdi_sdk import NoContentError

    with connection.client(profile, base_url) as client:
        style_id, entry = resolve_style(client, style)
        try:
            if entry is None and out != "-":  # not in the list: try it as a name
                save_download(out, style, partial(client.styles.download_by_name, style))
            else:
                save_download(out, style, partial(client.styles.download, style_id))
        except NoContentError as e:
            raise CliError(f"no style '{style}' (or its file is missing on the server)") from e


@app.command()
def delete(style: StyleArg, yes: YesOpt = False, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Delete a style you own (or stop having one shared with you)."""
    if not yes and not output.stdin_is_tty():
        raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
    with connection.client(profile, base_url) as client:
        style_id, entry = resolve_style(client, style)
        label = named(style_id, entry)
        leaving = bool(entry is not None and entry.shared_with_me)
        if not yes:
            question = f"Leave style {label}, shared with you?" if leaving else f"Delete style {label}?"
            if not typer.confirm(question, default=False, err=True):
                message("Cancelled")
                raise typer.Exit(1)
        client.styles.delete(style_id)
    message(f"Left style {label}" if leaving else f"Deleted style {label}")


add_share_commands(app, noun="style", group="styles", id_param="style_id",
                   resource_arg=StyleArg, resolve=resolve_style, label=named)


@app.command("node-delete")
def node_delete(style: StyleArg, yes: YesOpt = False, profile: ProfileOpt = None,
                base_url: BaseUrlOpt = None) -> None:
    """Delete the copy of a style kept on a compute node (run it against the node: --base-url); the style
    itself is deleted on the main node with 'wasdi styles delete'."""
    with connection.client(profile, base_url) as client:
        style_id, entry = resolve_style(client, style)
        name = getattr(entry, "name", None)
        if not name:
            raise CliError(f"the node does not list the style '{style}': give its name as the node lists it "
                           "('wasdi styles list' against the node)")
        label = named(style_id, entry)
        if not yes:
            if not output.stdin_is_tty():
                raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
            if not typer.confirm(f"Delete the node's copy of style {label}?", default=False, err=True):
                message("Cancelled")
                raise typer.Exit(1)
        client.styles.node_delete(style_id=style_id, style_name=name)
    message(f"Deleted the node's copy of style {label}")
