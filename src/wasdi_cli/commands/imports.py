"""``wasdi import URL... --ws WS``: import remote files into a workspace (``client.file_buffer``)."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING, Annotated

import typer

from .. import connection
from ..errors import USAGE, CliError, message_for
from ..options import BaseUrlOpt, ProfileOpt, WorkspaceOpt
from ..output import Output, message
from ..waiting import wait_for
from .workspaces import resolve_workspace

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient

app = typer.Typer()
METHOD_NOT_ALLOWED = 405
LINK_SCHEMES = ("http://", "https://", "file://", "s3://")
_MISSION = re.compile(r"^(S1|S2|S3|S5P)[A-D_]", re.IGNORECASE)


def not_a_link(value: str) -> str | None:
    """The sentence for a value that is not a link (a scene name, most often), else ``None``."""
    if value.lower().startswith(LINK_SCHEMES):
        return None
    mission = _MISSION.match(value)
    platform = mission.group(1).upper() if mission else "PLATFORM"
    return (f"'{value}' is not a link (http(s):// or file://) but looks like a scene name: find its link with "
            f"'wasdi search --platform {platform} --name {shlex.quote(value)} --links' and import that")


@app.command("import")
def import_(
    urls: Annotated[list[str], typer.Argument(metavar="URL...", help="http(s) or file:// URLs of the files (e.g. "
                                                                     "the links 'wasdi search --links' prints).")],
    workspace: WorkspaceOpt = None,
    name: Annotated[str | None, typer.Option("--name", help="File name in the workspace (default: from the URL; "
                                                            "one URL only).")] = None,
    provider: Annotated[str | None, typer.Option("--provider", help="Data provider code (default: the server's).")]
    = None,
    platform: Annotated[str | None, typer.Option("--platform", help="Mission, e.g. Sentinel-2 (default: inferred "
                                                                    "from the name).")] = None,
    wait: Annotated[bool, typer.Option("--wait", help="Wait until the files are in the workspace.")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, help="Give up waiting for each file after "
                                                                           "this many seconds.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Import remote files into a workspace.

    Prints one line per URL on stdout: its DOWNLOAD process id (or DONE when the product is already there); with
    --wait, waits for each and prints the product's file name.  A URL that fails is named on stderr, the others go
    on, and the command then exits 1.  Older servers that only take the GET form of the request are asked that way.
    """
    if name and len(urls) > 1:
        raise CliError(f"--name names one file, and {len(urls)} URLs are given: import them one by one to name "
                       "each", USAGE)
    wrong = [sentence for sentence in map(not_a_link, urls) if sentence]
    if len(wrong) == len(urls):
        raise CliError("; ".join(wrong), USAGE)
    from wasdi_sdk import WasdiError

    failed: list[str] = []
    with connection.connect(connection.resolve(profile, base_url)) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        started: list[tuple[str, str]] = []
        for url in urls:
            why = not_a_link(url)
            if why is None:
                try:
                    started.append((url, _start(client, url, workspace_id, name, provider, platform)))
                    continue
                except WasdiError as e:  # the next URLs go on; this one is reported by its sentence
                    if connection.session_failure(e) is not None or len(urls) == 1:
                        raise
                    why = message_for(e)
            failed.append(url)
            message(f"Failed: {url}: {why}")
        for url, process_id in started:
            if process_id == "DONE":
                Output().value("DONE")
                message(f"Already in the workspace: {url}")
            elif not wait:
                Output().value(process_id)
                message(f"Import started: process {process_id} ({url})")
            else:
                try:
                    final = wait_for(client, process_id, f"Importing {name or url.rsplit('/', 1)[-1]}", timeout,
                                     "the import failed")
                except CliError as e:
                    if len(urls) == 1:
                        raise
                    failed.append(url)
                    message(f"Failed: {url}: {e.message}")
                    continue
                Output().value(str(final.product_name or process_id))
                message(f"Imported {final.product_name} ({final.file_size or 'size unknown'})")
    if failed:
        raise CliError(f"{len(failed)} of {len(urls)} imports failed: {', '.join(failed)}")


def _start(client: WasdiClient, url: str, workspace_id: str, name: str | None, provider: str | None,
           platform: str | None) -> str:
    """The DOWNLOAD process id of the import of ``url`` (``DONE``: the product is already there)."""
    from wasdi_sdk import APIError

    try:
        started = client.file_buffer.import_product(file_url=url, workspace=workspace_id, name=name,
                                                    provider=provider, platform=platform)
    except APIError as e:
        if e.status != METHOD_NOT_ALLOWED:
            raise
        # An older server knows only the GET form of /filebuffer/download: same arguments, same answers.
        started = client.file_buffer.import_product_by_query(workspace_id, file_url=url, name=name,
                                                             provider=provider, platform=platform)
    return started.string_value or ""
