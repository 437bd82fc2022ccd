"""``wasdi import URL --ws WS``: import a remote file into a workspace (``client.file_buffer``)."""

from typing import Annotated

import typer

from .. import connection
from ..options import BaseUrlOpt, ProfileOpt
from ..output import Output, message
from ..waiting import wait_for
from .products import WorkspaceOpt
from .workspaces import resolve_workspace

app = typer.Typer()
METHOD_NOT_ALLOWED = 405


@app.command("import")
def import_(
    url: Annotated[str, typer.Argument(metavar="URL", help="http(s) or file:// URL of the file (e.g. a search "
                                                            "result's link).")],
    workspace: WorkspaceOpt = None,
    name: Annotated[str | None, typer.Option("--name", help="File name in the workspace (default: from the URL).")]
    = None,
    provider: Annotated[str | None, typer.Option("--provider", help="Data provider code (default: the server's).")]
    = None,
    platform: Annotated[str | None, typer.Option("--platform", help="Mission, e.g. Sentinel-2 (default: inferred "
                                                                    "from the name).")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the file is in the workspace.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting after this many "
                                                                           "seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Import a remote file into a workspace.

    Prints the DOWNLOAD process id on stdout (or DONE when the product is already there); with
    --wait, waits for it and prints the product's file name.  Older servers that only take the GET
    form of the request are asked that way.
    """
    from wasdi_sdk import APIError

    with connection.connect(connection.resolve(profile, base_url)) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        try:
            started = client.file_buffer.import_product(file_url=url, workspace=workspace_id, name=name,
                                                        provider=provider, platform=platform)
        except APIError as e:
            if e.status != METHOD_NOT_ALLOWED:
                raise
            # An older server knows only the GET form of /filebuffer/download: same arguments, same answers.
            started = client.file_buffer.import_product_by_query(workspace_id, file_url=url, name=name,
                                                                 provider=provider, platform=platform)
        process_id = started.string_value or ""
        if process_id == "DONE":
            Output().value("DONE")
            message("The product is already in the workspace")
            return
        if not wait:
            Output().value(process_id)
            message(f"Import started: process {process_id}")
            return
        final = wait_for(client, process_id, f"Importing {name or url.rsplit('/', 1)[-1]}", timeout,
                         "the import failed")
    Output().value(str(final.product_name or process_id))
    message(f"Imported {final.product_name} ({final.file_size or 'size unknown'})")
