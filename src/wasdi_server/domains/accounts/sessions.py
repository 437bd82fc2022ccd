"""Sessions: unguessable tokens, stored server side only as digests, with a sliding idle expiry."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ...bounded_cache import BoundedCache
from ...dates import now_ms
from ...store import Collection
from .identity import ADMIN, User, UserService
from .passwords import new_token

TOUCH_EVERY_SECONDS = 60.0
"""A session's last use is written at most this often, so reads do not all become writes."""
USER_CACHE_SECONDS = 5.0
USER_CACHE_SIZE = 10_000
"""At most this many sessions keep a cached user: memory stays bounded whatever the number of sessions."""
DISABLED_AUTH_USER = "user"
DIGEST_PATTERN = re.compile(r"^[0-9a-f]{64}$")
SESSION_COOKIE = "wasdi_session"
"""The cookie that carries the session where a browser sends no header: map tiles (``/wms``) and the
built-in broker's WebSocket, and a notebook's pages (``/notebook/``).  Set at login (HttpOnly, SameSite=Strict),
ended at logout; nothing else accepts it."""


def token_from_cookies(header: str | None) -> str | None:
    """The session token in a ``Cookie`` header, if there is one."""
    if not header or SESSION_COOKIE not in header:
        return None
    from http.cookies import CookieError, SimpleCookie

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(header)
    except CookieError:
        return None
    morsel = jar.get(SESSION_COOKIE)
    return (morsel.value or None) if morsel is not None else None


def token_digest(token: str) -> str:
    """The key a session is stored under: a leaked sessions file opens no session.

    Tokens carry 256 random bits, so a fast unsalted hash is enough (nothing to guess offline).
    """
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class SessionService:
    """The ``sessions`` collection: ``{sessionId: sha256(token), userId, loginDate, lastTouch}`` (epoch ms),
    plus ``scope`` for the session of an app run (``services.run_scope``)."""

    def __init__(self, sessions: Collection, users: UserService, idle_hours: float,
                 disable_authentication: bool = False) -> None:
        self.sessions = sessions
        self.users = users
        self.idle_ms = idle_hours * 3600 * 1000
        self.disable_authentication = disable_authentication
        # Users change rarely; a short cache keeps one store read off every request.
        self._user_cache: BoundedCache[str, User] = BoundedCache(USER_CACHE_SIZE, ttl=USER_CACHE_SECONDS)
        self._digest_clear_tokens()

    def _digest_clear_tokens(self) -> None:
        # Data directories written before digests stored the tokens themselves: re-key them once.
        for record in self.sessions.find(lambda d: not DIGEST_PATTERN.match(str(d.get("sessionId", "")))):
            clear = str(record["sessionId"])
            self.sessions.upsert({**record, "sessionId": token_digest(clear)})
            self.sessions.delete(clear)

    def open(self, user_id: str, scope: dict[str, Any] | None = None) -> str:
        """A new session for ``user_id`` (narrowed to ``scope`` for an app run); the user's expired sessions
        are removed."""
        stamp = now_ms()
        limit = stamp - self.idle_ms
        self.sessions.delete_where(lambda d: d.get("lastTouch", 0) < limit, userId=user_id)
        token = new_token()
        record = {"sessionId": token_digest(token), "userId": user_id, "loginDate": stamp, "lastTouch": stamp}
        if scope is not None:
            record["scope"] = dict(scope)
        self.sessions.insert(record)
        return token

    def close(self, token: str | None) -> bool:
        """Delete the session record; whether there was one."""
        if not token or len(token) > 256:
            return False
        key = token_digest(token)
        self._user_cache.pop(key, None)
        return self.sessions.delete(key)

    def end_all_of_user(self, user_id: str, *, keep: str | None = None) -> int:
        """End every session of ``user_id`` except the one whose token is ``keep``; how many ended.

        Called when the password changes or is reset, and when the account is disabled or deleted.
        """
        kept = token_digest(keep) if keep else None
        ended = self.sessions.delete_where(lambda d: d.get("sessionId") != kept, userId=user_id)
        self._user_cache.discard_where(lambda k, u: u.user_id == user_id and k != kept)
        return ended

    def resolve(self, token: str | None) -> User | None:
        """The active user behind ``token``, or ``None`` (unknown, expired, user inactive, or the scoped
        session of an app run: only ``resolve_scoped`` callers enforce a scope)."""
        found = self.resolve_scoped(token)
        return found[0] if found is not None and found[1] is None else None

    def resolve_scoped(self, token: str | None) -> tuple[User, dict[str, Any] | None] | None:
        """The active user behind ``token`` and the session's scope (``None``: the whole account)."""
        if self.disable_authentication:
            return (self._disabled_auth_user(), None) if token else None
        if not token or len(token) > 256:
            return None
        key = token_digest(token)
        record = self.sessions.get(key)
        if record is None:
            self._user_cache.pop(key, None)
            return None
        stamp = now_ms()
        if record.get("lastTouch", 0) < stamp - self.idle_ms:
            self.sessions.delete(key)
            self._user_cache.pop(key, None)
            return None
        if stamp - record.get("lastTouch", 0) > TOUCH_EVERY_SECONDS * 1000:
            self.sessions.update(key, {"lastTouch": stamp})
        user = self._user(key, record["userId"])
        if user is None:
            return None
        scope = record.get("scope")
        return user, dict(scope) if isinstance(scope, dict) else None

    def _user(self, key: str, user_id: str) -> User | None:
        cached = self._user_cache.get(key)
        if cached is not None:
            return cached
        user = self.users.active_user(user_id)
        if user is None:
            self._user_cache.pop(key, None)
        else:
            self._user_cache.put(key, user)
        return user

    def delete_all_of_user(self, user_id: str) -> None:
        """End every session of the user."""
        self.sessions.delete_where(userId=user_id)
        self.forget_user(user_id)
    def cached_count(self) -> int:
        return len(self._user_cache)

    def forget_user(self, user_id: str) -> None:
        """Drop cached copies of a user after their record changed."""
        self._user_cache.discard_where(lambda _key, user: user.user_id == user_id)

    def _disabled_auth_user(self) -> User:
        return User(user_id=DISABLED_AUTH_USER, name="user", surname="user", role=ADMIN)

    def session_info(self, token: str) -> dict[str, Any] | None:
        return self.sessions.get(token_digest(token))
