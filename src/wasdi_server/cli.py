"""``wasdi-server``: serve the API, manage users (also while it serves) and fill the local catalogue.

The same conventions as ``wasdi``: Typer, ``-h``/``--help``, one-sentence errors on stderr, exit codes
0 ok, 1 error, 2 usage, 130 interrupted; tracebacks only with ``WASDI_DEBUG=1``.
"""

from __future__ import annotations

import dataclasses
import errno
import json as jsonlib
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from wasdi_command_line import serve_options
from wasdi_command_line.groups import UniformHelpGroup, debug_enabled

if TYPE_CHECKING:
    from .settings import Settings

INITIAL_ADMIN = "admin@wasdi.local"


class Failure(Exception):
    """A failure explained in one sentence (exit 1)."""


def _message(error: BaseException) -> str:
    text = getattr(error, "message", None) or str(error)
    return str(text).strip() or type(error).__name__


class ServerGroup(UniformHelpGroup):
    """Root group: a failure inside a command becomes one sentence and an exit code, as in ``wasdi``."""

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
            if debug_enabled():
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
store_app = typer.Typer(help="The store of a data directory: inspect and repair its journal, or copy it into the "
                        "database of a deployment of several nodes (while no server runs on it).", no_args_is_help=True)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            typer.echo(f"wasdi-server {version('wasdi-toolkit')}")
        except PackageNotFoundError:  # run from a source tree that was never installed
            typer.echo("wasdi-server (wasdi-toolkit, not installed: no version)")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    """Serve a WASDI server, manage its users, fill its local search catalogue and repair its store."""


app.add_typer(users_app, name="user")
app.add_typer(catalogue_app, name="catalogue")
app.add_typer(store_app, name="store")

DataDirOpt = serve_options.DataDirOpt
ConfigOpt = serve_options.ConfigOpt
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _settings(config: Path | None = None, **overrides: Any) -> Settings:
    from .settings import load_settings

    return load_settings(config, **overrides)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def hear_stop_signals() -> None:
    """SIGINT (Ctrl-C, ``kill -INT``) and SIGTERM (docker stop, systemd) stop the server as cleanly as each
    other: waitress returns and the store is closed.  Set whatever the disposition inherited: a script's
    background job (``make run &``) starts with SIGINT ignored, and Python keeps an ignored SIGINT ignored."""
    for number in STOP_SIGNALS:
        signal.signal(number, _interrupt)


BUSY_ERRNOS = frozenset({errno.EADDRINUSE})
API_PORT_CHOICES = ("serve on another port with 'make run PORT=18081', 'wasdi-server serve --port N' or "
                    "WASDI_SERVER_PORT=N")


def cannot_listen(what: str, host: str, port: int, error: OSError, choices: str) -> Failure:
    """One sentence: which port of which service cannot be had, why, and how to pick another."""
    if error.errno in BUSY_ERRNOS:
        return Failure(f"port {port} on {host} ({what}) is already in use, by another program or another "
                       f"wasdi-server: {choices}")
    reason = error.strerror or str(error)
    return Failure(f"{what} cannot listen on {host}:{port} ({reason}): {choices}")


def listen_api(settings: Settings, application: Any) -> Any:
    """The API's waitress server, its socket bound and listening (it accepts once run)."""
    from . import serving

    try:
        return serving.make_server(application, host=settings.host, port=settings.port, threads=settings.threads,
                                   ident="wasdi-server", clear_untrusted_proxy_headers=True, channel_timeout=300,
                                   max_request_body_size=settings.max_upload_bytes,
                                   upload_spool=settings.files_root / serving.UPLOAD_SPOOL,
                                   connections=settings.http_connections,
                                   connections_per_address=settings.http_connections_per_address,
                                   header_seconds=settings.http_header_seconds)
    except OSError as e:
        raise cannot_listen("the API", settings.host, settings.port, e, API_PORT_CHOICES) from e


def create_first_admin(services: Any) -> None:
    """The first admin account, its password printed once (only while the store holds no user)."""
    if services.store.collection("users").count() != 0:
        return
    from .domains.accounts.passwords import random_password
    from .management import accounts

    password = random_password()
    accounts.add(services, INITIAL_ADMIN, password, admin=True, name="Admin", surname="WASDI")
    print(f"Created the first admin account (shown once):\n  user:     {INITIAL_ADMIN}\n"
          f"  password: {password}", flush=True)


def serve(settings: Settings, *, init_admin: bool = False) -> None:
    """Serve with waitress until interrupted (SIGINT or SIGTERM)."""
    from . import log_redaction, serving
    from .app import create_app
    from .composition import build_services
    from .management import catalogue
    from .management.channel import AdminChannel

    hear_stop_signals()  # from the start: a stop while starting also closes what was opened
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = fit_connection_budgets(settings)
    log_redaction.install()
    # Waitress warns on every busy moment ("Task queue depth is N"); that is load, not a fault.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    # The local catalogue exists from the start, so files added to it later are searchable at once.
    catalogue.folder_of(settings).mkdir(parents=True, exist_ok=True)
    announce_box(settings)
    services = build_services(settings)
    channel = AdminChannel(services)
    listener = None
    sftp = None
    server = None
    try:
        services.identity.check_serving()
        application = create_app(settings, services)
        # The API's port first, before anything starts or is written: the usual clash (8080) ends the start with
        # nothing done.  Waitress accepts only once it runs, after the crash recovery of services.start().
        server = listen_api(settings, application)
        services.start()
        channel.start()
        sftp = start_sftp(settings, services)
        # The broker before the API serves: a client told to listen there must find it.
        listener = start_broker(settings, services)
        # Only once every port is held: a start that fails must not spend the one-time password.
        if init_admin:
            create_first_admin(services)
        url = settings.public_url or f"http://{settings.host}:{settings.port}"
        role = ""
        if settings.store_url:
            from .store.postgres_store import redacted

            kind = "main node" if services.identity.is_main else "compute node"
            role = f", {kind} {settings.node_code} sharing {redacted(settings.store_url)}"
        print(f"WASDI server on {url} (data in {settings.data_dir}{role})", flush=True)
        if sftp is not None:
            print(f"SFTP service on {sftp.address} (host key {sftp.fingerprint})", flush=True)
        if listener is not None:
            print(f"Messages: the built-in broker on ws://{settings.host}:{listener.port} (STOMP over WebSocket)",
                  flush=True)
        else:
            from .messages.rabbitmq import describe_url

            print(f"Messages: published to {describe_url(settings.broker_url)}", flush=True)
        serving.run(server)
    finally:
        if server is not None:
            serving.close(server)
        if listener is not None:
            listener.stop()
        if sftp is not None:
            sftp.stop()
        channel.stop()
        services.close()


def connection_budgets(settings: Settings) -> dict[str, int]:
    """The listeners ``serve`` runs and the connections each may hold in all (their settings' names)."""
    budgets = {"http_connections": settings.http_connections}
    if not settings.broker_url:
        budgets["broker_connections"] = settings.broker_connections
    if settings.sftp_enabled:
        budgets["sftp_connections"] = settings.sftp_connections
    return budgets


def fit_connection_budgets(settings: Settings) -> Settings:
    """Raise the open-files limit to what the connection budgets need; where the hard limit forbids it, the
    settings with the budgets cut to fit (logged)."""
    from . import descriptor_limit

    budgets = connection_budgets(settings)
    limit = descriptor_limit.raise_to_fit(budgets)
    log = logging.getLogger("wasdi_server")
    if limit.enough:
        log.info("%s", limit.describe())
        return settings
    cut: dict[str, Any] = descriptor_limit.fitted(budgets, limit)
    log.warning("%s; budgets now %s", limit.describe(), ", ".join(f"{k} = {v}" for k, v in cut.items()))
    return dataclasses.replace(settings, **cut)


def start_broker(settings: Settings, services: Any) -> Any:
    """The built-in message broker, listening (``None`` with RabbitMQ, ``broker_url``)."""
    from .messages import builtin_port, start_listener

    try:
        return start_listener(services)
    except OSError as e:
        which = "the built-in message broker" + ("" if settings.broker_port else ", on the API's port + 1")
        raise cannot_listen(which, settings.host, builtin_port(settings), e,
                            "pick its port with 'wasdi-server serve --broker-port N' or WASDI_SERVER_BROKER_PORT=N, "
                            "or publish to RabbitMQ (broker_url)") from e


def start_sftp(settings: Settings, services: Any) -> Any:
    """The SFTP service of the upload accounts, listening (``None`` when ``sftp_enabled`` is false)."""
    if not settings.sftp_enabled:
        return None
    from .domains.accounts.login_throttle import LoginThrottle
    from .transfer.sftp_server import SftpService

    logging.getLogger("asyncssh").setLevel(logging.WARNING)  # a line per packet otherwise; ours say who logs in
    service = SftpService(services.uploads, host=settings.host, port=settings.sftp_port,
                          host_key_path=settings.sftp_host_key_path, quota_bytes=settings.sftp_quota_bytes,
                          throttle=LoginThrottle(), connections=settings.sftp_connections,
                          connections_per_address=settings.sftp_connections_per_address,
                          handshake_seconds=settings.sftp_handshake_seconds)
    try:
        service.start()
    except OSError as e:
        raise cannot_listen("the SFTP service", settings.host, settings.sftp_port, e,
                            "pick its port with 'wasdi-server serve --sftp-port N' or WASDI_SERVER_SFTP_PORT=N "
                            "(0: any free port), or turn it off with sftp_enabled = false") from e
    from .transfer.address import sftp_address

    services.uploads.sftp_address = sftp_address(settings, service.port)
    return service


def announce_box(settings: Settings) -> None:
    """The start-up log's word on how other people's code will run here (loud when it will not be boxed)."""
    from .launcher.box import Box

    box = Box.from_settings(settings)
    log = logging.getLogger("wasdi_server.box")
    refusal = box.refusal()
    if not box.confined:
        log.warning("!" * 78)
        log.warning("app_isolation = off: apps, app builds and workflows run UNBOXED, with everything this "
                    "server's OS user may do (read the store and every user's files, use the admin channel's "
                    "key, signal this server). Only for a single-user machine. 'wasdi-server doctor' says more.")
        log.warning("!" * 78)
    elif refusal:
        log.error("apps, app builds and workflows will be refused: %s", refusal)
    else:
        support = box.support
        log.info("apps, app builds and workflows run boxed (Landlock ABI %d, seccomp, capabilities dropped; "
                 "processes %s, memory %s)", support.landlock_abi,
                 "per run cgroup" if support.processes_by == "cgroup" else "RLIMIT_NPROC",
                 "per run cgroup" if support.memory_by == "cgroup" else "RLIMIT_DATA")


def run_account_operation(settings: Settings, operation: str, arguments: dict[str, Any]) -> Any:
    """Through the running server's admin channel when one serves ``data_dir``; else on the store directly."""
    from .management import accounts, channel

    if channel.available(settings.data_dir):
        try:
            return channel.call(settings.data_dir, operation, arguments)
        except channel.ChannelError as e:
            raise Failure(e.message) from e
    from .composition import build_services

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
    host: serve_options.HostOpt = None,
    port: serve_options.PortOpt = None,
    threads: serve_options.ThreadsOpt = None,
    public_url: serve_options.PublicUrlOpt = None,
    init_admin: serve_options.InitAdminOpt = False,
    web_client: serve_options.WebClientOpt = None,
    sftp_port: Annotated[int | None, typer.Option("--sftp-port", min=0, max=65535, metavar="N",
                                                  help="Port of the SFTP service (default: 2222; 0: any free port)."
                                                  )] = None,
    broker_port: Annotated[int | None, typer.Option(
        "--broker-port", min=1, max=65535, metavar="N",
        help="Port of the built-in message broker (default: the API's port + 1).")] = None,
    node_code: Annotated[str | None, typer.Option(
        "--node-code", metavar="CODE", help="This node's code in a deployment of several nodes (default: wasdi, the "
        "main node).")] = None,
    store_url: Annotated[str | None, typer.Option(
        "--store-url", metavar="URL", help="The PostgreSQL database the nodes of a deployment share "
        "(postgresql://...); better in WASDI_SERVER_STORE_URL when it holds a password.")] = None,
) -> None:
    """Serve the API with waitress, the built-in message broker and the SFTP service of the upload accounts beside
    it, until interrupted (Ctrl-C)."""
    settings = _settings(config, data_dir=data_dir, host=host, port=port, threads=threads, public_url=public_url,
                         web_client_dir=serve_options.web_client_dir(web_client), sftp_port=sftp_port,
                         broker_port=broker_port, node_code=node_code, store_url=store_url)
    serve(settings, init_admin=init_admin)


@app.command("doctor")
def doctor_command(data_dir: DataDirOpt = None, config: ConfigOpt = None, json: JsonOpt = False) -> None:
    """Say what this machine's kernel offers to box apps, builds and workflows, and what each run will get."""
    from .launcher.box import Box
    from .launcher.box.report import NAME_CHECK_HOST, describe, lines

    settings = _settings(config, data_dir=data_dir)
    facts = describe(Box.from_settings(settings), settings.data_dir, settings.port,
                     name_host="" if settings.apps_offline else NAME_CHECK_HOST)
    from . import descriptor_limit

    limit = descriptor_limit.raise_to_fit(connection_budgets(settings))  # what serve would get
    facts["open_files"] = {"soft_at_start": limit.found, "soft_when_serving": limit.soft, "hard": limit.hard,
                           "needed": limit.needed}
    if json:
        typer.echo(jsonlib.dumps(facts, indent=2))
    else:
        for line in lines(facts):
            typer.echo(line)
        typer.echo(limit.describe())
    if settings.app_isolation != "off" and facts["refusal"]:
        raise typer.Exit(1)


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


@store_app.command("copy")
def store_copy(
    to: Annotated[str, typer.Option("--to", metavar="URL", help="The PostgreSQL database of the deployment "
                                    "(postgresql://user:password@host:5432/wasdi), new and empty.")],
    data_dir: DataDirOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Copy what the nodes of a deployment share (users, workspaces, apps ...) from the data directory into a
    PostgreSQL database; the data directory keeps its files and processes, and becomes the main node's
    (docs/nodes.md).  Stop the server first."""
    from .management import store_copy as copier

    def report(done: copier.Copied) -> None:
        typer.echo(f"{done.collection}\t{done.documents}")

    settings = _settings(config, data_dir=data_dir)
    try:
        copied = copier.copy_to_database(settings, to, report)
    except copier.CopyRefused as e:
        raise Failure(str(e)) from e
    from .store.postgres_store import redacted

    typer.echo(f"copied {sum(c.documents for c in copied)} documents of {len(copied)} collections into "
               f"{redacted(to)}; start this data directory's server with --store-url as the main node", err=True)


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
    from wasdi_command_line.help_style import plain_help

    args = list(argv) if argv is not None else sys.argv[1:]
    plain_help(args, sys.stdout)  # piped --help: the text without boxes, as 'wasdi' prints it
    try:
        app(args=args, prog_name="wasdi-server")
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
