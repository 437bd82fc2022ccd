"""Which server, which session: the profile, the environment and the flags, resolved once.

Tests replace ``make_client`` (``monkeypatch.setattr(connection, "make_client", ...)``) to drive
an in-process server; commands always go through ``connect``/``make_client`` of this module.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .errors import AUTH, USAGE, CliError
from .profiles import (
    DEFAULT_BASE_URL,
    ENV_BASE_URL,
    ENV_SESSION_TOKEN,
    Profile,
    ProfileFile,
    active_profile_name,
    normalize_url,
)

if TYPE_CHECKING:
    from wasdi_sdk import WasdiClient


def make_client(base_url: str, token: str | None) -> WasdiClient:
    """The SDK client of ``base_url`` with the session ``token`` (``None``: not logged in)."""
    import httpx

    from wasdi_sdk import WasdiClient

    from .transport import DeadlineTransport

    http = httpx.Client(transport=DeadlineTransport(), timeout=DEFAULT_READ_TIMEOUT)
    client = WasdiClient(base_url=base_url, session_token=token, http_client=http)
    client._owns_http_client = True  # the SDK closes it with the client, as one it made itself
    return client


DEFAULT_READ_TIMEOUT = 120.0
"""Seconds a call may wait for the server's answer once connected (connecting has its own 10 s deadline)."""

def login_command(target: Target) -> str:
    """The ``wasdi login`` that renews ``target``'s session."""
    return "wasdi login" + ("" if target.profile_name == "default" else f" --profile {target.profile_name}")


def session_not_valid(target: Target | None) -> CliError:
    """The one error for a session the server does not accept, whatever the command: one sentence, exit 4."""
    if target is None:
        return CliError("the session is not valid any more (expired or logged out): run 'wasdi login'", AUTH)
    return CliError(f"the session with {target.base_url} is not valid any more (expired or logged out): run "
                    f"'{login_command(target)}'", AUTH)

LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")


def checked_base_url(text: str) -> str:
    """``text`` as a base URL: ``http://`` is added to a local address written without a scheme
    (``127.0.0.1:8080``); any other address without one, or another scheme, is a usage error saying what to write."""
    url = normalize_url(text)
    if "://" not in text:
        host = url.split("/", 1)[0]
        if host.startswith("["):
            name = host.split("]", 1)[0] + "]"  # [::1]:8080
        else:
            name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        if name in LOOPBACK_HOSTS or name.startswith("127."):
            return "http://" + url
        raise CliError(f"the base URL '{url}' has no scheme: write https://{url} (or http://{url} for a server "
                       "without TLS)", USAGE)
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise CliError(f"the base URL '{text.strip()}' is not an http:// or https:// address: write it like "
                       "https://www.wasdi.net/wasdiwebserver/rest or http://127.0.0.1:8080", USAGE)
    return url


@dataclass
class Target:
    """The resolved server and session of one command."""

    profiles: ProfileFile
    profile: Profile
    base_url: str
    token: str | None
    token_source: str | None
    """``"env"`` (``WASDI_SESSION_TOKEN``), ``"profile"`` or ``None``."""

    @property
    def profile_name(self) -> str:
        return self.profile.name


def resolve(profile: str | None = None, base_url: str | None = None, *, note: bool = True) -> Target:
    """Base URL: flag > ``WASDI_BASE_URL`` > profile > ``http://127.0.0.1:8080``.

    Session: ``WASDI_SESSION_TOKEN`` > profile.  The profile's token is only used for the
    server it was issued by, so ``--base-url`` pointing elsewhere never receives it.  When the server comes from
    the profile and this shell last logged in to another one, a line on stderr says so (``note=False``: not).
    """
    profiles = ProfileFile.load()
    current = profiles.get(active_profile_name(profile, profiles))
    given = base_url or os.environ.get(ENV_BASE_URL)
    url = checked_base_url(given or current.base_url or DEFAULT_BASE_URL)
    token: str | None = os.environ.get(ENV_SESSION_TOKEN) or None
    source: str | None = "env" if token else None
    if token is None and current.session_token and (
            current.base_url is None or normalize_url(current.base_url) == url):
        token, source = current.session_token, "profile"
    target = Target(profiles, current, url, token, source)
    global _current
    _current = target
    if note and not given:
        note_other_server(target)
    return target


_current: Target | None = None
"""The target the running command resolved (a command resolves one): what the fallbacks read, such as the
profile's default workspace, and the session check of a failure's report."""


def current_target() -> Target | None:
    """The target of the running command, once it has resolved one."""
    return _current


def forget_target() -> None:
    """No target resolved yet: what a new command starts from."""
    global _current
    _current = None


def note_other_server(target: Target) -> None:
    """One line on stderr when this shell last logged in to another server than the one ``target`` speaks to."""
    from .shells import last_login

    last = last_login()
    if last is None or last.base_url == target.base_url:
        return
    use = f"--profile {last.profile}" if last.profile != target.profile_name else f"--base-url {last.base_url}"
    print(f"Note: profile '{target.profile_name}' speaks to {target.base_url}; your last login in this shell was "
          f"to {last.base_url} (add {use} to speak to it)", file=sys.stderr)


def connect(target: Target, *, require_session: bool = True) -> WasdiClient:
    """The client for ``target``; exit 4 with a hint when a session is needed and there is none."""
    if require_session and not target.token:
        where = target.base_url
        command = login_command(target)
        if target.profile.session_token and target.profile.base_url:
            raise CliError(f"not logged in to {where}: profile '{target.profile_name}' holds a session for "
                           f"{target.profile.base_url}; run '{command} --base-url {where}'", AUTH)
        raise CliError(f"not logged in to {where} (profile '{target.profile_name}'); run '{command}'", AUTH)
    return make_client(target.base_url, target.token)


def confirm_session_of_empty_listing() -> None:
    """Raise the invalid-session error when the command's session is not valid any more: listings answer ``[]``
    for an unknown session too (failure style C), so an empty one is checked before "nothing there" is shown."""
    target = _current
    if target is None or not target.token:
        return
    from wasdi_sdk import AuthenticationError, EmptyResultError, WasdiError

    try:
        with make_client(target.base_url, target.token) as checker:
            checker.auth.check_session()
    except (AuthenticationError, EmptyResultError) as e:
        raise session_not_valid(target) from e
    except WasdiError:
        return  # cannot tell: show the empty listing as it is


def confirm_session_if_empty(client: WasdiClient, items: list[Any]) -> list[Any]:
    """``items``, after making sure an empty answer is not an expired session in disguise.

    Listings of the service answer ``[]`` for an invalid session too (failure style C), so an empty
    list is worth one more call before it is shown as "nothing there".
    """
    if not items and client.session_token:
        from wasdi_sdk import AuthenticationError

        try:
            client.auth.check_session()
        except AuthenticationError as e:
            raise session_not_valid(_current) from e
    return items


def client(profile: str | None = None, base_url: str | None = None) -> WasdiClient:
    """The SDK client of the resolved server and session (flags, environment, profile)."""
    return connect(resolve(profile, base_url))


def session_failure(error: BaseException) -> CliError | None:
    """The invalid-session error (exit 4, one sentence) when ``error`` came from the server while the command's
    session is not valid any more; ``None`` when the session is fine or not the question.

    Many endpoints do not say that a session is unknown (an empty answer, a refusal without a reason), so a
    failure of a command that sent a session is worth one more call, on the failure path only.
    """
    sdk = sys.modules.get("wasdi_sdk")
    target = _current
    if sdk is None or target is None or not target.token:
        return None
    cause = error.__cause__ if isinstance(error, CliError) else error
    if isinstance(error, CliError) and error.code == AUTH:
        return None  # already an authentication failure, in its own words
    if not isinstance(cause, sdk.WasdiError) or isinstance(cause, sdk.APIConnectionError):
        return None
    if getattr(cause, "code", None) == "MSG_ERROR_INVALID_SESSION":
        return session_not_valid(target)
    try:
        with make_client(target.base_url, target.token) as checker:
            checker.auth.check_session()
    except (sdk.AuthenticationError, sdk.EmptyResultError):
        return session_not_valid(target)
    except sdk.WasdiError:
        return None  # the check itself failed: the first error says more
    return None
