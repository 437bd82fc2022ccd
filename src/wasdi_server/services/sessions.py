"""Sessions: unguessable tokens, stored server side only as digests, with a sliding idle expiry."""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections import OrderedDict
from typing import Any

from ..store import Collection
from .identity import ADMIN, User, UserService
from .passwords import new_token

TOUCH_EVERY_SECONDS = 60.0
"""A session's last use is written at most this often, so reads do not all become writes."""
USER_CACHE_SECONDS = 5.0
USER_CACHE_SIZE = 10_000
"""At most this many sessions keep a cached user: memory stays bounded whatever the number of sessions."""
DISABLED_AUTH_USER = "user"
DIGEST_PATTERN = re.compile(r"^[0-9a-f]{64}$")


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
        self._user_cache: OrderedDict[str, tuple[float, User]] = OrderedDict()
        self._lock = threading.Lock()
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
        stamp = time.time() * 1000
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
        with self._lock:
            self._user_cache.pop(key, None)
        return self.sessions.delete(key)

    def end_all_of_user(self, user_id: str, *, keep: str | None = None) -> int:
        """End every session of ``user_id`` except the one whose token is ``keep``; how many ended.

        Called when the password changes or is reset, and when the account is disabled or deleted.
        """
        kept = token_digest(keep) if keep else None
        ended = self.sessions.delete_where(lambda d: d.get("sessionId") != kept, userId=user_id)
        with self._lock:
            for key in [k for k, (_, u) in self._user_cache.items() if u.user_id == user_id and k != kept]:
                del self._user_cache[key]
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
            with self._lock:
                self._user_cache.pop(key, None)
            return None
        stamp = time.time() * 1000
        if record.get("lastTouch", 0) < stamp - self.idle_ms:
            self.sessions.delete(key)
            with self._lock:
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
        # Users change rarely; a short cache keeps one store read off every request.
        now = time.monotonic()
        with self._lock:
            cached = self._user_cache.get(key)
        if cached and now - cached[0] < USER_CACHE_SECONDS:
            return cached[1]
        user = self.users.active_user(user_id)
        with self._lock:
            if user is None:
                self._user_cache.pop(key, None)
            else:
                self._user_cache[key] = (now, user)
                self._user_cache.move_to_end(key)
                self._evict(now)
        return user

    def delete_all_of_user(self, user_id: str) -> None:
        """End every session of the user."""
        self.sessions.delete_where(userId=user_id)
        self.forget_user(user_id)
    def _evict(self, now: float) -> None:
        # Oldest first: stale entries go, and the cache never holds more than USER_CACHE_SIZE.
        while self._user_cache:
            oldest_key, (stamp, _) = next(iter(self._user_cache.items()))
            if len(self._user_cache) <= USER_CACHE_SIZE and now - stamp < USER_CACHE_SECONDS:
                break
            del self._user_cache[oldest_key]

    def cached_count(self) -> int:
        with self._lock:
            return len(self._user_cache)

    def forget_user(self, user_id: str) -> None:
        """Drop cached copies of a user after their record changed."""
        with self._lock:
            for key in [k for k, (_, u) in self._user_cache.items() if u.user_id == user_id]:
                del self._user_cache[key]

    def _disabled_auth_user(self) -> User:
        return User(user_id=DISABLED_AUTH_USER, name="user", surname="user", role=ADMIN)

    def session_info(self, token: str) -> dict[str, Any] | None:
        return self.sessions.get(token_digest(token))
