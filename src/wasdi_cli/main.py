"""``wasdi``: the command line of the WASDI toolkit.  This module only wires the command modules."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Annotated

import typer

from wasdi_command_line.help_style import plain_help

from . import __version__
from .errors import INTERRUPTED, quiet_stdout, report
from .lazy import LazyGroup

LazyGroup.lazy = {
    # command: module under wasdi_cli/commands whose ``app`` is that group, or "module.command" for a
    # command of that module at the top level.  Adding a group is one line here; its module is only
    # imported when the group runs (or ``wasdi --help`` lists it).
    "login": "auth.login",
    "logout": "auth.logout",
    "whoami": "auth.whoami",
    "auth": "auth",
    "account": "account",
    "uploads": "uploads",
    "ws": "workspaces",
    "notebook": "notebook",
    "server": "server",
    "processes": "processes",
    "credits": "credits",
    "nodes": "nodes",
    "images": "images",
    "styles": "styles",
    "subscriptions": "subscriptions",
    "projects": "projects",
    "orgs": "organizations",
    "products": "products",
    "import": "imports.import",
    "search": "search.search",
    "providers": "search.providers",
    "maps": "maps",
    "workflows": "workflows",
    "market": "market",
    "reviews": "reviews",
    "apps": "apps",
    "admin": "admin",
}

app = typer.Typer(
    name="wasdi",
    cls=LazyGroup,
    help="Work with a WASDI server: log in, manage workspaces, run a local server.",
    epilog="Exit codes: 0 ok, 1 error, 2 usage, 3 connection, 4 authentication, 130 interrupted. "
           "Set WASDI_DEBUG=1 for tracebacks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


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
    args = list(argv) if argv is not None else sys.argv[1:]
    plain_help(args, sys.stdout)
    try:
        app(args=args, prog_name="wasdi")
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
