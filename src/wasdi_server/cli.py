"""``wasdi-server``: serve the API, manage users (also while it serves) and fill the local catalogue.

The same conventions as ``wasdi``: Typer, ``-h``/``--help``, one-sentence errors on stderr, exit codes
0 ok, 1 error, 2 usage, 130 interrupted; tracebacks only with ``WASDI_DEBUG=1``.
"""

from __future__ import annotations

import json as jsonlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:
    from .settings import Settings

INITIAL_ADMIN = "admin@wasdi.local"


class Failure(Exception):
    """A failure explained in one sentence (exit 1)."""


def _debug() -> bool:
    return os.environ.get("WASDI_DEBUG", "").strip().lower() in ("1", "true", "yes", "on")


def _message(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error)
    return str(text).strip() or type(error).__name__


class ServerGroup(TyperGroup):
    """Root group: a failure inside a command becomes one sentence and an exit code, as in ``wasdi``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from wasdi_cli.help_style import uniform  # the same help conventions as `wasdi`

        uniform(self)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        from wasdi_cli.help_style import uniform

        uniform(self)  # again: the shell-completion options are added after construction
        super().format_help(ctx, formatter)

    def invoke(self, ctx: Any) -> Any:
        from .errors import DomainError
        from .store import StoreError

        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except KeyboardInterrupt as e:
            raise typer.Exit(130) from e
        except (Failure, StoreError, DomainError, ValueError, OSError) as e:
            if _debug():
                import traceback

                traceback.print_exception(e, file=sys.stderr)
            typer.echo(f"wasdi-server: {_message(e)}", err=True)
            raise typer.Exit(1) from e


app = typer.Typer(
    name="wasdi-server",
    cls=ServerGroup,
    help="Serve a WASDI server, manage its users, fill its local search catalogue and repair its store.",
    epilog="Exit codes: 0 ok, 1 error, 2 usage, 130 interrupted. Set WASDI_DEBUG=1 for tracebacks.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
users_app = typer.Typer(help="Add, list, disable, enable users and reset passwords (also while the server runs).",
                        no_args_is_help=True)
catalogue_app = typer.Typer(help="Fill the local search catalogue (the LOCAL data provider).", no_args_is_help=True)
store_app = typer.Typer(help="Inspect and repair the store's journal (while no server runs on the data directory).",
                        no_args_is_help=True)
app.add_typer(users_app, name="user")
app.add_typer(catalogue_app, name="catalogue")
app.add_typer(store_app, name="store")

DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", metavar="DIR",
                                                 help="Data directory (default: ./.wasdi-data).")]
ConfigOpt = Annotated[Path | None, typer.Option("--config", metavar="FILE", help="Settings TOML file.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _settings(config: Path | None = None, **overrides: Any) -> Settings:
    from .settings import load_settings

    return load_settings(config, **overrides)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(settings: Settings, *, init_admin: bool = False) -> None:
    """Serve with waitress until interrupted."""
    from . import log_redaction, serving
    from .app import create_app
    from .management import catalogue
    from .management.channel import AdminChannel
    from .services import build_services

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log_redaction.install()
    # Waitress warns on every busy moment ("Task queue depth is N"); that is load, not a fault.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    # The local catalogue exists from the start, so files added to it later are searchable at once.
    catalogue.folder_of(settings).mkdir(parents=True, exist_ok=True)
    services = build_services(settings)
    channel = AdminChannel(services)
    try:
        if init_admin and services.store.collection("users").count() == 0:
            from .management import accounts
            from .services.passwords import random_password

            password = random_password()
            accounts.add(services, INITIAL_ADMIN, password, admin=True, name="Admin", surname="WASDI")
            print(f"Created the first admin account (shown once):\n  user:     {INITIAL_ADMIN}\n"
                  f"  password: {password}", flush=True)
        services.start()
        channel.start()
        application = create_app(settings, services)
        url = settings.public_url or f"http://{settings.host}:{settings.port}"
        print(f"WASDI server on {url} (data in {settings.data_dir})", flush=True)
        # SIGTERM (docker stop, systemd) stops as cleanly as Ctrl-C: waitress returns and we close the store.
        signal.signal(signal.SIGTERM, _interrupt)
        serving.serve(application, host=settings.host, port=settings.port, threads=settings.threads,
                       ident="wasdi-server", clear_untrusted_proxy_headers=True, channel_timeout=300,
                       max_request_body_size=settings.max_upload_bytes)
    finally:
        channel.stop()
        services.close()


def run_account_operation(settings: Settings, operation: str, arguments: dict[str, Any]) -> Any:
    """Through the running server's admin channel when one serves ``data_dir``; else on the store directly."""
    from .management import accounts, channel

    if channel.available(settings.data_dir):
        try:
            return channel.call(settings.data_dir, operation, arguments)
        except channel.ChannelError as e:
            raise Failure(e.message) from e
    from .services import build_services

    services = build_services(settings)
    try:
        return accounts.run(services, operation, arguments)
    finally:
        services.close()


def add_user(settings: Settings, email: str, password: str, admin: bool, name: str, surname: str) -> None:
    run_account_operation(settings, "user.add", {"userId": email, "password": password, "admin": admin,
                                                 "name": name, "surname": surname})


def _read_password(from_stdin: bool, prompt: str = "Password: ") -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    import getpass

    return getpass.getpass(prompt)


@app.command("serve")
def serve_command(
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
    host: Annotated[str | None, typer.Option("--host", help="Address to bind (default: 127.0.0.1).")] = None,
    port: Annotated[int | None, typer.Option("--port", min=1, max=65535, metavar="N",
                                             help="Port (default: 8080).")] = None,
    threads: Annotated[int | None, typer.Option("--threads", min=1, metavar="N",
                                                help="Worker threads (default: 8).")] = None,
    public_url: Annotated[str | None, typer.Option("--public-url", metavar="URL",
                                                   help="Base URL clients use to reach this server.")] = None,
    init_admin: Annotated[bool, typer.Option(
        "--init-admin", help="On first start (no users yet) create an admin and print its credentials once.")] = False,
    web_client: Annotated[Path | None, typer.Option(
        "--web-client", metavar="DIR", help="Serve a built WASDI web client (wasdiClient2) from this folder at /, "
        "same origin as the API.")] = None,
) -> None:
    """Serve the API with waitress until interrupted (Ctrl-C)."""
    settings = _settings(config, data_dir=data_dir, host=host, port=port, threads=threads, public_url=public_url,
                         web_client_dir=str(web_client.resolve()) if web_client else None)
    serve(settings, init_admin=init_admin)


@users_app.command("add")
def user_add(
    email: Annotated[str, typer.Argument(metavar="EMAIL", help="The new user's id (an e-mail address).")],
    admin: Annotated[bool, typer.Option("--admin", help="Give the ADMIN role.")] = False,
    password_stdin: Annotated[bool, typer.Option("--password-stdin",
                                                 help="Read the password from standard input.")] = False,
    name: Annotated[str, typer.Option("--name", help="First name.")] = "",
    surname: Annotated[str, typer.Option("--surname", help="Last name.")] = "",
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Add an active user (with a free trial subscription)."""
    settings = _settings(config, data_dir=data_dir)
    password = _read_password(password_stdin)
    add_user(settings, email, password, admin, name, surname)
    typer.echo(f"added {'admin ' if admin else ''}user {email.strip().lower()}")


@users_app.command("list")
def user_list(data_dir: DataDirOpt = None, config: ConfigOpt = None, json: JsonOpt = False) -> None:
    """List the users: id, role, whether active."""
    rows = run_account_operation(_settings(config, data_dir=data_dir), "user.list", {})
    if json:
        typer.echo(jsonlib.dumps(rows, indent=2))
        return
    if not rows:
        typer.echo("No users.", err=True)
    for row in rows:
        state = "active" if row["active"] else "disabled"
        typer.echo(f"{row['userId']}\t{row['role']}\t{state}")


@users_app.command("disable")
def user_disable(email: Annotated[str, typer.Argument(metavar="EMAIL", help="The user's id.")],
                 data_dir: DataDirOpt = None, config: ConfigOpt = None) -> None:
    """Disable a user: no more logins, open sessions closed."""
    result = run_account_operation(_settings(config, data_dir=data_dir), "user.disable", {"userId": email})
    typer.echo(f"disabled user {result['userId']}")


@users_app.command("enable")
def user_enable(email: Annotated[str, typer.Argument(metavar="EMAIL", help="The user's id.")],
                data_dir: DataDirOpt = None, config: ConfigOpt = None) -> None:
    """Enable a disabled user again."""
    result = run_account_operation(_settings(config, data_dir=data_dir), "user.enable", {"userId": email})
    typer.echo(f"enabled user {result['userId']}")


@users_app.command("reset-password")
def user_reset(
    email: Annotated[str, typer.Argument(metavar="EMAIL", help="The user's id.")],
    password_stdin: Annotated[bool, typer.Option("--password-stdin", help="Read the new password from standard "
                                                 "input (default: a random one, printed once).")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Set a new password on a user."""
    password = _read_password(True) if password_stdin else None
    result = run_account_operation(_settings(config, data_dir=data_dir), "user.reset",
                                   {"userId": email, "password": password})
    if result.get("password"):
        typer.echo(f"new password of {result['userId']} (shown once): {result['password']}")
    else:
        typer.echo(f"password of {result['userId']} changed")


@catalogue_app.command("add")
def catalogue_add(
    files: Annotated[list[Path], typer.Argument(metavar="FILE...", help="Product files (or .SAFE folders).")],
    platform: Annotated[str | None, typer.Option("--platform", help="Mission of files whose name or tags do not "
                                                 "say it, e.g. Sentinel-2.")] = None,
    move: Annotated[bool, typer.Option("--move", help="Move the files instead of copying them.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Add files to the local catalogue: searchable at once by footprint, dates and platform."""
    from .management import catalogue

    try:
        added = catalogue.add(_settings(config, data_dir=data_dir), files, platform=platform, move=move)
    except catalogue.CatalogueError as e:
        raise Failure(str(e)) from e
    for product in added:
        typer.echo(f"added {catalogue.describe(product)}")
        if product.bbox is None:
            typer.echo(f"  {product.title} has no footprint (a search by area will not find it): it is not a "
                       f"georeferenced raster, or rasters cannot be read here ({catalogue.GEO_HINT})", err=True)


@catalogue_app.command("sample")
def catalogue_sample(
    if_empty: Annotated[bool, typer.Option("--if-empty", help="Only when the catalogue is empty.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Write a few small generated scenes (Sentinel-1/2, January 2024, western Po valley) into the catalogue."""
    from .management import catalogue

    try:
        written = catalogue.sample(_settings(config, data_dir=data_dir), if_empty=if_empty)
    except catalogue.CatalogueError as e:
        raise Failure(str(e)) from e
    for product in written:
        typer.echo(f"added {catalogue.describe(product)}")


@catalogue_app.command("list")
def catalogue_list(data_dir: DataDirOpt = None, config: ConfigOpt = None) -> None:
    """List what the local catalogue holds."""
    from .management import catalogue

    products = catalogue.listing(_settings(config, data_dir=data_dir))
    if not products:
        typer.echo("The local catalogue is empty: add files with 'wasdi-server catalogue add FILE...'.", err=True)
    for product in products:
        typer.echo(catalogue.describe(product))


@store_app.command("check")
def store_check(data_dir: DataDirOpt = None, config: ConfigOpt = None, json: JsonOpt = False) -> None:
    """List the journals and every line of them the store cannot read (exit 1 when there is one)."""
    import dataclasses

    from .management import store_repair

    try:
        reports = store_repair.check(_settings(config, data_dir=data_dir).data_dir)
    except store_repair.RepairError as e:
        raise Failure(str(e)) from e
    if json:
        typer.echo(jsonlib.dumps([dataclasses.asdict(r) for r in reports], indent=2))
    for report in reports if not json else ():
        torn = f", {report.torn_tail} bytes of an append cut short (left out)" if report.torn_tail else ""
        typer.echo(f"{report.name}: {report.lines} lines, {report.size} bytes{torn}")
        for bad in report.bad:
            typer.echo(f"  line {bad.number}: {bad.reason}\n    {bad.preview!r}")
    if not reports and not json:
        typer.echo("No journal: the store's files hold everything.", err=True)
    broken = [(r.name, b.number) for r in reports for b in r.bad]
    if broken:
        name, number = broken[0]
        typer.echo(f"Restore the data directory from a backup, or drop a line (its write is lost) with "
                   f"'wasdi-server store drop-line {name} {number}'.", err=True)
        raise typer.Exit(1)


@store_app.command("drop-line")
def store_drop_line(
    journal: Annotated[str, typer.Argument(metavar="JOURNAL", help="The journal's file name, as 'store check' "
                                                                   "shows it.")],
    line: Annotated[int, typer.Argument(metavar="LINE", min=1, help="The line number, from 1.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Remove one line of a journal (its bytes are kept beside it as JOURNAL.line-LINE.dropped)."""
    from .management import store_repair

    if not yes and not typer.confirm(f"Drop line {line} of {journal}? The write it holds is lost", default=False):
        typer.echo("Nothing changed.", err=True)
        raise typer.Exit(1)
    try:
        kept = store_repair.drop_line(_settings(config, data_dir=data_dir).data_dir, journal, line)
    except store_repair.RepairError as e:
        raise Failure(str(e)) from e
    typer.echo(f"dropped line {line} of {journal}; its bytes are in {kept}")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        app(args=list(argv) if argv is not None else None, prog_name="wasdi-server")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
