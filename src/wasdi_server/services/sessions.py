"""Sessions: unguessable tokens stored server side, with a sliding idle expiry."""

from __future__ import annotations

import threading
import time
from typing import Any

from ..store import Collection
from .identity import ADMIN, User, UserService
from .passwords import new_token

TOUCH_EVERY_SECONDS = 60.0
"""A session's last use is written at most this often, so reads do not all become writes."""
DISABLED_AUTH_USER = "user"


class SessionService:
    """The ``sessions`` collection: ``{sessionId, userId, loginDate, lastTouch}`` (epoch ms)."""

    def __init__(self, sessions: Collection, users: UserService, idle_hours: float,
                 disable_authentication: bool = False) -> None:
        self.sessions = sessions
        self.users = users
        self.idle_ms = idle_hours * 3600 * 1000
        self.disable_authentication = disable_authentication
        self._user_cache: dict[str, tuple[float, User]] = {}
        self._lock = threading.Lock()

    def open(self, user_id: str) -> str:
        """A new session for ``user_id``; the user's expired sessions are removed."""
        stamp = time.time() * 1000
        limit = stamp - self.idle_ms
        self.sessions.delete_where(lambda d: d.get("lastTouch", 0) < limit, userId=user_id)
        token = new_token()
        self.sessions.insert({"sessionId": token, "userId": user_id, "loginDate": stamp, "lastTouch": stamp})
        return token

    def close(self, token: str | None) -> bool:
        """Delete the session record; whether there was one."""
        if not token:
            return False
        with self._lock:
            self._user_cache.pop(token, None)
        return self.sessions.delete(token)

    def resolve(self, token: str | None) -> User | None:
        """The active user behind ``token``, or ``None`` (unknown, expired, or user inactive)."""
        if self.disable_authentication:
            return self._disabled_auth_user() if token else None
        if not token or len(token) > 256:
            return None
        record = self.sessions.get(token)
        if record is None:
            return None
        stamp = time.time() * 1000
        if record.get("lastTouch", 0) < stamp - self.idle_ms:
            self.sessions.delete(token)
            return None
        if stamp - record.get("lastTouch", 0) > TOUCH_EVERY_SECONDS * 1000:
            self.sessions.update(token, {"lastTouch": stamp})
        return self._user(token, record["userId"])

    def _user(self, token: str, user_id: str) -> User | None:
        # Users change rarely; a short cache keeps one store read off every request.
        now = time.monotonic()
        with self._lock:
            cached = self._user_cache.get(token)
        if cached and now - cached[0] < 5.0:
            return cached[1]
        user = self.users.active_user(user_id)
        with self._lock:
            if user is None:
                self._user_cache.pop(token, None)
            else:
                self._user_cache[token] = (now, user)
        return user

    def delete_all_of_user(self, user_id: str) -> None:
        """End every session of the user."""
        self.sessions.delete_where(userId=user_id)
        self.forget_user(user_id)

    def forget_user(self, user_id: str) -> None:
        """Drop cached copies of a user after their record changed."""
        with self._lock:
            for token in [t for t, (_, u) in self._user_cache.items() if u.user_id == user_id]:
                del self._user_cache[token]

    def _disabled_auth_user(self) -> User:
        return User(user_id=DISABLED_AUTH_USER, name="user", surname="user", role=ADMIN)

    def session_info(self, token: str) -> dict[str, Any] | None:
        return self.sessions.get(token)
