"""``wasdi notebook open`` and ``wasdi notebook stop``: your JupyterLab on a workspace (``client.console``), with the
official library set up for that workspace."""

from __future__ import annotations

import os
import sys
import time
import webbrowser
from typing import Annotated

import typer

from .. import connection
from ..errors import CliError
from ..lookup import named
from ..options import BaseUrlOpt, ProfileOpt
from ..output import Output, message
from .workspaces import resolve_workspace

app = typer.Typer(name="notebook", help="Your JupyterLab on a workspace: open, stop.", no_args_is_help=True)

POLL_SECONDS = 1.0


def has_display() -> bool:
    """Whether a browser can be shown here (a desktop session; never over a bare SSH login)."""
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


@app.command("open")
def open_(
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME", help="Workspace id, or its exact "
                                                  "name (default: the profile's, set by 'wasdi ws use').")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the notebook to start.")] = 180.0,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Only print the address.")] = False,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Start (or find) your notebook on a workspace and print its address; on a desktop, open it in the browser.
    The address carries the notebook's token: keep it to yourself."""
    with connection.client(profile, base_url) as client:
        workspace_id, _ = resolve_workspace(client, workspace)
        answer = client.console.create(workspace_id)
        address = str(answer.string_value or "")
        deadline = time.monotonic() + timeout
        if not address.startswith("http"):
            message("Starting your notebook...")
        while not address.startswith("http"):
            if time.monotonic() >= deadline:
                raise CliError(f"the notebook did not start within {timeout:g} s: try again, or ask the server's "
                               "operator to look at its log")
            time.sleep(POLL_SECONDS)
            ready = client.console.ready(workspace_id)
            text = str(ready.string_value or "")
            if ready.bool_value and text.startswith("http"):
                address = text
            elif not ready.bool_value and "starting" not in text.lower():
                raise CliError(f"{text}; try again, or ask the server's operator to look at its log")
    Output().value(address)
    if not no_browser and has_display():
        webbrowser.open(address)


@app.command()
def stop(
    workspace: Annotated[str | None, typer.Option("--ws", metavar="ID_OR_NAME", help="Workspace id, or its exact "
                                                  "name (default: the profile's, set by 'wasdi ws use').")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Stop your notebook on a workspace: its kernels end with it, the files it wrote stay in the workspace."""
    with connection.client(profile, base_url) as client:
        workspace_id, entry = resolve_workspace(client, workspace)
        answer = client.console.terminate(workspace_id)
    label = named(workspace_id, entry)
    if "no notebook" in str(answer.string_value or "").lower():
        message(f"No notebook of yours runs on workspace {label}")
    else:
        message(f"Stopped your notebook on workspace {label}")
