"""``wasdi login``, ``wasdi logout``, ``wasdi whoami`` (``client.auth``)."""

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from .. import connection
from ..errors import AUTH, USAGE, CliError
from ..options import BaseUrlOpt, JsonOpt, ProfileOpt, QuietOpt
from ..output import Output, message

app = typer.Typer()
ENV_PASSWORD = "WASDI_PASSWORD"

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
    target = connection.resolve(profile, base_url)
    if password_stdin:
        if not user:
            raise CliError("--password-stdin needs --user", USAGE)
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        if not user:
            user = typer.prompt("User", default=target.profile.user or None, err=True)
        password = os.environ.get(ENV_PASSWORD) or config_password or typer.prompt("Password", hide_input=True,
                                                                                   err=True)
    if not password:
        raise CliError("empty password", USAGE)
    client = connection.make_client(target.base_url, None)
    try:
        try:
            account = client.auth.login(user.strip(), password)
        except AuthenticationError as e:
            raise CliError(f"login to {target.base_url} failed: wrong user or password", AUTH) from e
    finally:
        client.close()
    saved = target.profile
    saved.base_url = target.base_url
    saved.user = account.user_id or user.strip()
    saved.session_token = account.session_id
    target.profiles.put(saved)
    if not target.profiles.default:
        target.profiles.default = saved.name
    target.profiles.save()
    message(f"Logged in as {saved.user} on {target.base_url} (profile '{saved.name}')")


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
    """The user of the current session: id, name, surname and type."""
    from wasdi_sdk import AuthenticationError, EmptyResultError

    out = Output(json_output=json, quiet=quiet)
    target = connection.resolve(profile, base_url)
    client = connection.connect(target)
    try:
        try:
            account = client.auth.check_session()
        except (AuthenticationError, EmptyResultError) as e:
            raise CliError(f"not logged in to {target.base_url}: the session has expired or ended; "
                           "run 'wasdi login'", AUTH) from e
    finally:
        client.close()
    out.item(account, USER_FIELDS, id_of=lambda u: u.user_id)
