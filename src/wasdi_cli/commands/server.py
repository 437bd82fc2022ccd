"""``wasdi server start``: serve a WASDI server here (same as ``wasdi-server serve``)."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(name="server", help="Run a self-hosted WASDI server.", no_args_is_help=True)


@app.command()
def start(
    data_dir: Annotated[Path | None, typer.Option("--data-dir", metavar="DIR",
                                                  help="Data directory (default: ./.wasdi-data).")]
    = None,
    host: Annotated[str | None, typer.Option("--host", help="Address to bind (default: 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, help="Port (default: 8080).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1, help="Worker threads (default: 8).")] = None,
    config: Annotated[Path | None, typer.Option("--config", help="Settings TOML file.")] = None,
    public_url: Annotated[str | None, typer.Option("--public-url",
                                                   help="Base URL clients use to reach this server.")] = None,
    init_admin: Annotated[bool, typer.Option(
        "--init-admin", help="On first start (no users yet) create an admin and print its credentials once.")] = False,
    web_client: Annotated[Path | None, typer.Option(
        "--web-client", metavar="DIR", help="Serve a built WASDI web client (wasdiClient2) from this folder at /, "
        "same origin as the API.")] = None,
) -> None:
    """Serve the API with waitress until interrupted (Ctrl-C); the same as 'wasdi-server serve'."""
    from wasdi_server.cli import serve
    from wasdi_server.settings import SettingsError, load_settings

    client_dir = str(web_client.resolve()) if web_client else None
    try:
        settings = load_settings(config, data_dir=data_dir, host=host, port=port, threads=threads,
                                 public_url=public_url, web_client_dir=client_dir)
    except SettingsError as e:
        from ..errors import CliError

        raise CliError(str(e)) from e
    serve(settings, init_admin=init_admin)
