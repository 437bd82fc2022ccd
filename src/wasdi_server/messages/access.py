"""Who is listening, and whether they may hear a workspace: the built-in broker's only rules.

A connection is somebody's when its STOMP ``passcode`` is a valid session token (what the SDK sends), or
when its WebSocket handshake carries the session cookie from a page of this server's exact origin (scheme,
host and port of ``public_url``; without one, the API's port on the host the browser reached), or of an
origin the operator allows (WASDI's web client, which sends the fixed credentials of its configuration).
Another web application on the same host, at another port, gets nothing from the cookie.  A subscription to
a workspace is allowed when that user may read it now; both are checked again while the connection lasts,
so a logout, a removed sharing or a deleted workspace ends what it allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..domains.accounts.sessions import token_from_cookies

if TYPE_CHECKING:
    from ..domains.accounts.identity import User
    from ..domains.accounts.sessions import SessionService
    from ..domains.workspaces.workspaces import WorkspaceService


DEFAULT_PORTS = {"http": 80, "https": 443}


def origin_of(url: str) -> str | None:
    """The origin of ``url`` as a browser writes it (``scheme://host[:port]``, lower case, no default port), or
    ``None`` for anything that is not an http(s) address."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
    if scheme not in DEFAULT_PORTS or not host:
        return None
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}" if port in (None, DEFAULT_PORTS[scheme]) else f"{scheme}://{shown}:{port}"


@dataclass(frozen=True)
class Handshake:
    """What the WebSocket upgrade request said that matters here."""

    host: str = ""
    origin: str | None = None
    cookie: str | None = None


class Gatekeeper:
    def __init__(self, sessions: SessionService, workspaces: WorkspaceService,
                 allowed_origins: list[str] | None = None, *, public_url: str = "", api_port: int = 8080) -> None:
        self.sessions = sessions
        self.workspaces = workspaces
        self.allowed_origins = {origin_of(o) or o.rstrip("/").lower() for o in allowed_origins or [] if o != "*"}
        self.public_origin = origin_of(public_url) if public_url else None
        """The origin of the server's pages (``public_url``); unset: the API's port on the host reached."""
        self.api_port = api_port

    def own_origin(self, handshake: Handshake) -> str | None:
        """The origin of this server's own pages: ``public_url``'s, or else the API (http, its port) on the host
        the browser reached the broker at."""
        if self.public_origin is not None:
            return self.public_origin
        try:
            host = urlsplit("//" + handshake.host).hostname
        except ValueError:
            return None
        if not host:
            return None
        return origin_of(f"http://[{host}]:{self.api_port}" if ":" in host else f"http://{host}:{self.api_port}")

    def cookie_token(self, handshake: Handshake) -> str | None:
        """The session cookie, when a browser sent it from this server's own pages (the exact origin: scheme,
        host and port, of ``own_origin``) or from an origin the operator allows (``cors_allow_origins``); else
        nothing."""
        token = token_from_cookies(handshake.cookie)
        if token is None:
            return None
        if handshake.origin is not None:
            origin = origin_of(handshake.origin)
            if origin is None or (origin not in self.allowed_origins and origin != self.own_origin(handshake)):
                return None
        return token

    def identify(self, passcode: str | None, handshake: Handshake) -> tuple[User, str] | None:
        """The user behind a connection and the token that proved it (the passcode first, then the cookie)."""
        for token in (passcode, self.cookie_token(handshake)):
            if token:
                user = self.sessions.resolve(token)
                if user is not None:
                    return user, token
        return None

    def still_valid(self, token: str) -> User | None:
        return self.sessions.resolve(token)

    def may_read(self, user: User, workspace_id: str) -> bool:
        return self.workspaces.may_read(user, workspace_id)
