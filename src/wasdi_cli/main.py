"""``wasdi``: the command line of the WASDI toolkit.  This module only wires the command modules."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from . import __version__
from .commands import (
    auth,
    credits,
    images,
    imports,
    nodes,
    organizations,
    processes,
    products,
    projects,
    search,
    server,
    styles,
    subscriptions,
    workspaces,
)
from .errors import INTERRUPTED, WasdiGroup, quiet_stdout, report

app = typer.Typer(
    name="wasdi",
    cls=WasdiGroup,
    help="Work with a WASDI server: log in, manage workspaces, run a local server.",
    epilog="Exit codes: 0 ok, 1 error, 2 usage, 3 connection, 4 authentication, 130 interrupted. "
           "Set WASDI_DEBUG=1 for tracebacks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.add_typer(auth.app)  # login, logout, whoami at the top level
app.add_typer(workspaces.app, name="ws")
app.add_typer(server.app, name="server")
app.add_typer(processes.app, name="processes")
app.add_typer(credits.app, name="credits")
app.add_typer(nodes.app, name="nodes")
app.add_typer(images.app, name="images")
app.add_typer(styles.app, name="styles")
app.add_typer(subscriptions.app, name="subscriptions")
app.add_typer(projects.app, name="projects")
app.add_typer(organizations.app, name="orgs")
app.add_typer(products.app, name="products")
app.add_typer(imports.app)  # wasdi import URL at the top level
app.add_typer(search.app)  # wasdi search --platform ... at the top level


def _version(value: bool) -> None:
    if value:
        typer.echo(f"wasdi {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", help="On failure, also show the server's message code, "
                                                            "status and endpoint.")] = False,
) -> None:
    """Work with a WASDI server: log in, manage workspaces, run a local server."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``wasdi``; the exit code (errors raised inside commands are mapped by ``WasdiGroup``)."""
    try:
        app(args=list(argv) if argv is not None else None, prog_name="wasdi")
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code
        typer.echo(str(e.code), err=True)
        return 1
    except KeyboardInterrupt:
        typer.echo("", err=True)
        return INTERRUPTED
    except BrokenPipeError:
        quiet_stdout()
        return 0
    except Exception as e:  # raised outside a command (while parsing, or by the framework)
        return report(e)
    return 0


if __name__ == "__main__":
    sys.exit(main())
