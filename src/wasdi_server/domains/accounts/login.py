"""Logging in: throttled password checks, a new session, and the sessions a password change ends."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import Unauthorized
from .identity import User, UserService, normalise_user_id
from .login_throttle import LoginThrottle
from .sessions import SessionService

WRONG_CREDENTIALS = "wrong user or password"


@dataclass(frozen=True)
class Login:
    doc: dict[str, Any]
    token: str


class LoginService:
    def __init__(self, users: UserService, sessions: SessionService, throttle: LoginThrottle | None = None) -> None:
        self.users = users
        self.sessions = sessions
        self.throttle = throttle or LoginThrottle()

    def login(self, user_id: str | None, password: str | None, address: str) -> Login:
        """A new session for these credentials; ``Unauthorized`` when wrong or while throttled."""
        uid = normalise_user_id(user_id)
        self.throttle.check(uid, address)
        checked = self.users.authenticate(uid, password)
        if checked is None:
            self.throttle.failed(uid, address)
            raise Unauthorized(WRONG_CREDENTIALS)
        self.throttle.succeeded(uid, address)
        user_id = checked.doc["userId"]
        if checked.password_replaced:
            # The mailed password is now the password: whoever held a session under the old one is out.
            self.sessions.end_all_of_user(user_id)
        token = self.sessions.open(user_id)
        self.users.record_login(user_id)
        return Login(checked.doc, token)

    def change_password(self, user: User, current: str | None, new: str | None, session_id: str | None) -> None:
        """Change the password and end every other session of the user (this one stays open)."""
        self.users.change_password(user, current, new)
        self.sessions.end_all_of_user(user.user_id, keep=session_id)
