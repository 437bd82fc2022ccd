"""``wasdi images ...``: images in the server's collections (``client.images``)."""

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection, output
from ..apps_lookup import AppArg, app_label, resolve_app
from ..errors import USAGE, CliError
from ..options import BaseUrlOpt, DownloadOutOpt, ProfileOpt, YesOpt
from ..output import Output, message, progress, save_download

if TYPE_CHECKING:
    pass

app = typer.Typer(name="images", help="Images: upload, get, check and delete (jpg, png or svg, at most 2 MiB); "
                                       "an app's logo and gallery.", no_args_is_help=True)

COLLECTIONS = "processors, users, organizations, styles or globathy"

CollectionArg = Annotated[str, typer.Argument(metavar="COLLECTION", help=f"Image collection: {COLLECTIONS}.")]
NameArg = Annotated[str, typer.Argument(metavar="NAME", help="Image file name, e.g. logo.png.")]
FolderOpt = Annotated[str | None, typer.Option(
    "--folder", help="Folder in the collection: your user id (users), an organization id, a processor name.")]



def _where(collection: str, folder: str | None, name: str) -> str:
    return "/".join(part for part in (collection, folder, name) if part)


@app.command()
def upload(
    file: Annotated[Path, typer.Argument(metavar="FILE", exists=True, dir_okay=False, readable=True,
                                         help="The image (its extension gives its type: jpg, png or svg).")],
    collection: CollectionArg,
    name: Annotated[str | None, typer.Option("--name", help="Name to store it under (default: the file's name "
                                                           "without extension; the extension is the file's).")] = None,
    folder: FolderOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Store an image in a collection, replacing one of the same name."""
    stem = name or file.stem
    with (connection.client(profile, base_url) as client,
          progress(f"Uploading {file.name}", file.stat().st_size) as advance):
        client.images.upload(file, collection=collection, folder=folder, name=stem, on_progress=advance)
    message(f"Uploaded {file.name} to {_where(collection, folder, stem)}")


ImageFileArg = Annotated[Path, typer.Argument(metavar="FILE", exists=True, dir_okay=False, readable=True,
                                              help="The image: jpg, png or svg, at most 2 MiB.")]


@app.command()
def logo(app_: AppArg, file: ImageFileArg,
         profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Set an app's logo (it replaces the previous one); you need write access to the app."""
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_)
        with progress(f"Uploading {file.name}", file.stat().st_size) as advance:
            client.images.upload_processor_logo(file, processor_id=app_id, filename=file.name, on_progress=advance)
    message(f"Set the logo of app {app_label(app_id, entry)}")


@app.command()
def gallery(app_: AppArg, file: ImageFileArg, profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Add an image to an app's gallery (six at most); prints the image's link on stdout."""
    with connection.client(profile, base_url) as client:
        app_id, entry = resolve_app(client, app_)
        with progress(f"Uploading {file.name}", file.stat().st_size) as advance:
            added = client.images.upload_gallery_image(file, processor_id=app_id, filename=file.name,
                                                       on_progress=advance)
    if added.string_value:
        Output().value(added.string_value)
    message(f"Added {file.name} to the gallery of app {app_label(app_id, entry)}")


@app.command()
def get(
    collection: CollectionArg,
    name: NameArg,
    folder: FolderOpt = None,
    out: DownloadOutOpt = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Download an image."""
    from wasdi_sdk import NoContentError

    with connection.client(profile, base_url) as client:
        try:
            save_download(out, name, partial(client.images.get, collection=collection, folder=folder, name=name),
                          default=Path.cwd() / Path(name).name)
        except NoContentError as e:
            raise CliError(f"no image {_where(collection, folder, name)} on the server") from e


@app.command()
def exists(collection: CollectionArg, name: NameArg, folder: FolderOpt = None, profile: ProfileOpt = None,
           base_url: BaseUrlOpt = None) -> None:
    """Whether an image exists: prints yes or no; exit code 0 or 1."""
    with connection.client(profile, base_url) as client:
        found = client.images.exists(collection=collection, folder=folder, name=name)
    output.Output().value("yes" if found else "no")
    if not found:
        raise typer.Exit(1)


@app.command()
def delete(collection: CollectionArg, name: NameArg, folder: FolderOpt = None, yes: YesOpt = False,
           profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """Delete an image."""
    where = _where(collection, folder, name)
    if not yes:
        if not output.stdin_is_tty():
            raise CliError("refusing to delete without confirmation: stdin is not a terminal; pass --yes", USAGE)
        if not typer.confirm(f"Delete image {where}?", default=False, err=True):
            message("Cancelled")
            raise typer.Exit(1)
    with connection.client(profile, base_url) as client:
        client.images.delete(collection=collection, folder=folder, name=name)
    message(f"Deleted image {where}")
