"""``wasdi-server``: serve the API, and manage users (the REST contract has no admin call to add one)."""

from __future__ import annotations

import argparse
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from .errors import DomainError
from .services.passwords import random_password
from .settings import Settings, load_settings
from .store import StoreError

INITIAL_ADMIN = "admin@wasdi.local"


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(getattr(args, "config", None), data_dir=getattr(args, "data_dir", None),
                         host=getattr(args, "host", None), port=getattr(args, "port", None),
                         threads=getattr(args, "threads", None), public_url=getattr(args, "public_url", None))


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def serve(settings: Settings, *, init_admin: bool = False) -> None:
    """Serve with waitress until interrupted."""
    from . import log_redaction, serving
    from .app import create_app
    from .services import build_services

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    log_redaction.install()
    # Waitress warns on every busy moment ("Task queue depth is N"); that is load, not a fault.
    logging.getLogger("waitress.queue").setLevel(logging.ERROR)
    services = build_services(settings)
    try:
        if init_admin and services.store.collection("users").count() == 0:
            password = random_password()
            services.users.add(INITIAL_ADMIN, password, admin=True, name="Admin", surname="WASDI")
            services.subscriptions.create_trial(INITIAL_ADMIN)
            print(f"Created the first admin account (shown once):\n  user:     {INITIAL_ADMIN}\n"
                  f"  password: {password}", flush=True)
        services.start()
        app = create_app(settings, services)
        url = settings.public_url or f"http://{settings.host}:{settings.port}"
        print(f"WASDI server on {url} (data in {settings.data_dir})", flush=True)
        # SIGTERM (docker stop, systemd) stops as cleanly as Ctrl-C: waitress returns and we close the store.
        signal.signal(signal.SIGTERM, _interrupt)
        serving.serve(app, host=settings.host, port=settings.port, threads=settings.threads,
                       ident="wasdi-server", clear_untrusted_proxy_headers=True, channel_timeout=300,
                       max_request_body_size=settings.max_upload_bytes)
    finally:
        services.close()


def add_user(settings: Settings, email: str, password: str, admin: bool, name: str, surname: str) -> None:
    from .services import build_services

    services = build_services(settings)
    try:
        services.users.add(email, password, admin=admin, name=name, surname=surname)
        services.subscriptions.create_trial(email.strip().lower())
    finally:
        services.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="wasdi-server", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--data-dir", type=Path, help="data directory (default ./.wasdi-data)")
    common.add_argument("--config", help="settings TOML file")
    s = sub.add_parser("serve", parents=[common], help="serve the API with waitress")
    s.add_argument("--host", help="address to bind (default 127.0.0.1)")
    s.add_argument("--port", type=int, help="port (default 8080)")
    s.add_argument("--threads", type=int, help="worker threads (default 8)")
    s.add_argument("--public-url", help="base URL clients use to reach this server")
    s.add_argument("--init-admin", action="store_true",
                   help="on first start (no users yet) create an admin and print its credentials once")
    u = sub.add_parser("user", help="manage users")
    usub = u.add_subparsers(dest="user_command", required=True)
    a = usub.add_parser("add", parents=[common], help="add an active user")
    a.add_argument("email")
    a.add_argument("--admin", action="store_true", help="give the ADMIN role")
    a.add_argument("--password-stdin", action="store_true", help="read the password from standard input")
    a.add_argument("--name", default="")
    a.add_argument("--surname", default="")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        settings = _settings(args)
        if args.command == "serve":
            serve(settings, init_admin=args.init_admin)
        elif args.command == "user" and args.user_command == "add":
            if args.password_stdin:
                password = sys.stdin.readline().rstrip("\r\n")
            else:
                import getpass

                password = getpass.getpass("Password: ")
            add_user(settings, args.email, password, args.admin, args.name, args.surname)
            print(f"added {'admin ' if args.admin else ''}user {args.email.strip().lower()}")
    except (StoreError, DomainError, ValueError, OSError) as e:
        print(f"wasdi-server: {getattr(e, 'message', None) or e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
