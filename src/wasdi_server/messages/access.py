"""Who is listening, and whether they may hear a workspace: the built-in broker's only rules.

A connection is somebody's when its STOMP ``passcode`` is a valid session token (what the SDK sends), or
when its WebSocket handshake carries the session cookie from a page of this server's origin (WASDI's web
client, which sends the fixed credentials of its configuration).  A subscription to a workspace is allowed
when that user may read it now; both are checked again while the connection lasts, so a logout, a removed
sharing or a deleted workspace ends what it allowed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..services.sessions import token_from_cookies

if TYPE_CHECKING:
    from ..services.identity import User
    from ..services.sessions import SessionService
    from ..services.workspaces import WorkspaceService


def _hostname(value: str) -> str:
    """The host of a ``Host`` header or an origin, without port or brackets, lower case."""
    netloc = urlsplit(value).netloc if "://" in value else value
    return (urlsplit("//" + netloc).hostname or "").lower()


@dataclass(frozen=True)
class Handshake:
    """What the WebSocket upgrade request said that matters here."""

    host: str = ""
    origin: str | None = None
    cookie: str | None = None


class Gatekeeper:
    def __init__(self, sessions: SessionService, workspaces: WorkspaceService,
                 allowed_origins: list[str] | None = None) -> None:
        self.sessions = sessions
        self.workspaces = workspaces
        self.allowed_origins = {o.rstrip("/").lower() for o in allowed_origins or [] if o != "*"}

    def cookie_token(self, handshake: Handshake) -> str | None:
        """The session cookie, when a browser sent it from this server's own pages (same host, any port) or
        from an origin the operator allows (``cors_allow_origins``); else nothing."""
        token = token_from_cookies(handshake.cookie)
        if token is None:
            return None
        if handshake.origin is not None:
            origin = handshake.origin.rstrip("/").lower()
            if origin not in self.allowed_origins and _hostname(origin) != _hostname(handshake.host):
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
