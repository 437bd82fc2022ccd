"""Which server, which session: the profile, the environment and the flags, resolved once.

Tests replace ``make_client`` (``monkeypatch.setattr(connection, "make_client", ...)``) to drive
an in-process server; commands always go through ``connect``/``make_client`` of this module.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import AUTH, CliError
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
    from wasdi_sdk import WasdiClient

    return WasdiClient(base_url=base_url, session_token=token)


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


def resolve(profile: str | None = None, base_url: str | None = None) -> Target:
    """Base URL: flag > ``WASDI_BASE_URL`` > profile > ``http://127.0.0.1:8080``.

    Session: ``WASDI_SESSION_TOKEN`` > profile.  The profile's token is only used for the
    server it was issued by, so ``--base-url`` pointing elsewhere never receives it.
    """
    profiles = ProfileFile.load()
    current = profiles.get(active_profile_name(profile, profiles))
    url = base_url or os.environ.get(ENV_BASE_URL) or current.base_url or DEFAULT_BASE_URL
    url = normalize_url(url)
    token: str | None = os.environ.get(ENV_SESSION_TOKEN) or None
    source: str | None = "env" if token else None
    if token is None and current.session_token and (
            current.base_url is None or normalize_url(current.base_url) == url):
        token, source = current.session_token, "profile"
    return Target(profiles, current, url, token, source)


def connect(target: Target, *, require_session: bool = True) -> WasdiClient:
    """The client for ``target``; exit 4 with a hint when a session is needed and there is none."""
    if require_session and not target.token:
        where = target.base_url
        command = "wasdi login" + ("" if target.profile_name == "default" else f" --profile {target.profile_name}")
        if target.profile.session_token and target.profile.base_url:
            raise CliError(f"not logged in to {where}: profile '{target.profile_name}' holds a session for "
                           f"{target.profile.base_url}; run '{command} --base-url {where}'", AUTH)
        raise CliError(f"not logged in to {where} (profile '{target.profile_name}'); run '{command}'", AUTH)
    return make_client(target.base_url, target.token)


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
            raise CliError("the session is not valid any more (expired or logged out): run 'wasdi login'",
                           AUTH) from e
    return items


def client(profile: str | None = None, base_url: str | None = None) -> WasdiClient:
    """The SDK client of the resolved server and session (flags, environment, profile)."""
    return connect(resolve(profile, base_url))
