"""``wasdi server start``: serve a WASDI server here (same as ``wasdi-server serve``)."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(name="server", help="Run a self-hosted WASDI server.", no_args_is_help=True)


@app.command()
def start(
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Data directory (default: ./.wasdi-data).")]
    = None,
    host: Annotated[str | None, typer.Option("--host", help="Address to bind (default: 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="Port (default: 8080).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="Worker threads (default: 8).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Settings TOML file.")] = None,
    public_url: Annotated[str | None, typer.Option("--public-url",
                                                   help="Base URL clients use to reach this server.")] = None,
    init_admin: Annotated[bool, typer.Option(
        "--init-admin", help="On first start (no users yet) create an admin and print its credentials once.")] = False,
) -> None:
    """Serve the API with waitress until interrupted (Ctrl-C)."""
    from wasdi_server.cli import serve
    from wasdi_server.settings import load_settings

    settings = load_settings(config, data_dir=data_dir, host=host, port=port, threads=threads,
                             public_url=public_url)
    serve(settings, init_admin=init_admin)
