"""How downloads from a data provider authenticate (``DownloadAuth``), from the operator's settings:

- ``OidcPasswordToken``: an OpenID Connect password grant (Copernicus Data Space: client ``cdse-public``), the
  access token sent as ``Authorization: Bearer`` to the provider's own download hosts and to no other host (a
  redirect elsewhere goes without it), refreshed with the refresh token before it expires, and asked again with
  the password when the refresh token has expired too;
- ``SasSigner``: Planetary Computer's signed links: ``GET <sign_url>?href=<asset>`` answers the asset's URL with a
  shared-access token in its query; the token of a storage container is reused for its other files until shortly
  before its ``msft:expiry``.

Secrets (password, tokens, signed queries) never reach a log, a message or a ``repr``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ...dates import parse_utc

log = logging.getLogger("wasdi_server.search.credentials")

EARLY_SECONDS = 60.0
"""A token is renewed this long before it expires (a download may take a while to start)."""


class CredentialsError(Exception):
    """The provider refused the credentials, or its token service did not answer."""


def host_matches(url: str, hosts: Sequence[str]) -> bool:
    """Whether ``url`` is on one of ``hosts`` (a name, or ``.suffix`` for a domain and its sub-domains)."""
    host = (urlsplit(url).hostname or "").lower()
    for wanted in hosts:
        wanted = wanted.strip().lower()
        if wanted.startswith(".") and (host.endswith(wanted) or host == wanted[1:]):
            return True
        if host == wanted:
            return True
    return False


class OidcPasswordToken:
    """A bearer token from an OpenID Connect token endpoint (password grant, refreshed), for ``hosts`` only."""

    def __init__(self, token_url: str, client_id: str, username: str, password: str, hosts: Sequence[str], *,
                 timeout: float = 20.0, clock: Callable[[], float] = time.monotonic,
                 transport: httpx.BaseTransport | None = None) -> None:
        if not (token_url and username and password and hosts):
            raise ValueError("an OIDC download token needs token_url, username, password and auth_hosts")
        self.token_url = token_url
        self.client_id = client_id
        self.username = username
        self._password = password
        self.hosts = tuple(hosts)
        self.timeout = timeout
        self.clock = clock
        self.transport = transport
        self._lock = threading.Lock()
        self._access: str | None = None
        self._access_until = 0.0
        self._refresh: str | None = None
        self._refresh_until = 0.0

    def __repr__(self) -> str:
        return f"OidcPasswordToken({self.token_url!r}, user={self.username!r}, hosts={self.hosts!r})"

    def serves(self, url: str) -> bool:
        return host_matches(url, self.hosts)

    def signed_url(self, url: str) -> str:
        return url

    def headers_for(self, url: str) -> dict[str, str]:
        if not host_matches(url, self.hosts):
            return {}
        return {"Authorization": f"Bearer {self.token()}"}

    def token(self) -> str:
        """A valid access token: the one held, refreshed, or a new one."""
        with self._lock:
            now = self.clock()
            if self._access and now < self._access_until - EARLY_SECONDS:
                return self._access
            answer = None
            if self._refresh and now < self._refresh_until - EARLY_SECONDS:
                try:
                    answer = self._ask({"grant_type": "refresh_token", "refresh_token": self._refresh})
                except CredentialsError as e:
                    log.info("refreshing the download token at %s failed (%s): logging in again", self.token_url, e)
            if answer is None:
                answer = self._ask({"grant_type": "password", "username": self.username, "password": self._password})
            access = answer.get("access_token")
            if not isinstance(access, str) or not access:
                raise CredentialsError(f"{self.token_url} answered no access_token")
            self._access = access
            self._access_until = now + _seconds(answer.get("expires_in"), 300)
            refresh = answer.get("refresh_token")
            self._refresh = refresh if isinstance(refresh, str) and refresh else None
            self._refresh_until = now + _seconds(answer.get("refresh_expires_in"), 0)
            return access

    def _ask(self, form: dict[str, str]) -> dict[str, Any]:
        try:
            with httpx.Client(timeout=self.timeout, transport=self.transport) as client:
                response = client.post(self.token_url, data={"client_id": self.client_id, **form})
        except httpx.HTTPError as e:
            raise CredentialsError(f"cannot reach {self.token_url}: {type(e).__name__}") from e
        if response.status_code != 200:
            # the body may name the user, never the password: keep only the OAuth error code
            code = _error_code(response)
            raise CredentialsError(f"{self.token_url} refused the credentials of {self.username} "
                                   f"({response.status_code}{': ' + code if code else ''})")
        try:
            answer = response.json()
        except ValueError as e:
            raise CredentialsError(f"{self.token_url} did not answer JSON") from e
        if not isinstance(answer, dict):
            raise CredentialsError(f"{self.token_url} did not answer a token")
        return answer


class SasSigner:
    """Planetary Computer's signed links: the asset's URL with a shared-access token for its container."""

    def __init__(self, sign_url: str, hosts: Sequence[str], *, timeout: float = 20.0,
                 clock: Callable[[], float] = time.time, transport: httpx.BaseTransport | None = None) -> None:
        if not sign_url or not hosts:
            raise ValueError("signed links need sign_url and auth_hosts")
        self.sign_url = sign_url
        self.hosts = tuple(hosts)
        self.timeout = timeout
        self.clock = clock
        self.transport = transport
        self._lock = threading.Lock()
        self._tokens: dict[tuple[str, str], tuple[str, float]] = {}

    def __repr__(self) -> str:
        return f"SasSigner({self.sign_url!r}, hosts={self.hosts!r})"

    def serves(self, url: str) -> bool:
        return host_matches(url, self.hosts)

    def headers_for(self, url: str) -> dict[str, str]:
        return {}

    def signed_url(self, url: str) -> str:
        parts = urlsplit(url)
        if not host_matches(url, self.hosts) or parts.query:
            return url
        container = (parts.hostname or "", parts.path.lstrip("/").split("/", 1)[0])
        with self._lock:
            held = self._tokens.get(container)
            if held is None or self.clock() >= held[1] - EARLY_SECONDS:
                held = self._sign(url)
                self._tokens[container] = held
        return urlunsplit((parts.scheme, parts.netloc, parts.path, held[0], ""))

    def _sign(self, url: str) -> tuple[str, float]:
        try:
            with httpx.Client(timeout=self.timeout, transport=self.transport) as client:
                response = client.get(self.sign_url, params={"href": url})
        except httpx.HTTPError as e:
            raise CredentialsError(f"cannot reach {self.sign_url}: {type(e).__name__}") from e
        if response.status_code != 200:
            raise CredentialsError(f"{self.sign_url} answered {response.status_code}")
        try:
            answer = response.json()
            signed = urlsplit(str(answer["href"]))
        except (ValueError, KeyError, TypeError) as e:
            raise CredentialsError(f"{self.sign_url} did not answer a signed href") from e
        if not signed.query:
            raise CredentialsError(f"{self.sign_url} answered an href without a token")
        return signed.query, _expiry(answer.get("msft:expiry"), self.clock() + 3600)


def _seconds(value: Any, default: float) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 else default


def _expiry(value: Any, default: float) -> float:
    if isinstance(value, str):
        try:
            return parse_utc(value).timestamp()
        except ValueError:
            return default
    return default


def _error_code(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    code = body.get("error") if isinstance(body, dict) else None
    return str(code)[:60] if isinstance(code, str) else ""
