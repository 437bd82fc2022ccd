"""``wasdi login``, ``wasdi logout``, ``wasdi whoami`` and ``wasdi auth status`` (``client.auth``).

A profile belongs to the server it logged in to: a login to another server without ``--profile`` goes to that
server's own profile (made on first use, named after its host), never re-points the profile in use.
"""

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlsplit

import typer

from .. import connection, output
from ..errors import AUTH, CONNECTION, USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message
from ..profiles import Profile, ProfileFile, active_profile_name, normalize_url

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient
    from wasdi_sdk.models import UserViewModel

app = typer.Typer(name="auth", help="Your login: status, login, logout, whoami.", no_args_is_help=True)
ENV_PASSWORD = "WASDI_PASSWORD"
NO_TERMINAL = ("stdin is not a terminal, so the password cannot be asked for: set the WASDI_PASSWORD variable, or "
               "pipe it in with --password-stdin (printf '%s\\n' \"$PASSWORD\" | wasdi login --user USER "
               "--password-stdin)")

USER_FIELDS = (
    ("user id", lambda u: u.user_id),
    ("name", lambda u: u.name),
    ("surname", lambda u: u.surname),
    ("type", lambda u: u.type),
)


@app.command()
def login(
    user: Annotated[str | None, typer.Option("--user", "-u", help="User id (e-mail); prompted when omitted.")] = None,
    password_stdin: Annotated[bool, typer.Option("--password-stdin",
                                                 help="Read the password from the first line of stdin.")] = False,
    from_config: Annotated[Path | None, typer.Option(
        "--from-config", metavar="FILE", help="Take the server, user and password from the official wasdi "
        "library's config.json (and its WASDI_* variables), e.g. --from-config config.json.")] = None,
    profile: ProfileOpt = None,
    base_url: BaseUrlOpt = None,
) -> None:
    """Log in and keep the session in the profile.

    The password comes from --password-stdin, else the WASDI_PASSWORD variable, else --from-config,
    else a prompt: scripts and CI need no terminal.
    """
    from wasdi_sdk import AuthenticationError

    config_password: str | None = None
    if from_config is not None:
        from wasdi_sdk.config import load_config

        try:
            config = load_config(from_config)
        except (OSError, ValueError) as e:
            raise CliError(f"cannot read {from_config}: {e}; give the official library's config.json", USAGE) from e
        base_url = base_url or config.base_url
        user = user or config.user
        config_password = config.password
    target = connection.resolve(profile, base_url, note=False)
    if password_stdin:
        if not user:
            raise CliError("--password-stdin needs --user", USAGE)
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = os.environ.get(ENV_PASSWORD) or config_password or ""
        if not output.stdin_is_tty() and (not user or not password):
            raise CliError(("no user: give --user; " if not user else "no password: ") + NO_TERMINAL, USAGE)
        if not user:
            user = typer.prompt("User", default=target.profile.user or None, err=True)
        password = password or typer.prompt("Password", hide_input=True, err=True)
    if not password:
        raise CliError("empty password", USAGE)
    saved = _profile_of_server(target.profiles, target.profile, target.base_url, explicit=profile is not None)
    client = connection.make_client(target.base_url, None)
    try:
        try:
            account = client.auth.login(user.strip(), password)
        except AuthenticationError as e:
            raise CliError(f"login to {target.base_url} failed: wrong user or password", AUTH) from e
    finally:
        client.close()
    saved.base_url = target.base_url
    saved.user = account.user_id or user.strip()
    saved.session_token = account.session_id
    target.profiles.put(saved)
    if not target.profiles.default:
        target.profiles.default = saved.name
    target.profiles.save()
    from ..shells import record_login

    record_login(target.base_url, saved.name)
    message(f"Logged in as {saved.user} on {target.base_url} (profile '{saved.name}')")
    if saved.name != active_profile_name(None, target.profiles):
        message(f"It is not the default profile: add --profile {saved.name} to the commands for this server (or "
                f"export WASDI_PROFILE={saved.name})")


def _profile_of_server(profiles: ProfileFile, chosen: Profile, base_url: str, *, explicit: bool) -> Profile:
    """The profile a login to ``base_url`` goes to: ``chosen`` unless it holds a session for another server;
    then, without --profile, the profile of ``base_url`` (made on first use); with --profile, an error."""
    if not (chosen.base_url and chosen.session_token and normalize_url(chosen.base_url) != base_url):
        return chosen
    if explicit:
        raise CliError(f"profile '{chosen.name}' belongs to {chosen.base_url}: log in to {base_url} under another "
                       f"profile (--profile NAME), or first 'wasdi logout --profile {chosen.name}'", USAGE)
    for existing in profiles.profiles.values():
        if existing.base_url and normalize_url(existing.base_url) == base_url:
            return existing
    stem = "".join(c if c.isalnum() or c in ".-_" else "-" for c in urlsplit(base_url).netloc) or "server"
    name, n = stem, 2
    while name in profiles.profiles:
        name, n = f"{stem}-{n}", n + 1
    return profiles.get(name)


@app.command()
def logout(profile: ProfileOpt = None, base_url: BaseUrlOpt = None) -> None:
    """End the session on the server and remove it from the profile."""
    from wasdi_sdk import APIConnectionError, AuthenticationError, EmptyResultError

    target = connection.resolve(profile, base_url)
    if not target.token:
        message(f"Not logged in to {target.base_url} (profile '{target.profile_name}')")
        return
    client = connection.make_client(target.base_url, target.token)
    try:
        client.auth.logout()
    except (AuthenticationError, EmptyResultError):
        pass  # the session had already ended
    except APIConnectionError as e:
        message(f"Warning: could not reach {target.base_url} ({e}); the session is forgotten locally only")
    finally:
        client.close()
    if target.token_source == "profile":
        target.profile.session_token = None
        target.profiles.put(target.profile)
        target.profiles.save()
        message(f"Logged out of {target.base_url} (profile '{target.profile_name}')")
    else:
        message(f"Logged out of {target.base_url}; unset WASDI_SESSION_TOKEN, it names an ended session")


@app.command()
def whoami(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False,
           quiet: QuietOpt = False) -> None:
    """The user of the current session (id, name, surname, type) and the server and profile it belongs to."""
    out = Output(json_output=json, quiet=quiet)
    target = connection.resolve(profile, base_url)
    with connection.connect(target) as client:
        account = _account(client, target)
    fields = (*USER_FIELDS, ("server", lambda _: target.base_url), ("profile", lambda _: target.profile_name))
    out.item(account, fields, id_of=lambda u: u.user_id)


def _account(client: "WasdiClient", target: connection.Target) -> "UserViewModel":
    from wasdi_sdk import AuthenticationError, EmptyResultError

    try:
        return client.auth.check_session()
    except (AuthenticationError, EmptyResultError) as e:
        raise connection.session_not_valid(target) from e


@app.command()
def status(profile: ProfileOpt = None, base_url: BaseUrlOpt = None, json: JsonOpt = False) -> None:
    """Which server and profile the commands speak to, as whom, and whether the session is valid (exit 0 when it
    is, 4 when not, 3 when the server cannot be reached)."""
    from wasdi_sdk import APIConnectionError, WasdiError

    target = connection.resolve(profile, base_url)
    user, session, code = target.profile.user, "none: run '" + connection.login_command(target) + "'", AUTH
    if target.token:
        try:
            with connection.make_client(target.base_url, target.token) as client:
                user = _account(client, target).user_id or user
            session, code = "valid", 0
        except CliError:
            session = "not valid any more (expired or logged out): run '" + connection.login_command(target) + "'"
        except APIConnectionError as e:
            from ..errors import message_for

            session, code = f"unknown: {message_for(e)}", CONNECTION
        except WasdiError as e:
            session, code = f"unknown: {e}", CONNECTION
    source = {"env": "WASDI_SESSION_TOKEN", "profile": "the profile"}.get(target.token_source or "", "")
    from ..profiles import profiles_path
    from ..shells import last_login

    last = last_login()
    rows = {
        "server": target.base_url,
        "profile": target.profile_name,
        "user": user or "",
        "session": session + (f" (from {source})" if source and code == 0 else ""),
        "default workspace": target.profile.workspace or "",
        "last login in this shell": f"{last.base_url} (profile '{last.profile}')" if last else "",
        "profiles file": str(profiles_path()),
    }
    if json:
        import json as jsonlib

        typer.echo(jsonlib.dumps({key.replace(" ", "_"): value for key, value in rows.items()}, indent=2))
    else:
        width = max(len(key) for key in rows)
        for key, value in rows.items():
            typer.echo(f"{key:<{width}}  {value}".rstrip())
    if code:
        raise typer.Exit(code)
