"""The options of serving a WASDI server, one definition for ``wasdi-server serve`` and ``wasdi server start``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", metavar="DIR",
                                                 help="Data directory (default: ./.wasdi-data).")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", metavar="FILE", help="Settings TOML file.")]
HostOpt = Annotated[str | None, typer.Option("--host", help="Address to bind (default: 127.0.0.1).")]
PortOpt = Annotated[int | None, typer.Option("--port", min=1, max=65535, metavar="N", help="Port (default: 8080).")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", min=1, metavar="N",
                                                help="Worker threads (default: 8).")]
PublicUrlOpt = Annotated[str | None, typer.Option("--public-url", metavar="URL",
                                                  help="Base URL clients use to reach this server.")]
InitAdminOpt = Annotated[bool, typer.Option(
    "--init-admin", help="On first start (no users yet) create an admin and print its credentials once.")]
WebClientOpt = Annotated[Path | None, typer.Option(
    "--web-client", metavar="DIR", help="Serve a built WASDI web client (wasdiClient2) from this folder at /, "
    "same origin as the API.")]


def web_client_dir(web_client: Path | None) -> str | None:
    """The web client's folder as the settings take it (absolute), or None."""
    return str(web_client.resolve()) if web_client else None
