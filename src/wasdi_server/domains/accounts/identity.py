"""Users: the local identity provider, registration and validation, profile and passwords."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Any

from ...background import BackgroundJobs
from ...dates import java_date_text, now_ms
from ...errors import BadRequest, NotFound, NotModified, ServerFailure
from ...providers.mail import Mailer, send_quietly
from ...store import Collection, DuplicateKeyError
from .passwords import (
    dummy_hash,
    hash_password,
    hash_secret,
    needs_rehash,
    password_problem,
    random_password,
    verify_password,
    verify_secret,
)

ADMIN = "ADMIN"
ROLES = ("ADMIN", "DEVELOPER", "USER")
LOCAL_PROVIDER = "wasdi"
USER_ID_PATTERN = re.compile(r"^[^\s/\\]{2,254}$")
EMAIL_PATTERN = re.compile(r"^[^@\s/\\]+@[^@\s/\\]+\.[^@\s/\\]+$")
MAX_TEXT = 1000
RESET_MAIL_EVERY_SECONDS = 300.0
"""One account gets at most one lost-password mail in this time, so nobody can flood a mailbox."""
RESET_VALID_SECONDS = 7 * 24 * 3600.0
"""A mailed password not used within this time is dropped (the old one keeps working meanwhile)."""


def _scrypt_hash(stored: Any) -> str | None:
    """A stored hash this server can check (an identity-provider account has none)."""
    return stored if isinstance(stored, str) and stored.startswith("scrypt$") else None


@dataclass(frozen=True)
class Authenticated:
    """A successful password check: the account, and whether a mailed reset password just replaced the old one."""

    doc: dict[str, Any]
    password_replaced: bool = False


@dataclass(frozen=True)
class User:
    """An authenticated user, as services see it."""

    user_id: str
    name: str = ""
    surname: str = ""
    role: str = "USER"
    public_nick_name: str = ""
    skin: str = "wasdi"
    default_node: str = ""
    auth_provider: str = LOCAL_PROVIDER

    @property
    def is_admin(self) -> bool:
        return self.role == ADMIN

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> User:
        return cls(user_id=doc["userId"], name=doc.get("name") or "", surname=doc.get("surname") or "",
                   role=doc.get("role") or "USER", public_nick_name=doc.get("publicNickName") or "",
                   skin=doc.get("skin") or "wasdi", default_node=doc.get("defaultNode") or "",
                   auth_provider=doc.get("authProvider") or LOCAL_PROVIDER)


def normalise_user_id(user_id: str | None) -> str:
    """User ids are e-mail-like and case-insensitive: stored lower case, trimmed."""
    return (user_id or "").strip().lower()


def valid_email(address: str | None) -> bool:
    return bool(address) and len(address or "") <= 254 and EMAIL_PATTERN.match(address or "") is not None


class UserService:
    """The ``users`` collection and everything about accounts."""

    def __init__(self, users: Collection, mailer: Mailer, public_url: str = "") -> None:
        self.users = users
        self.mailer = mailer
        self.public_url = public_url
        self.later = BackgroundJobs("lost-password-mail")
        """Where the lost-password mails are written and sent, after the answer."""

    # -- lookups -------------------------------------------------------------------------------
    def get(self, user_id: str) -> dict[str, Any] | None:
        return self.users.get(normalise_user_id(user_id))

    def exists(self, user_id: str) -> bool:
        return self.get(user_id) is not None

    def active_user(self, user_id: str) -> User | None:
        doc = self.get(user_id)
        return User.from_doc(doc) if doc and doc.get("active") else None

    # -- accounts ------------------------------------------------------------------------------
    def add(self, user_id: str, password: str, *, admin: bool = False, name: str = "", surname: str = "",
            active: bool = True) -> dict[str, Any]:
        """Create an account directly (the management command; the REST contract has no such call)."""
        uid = normalise_user_id(user_id)
        if not USER_ID_PATTERN.match(uid):
            raise BadRequest(f"invalid user id {user_id!r}")
        problem = password_problem(password)
        if problem:
            raise BadRequest(problem)
        doc = self._new_doc(uid, password, name, surname, active=active, role=ADMIN if admin else "USER")
        try:
            return self.users.insert(doc)
        except DuplicateKeyError as e:
            raise BadRequest(f"user {uid} already exists") from e

    def _new_doc(self, uid: str, password: str, name: str, surname: str, *, active: bool,
                 role: str) -> dict[str, Any]:
        stamp = now_ms()
        return {
            "userId": uid, "name": name, "surname": surname, "passwordHash": hash_password(password),
            "active": active, "role": role, "authProvider": LOCAL_PROVIDER, "validationCode": None,
            "registrationDate": stamp, "confirmationDate": stamp if active else None, "lastLogin": None,
            "link": "", "description": "", "publicNickName": "", "defaultNode": "", "skin": "wasdi",
            "activeProjectId": None, "activeSubscriptionId": None,
        }

    def register(self, user_id: str | None, password: str | None, name: str | None, surname: str | None,
                 validation_url: str) -> str:
        """Create an inactive account and mail its validation code; the code."""
        uid = normalise_user_id(user_id)
        if not uid:
            raise BadRequest("userId is required")
        if not valid_email(uid):
            raise BadRequest("userId must be an e-mail address")
        problem = password_problem(password)
        if problem:
            raise BadRequest(problem)
        if len(name or "") > MAX_TEXT or len(surname or "") > MAX_TEXT:
            raise BadRequest("name or surname too long")
        code = str(uuid.uuid4())
        doc = self._new_doc(uid, password or "", name or "", surname or "", active=False, role="USER")
        doc["validationCode"] = code
        try:
            self.users.insert(doc)
        except DuplicateKeyError as e:
            raise NotModified("the user is already registered") from e
        link = f"{validation_url}?email={uid}&validationCode={code}"
        if not send_quietly(self.mailer, uid, "Welcome to WASDI: confirm your account",
                            f"Welcome to WASDI.\n\nYour validation code is: {code}\n\n"
                            f"Confirm your account by opening:\n{link}\n"):
            self.users.delete(uid)
            raise ServerFailure("the validation e-mail could not be sent")
        return code

    def validate(self, email: str | None, code: str | None) -> dict[str, Any]:
        """Activate the account whose pending code is ``code``."""
        uid = normalise_user_id(email)
        doc = self.users.get(uid) if uid else None
        if doc is None or doc.get("active") or not code or doc.get("validationCode") != code.strip():
            raise BadRequest("invalid user or validation code")
        updated = self.users.update(uid, {"active": True, "validationCode": None, "confirmationDate": now_ms()})
        if updated is None:
            raise NotFound("user not found")
        return updated

    def authenticate(self, user_id: str | None, password: str | None) -> Authenticated | None:
        """The active account these credentials open, or ``None``.

        A password mailed by ``reset_password`` also opens it: its first use replaces the old password.
        A hash made with older scrypt parameters is replaced by one with today's.  Every attempt costs the same
        work whether the account exists, is active or has a reset pending (an unknown account is checked
        against a dummy hash, a missing reset against a dummy secret), so neither the answer nor its time says
        which.  (A reset mailed by a version that stored it with scrypt no longer opens the account: it is
        asked for again; the old password works meanwhile.)
        """
        uid = normalise_user_id(user_id)
        doc = self.users.get(uid) if uid else None
        usable = doc if doc is not None and doc.get("active") else None
        given = password or ""
        current = _scrypt_hash(usable.get("passwordHash")) if usable else None
        if verify_password(given, current or dummy_hash()) and current and usable:
            if needs_rehash(current):
                usable = self.users.update(uid, {"passwordHash": hash_password(given)}) or usable
            return Authenticated(usable)
        pending = str(usable.get("resetPasswordHash") or "") if usable else ""
        if usable and now_ms() - float(usable.get("resetDate") or 0) >= RESET_VALID_SECONDS * 1000:
            pending = ""
        if verify_secret(given, pending) and usable:
            usable = self.users.update(uid, {"passwordHash": hash_password(given), "resetPasswordHash": None}) \
                or usable
            return Authenticated(usable, password_replaced=True)
        return None

    def record_login(self, user_id: str) -> None:
        self.users.update(user_id, {"lastLogin": java_date_text()})

    def edit_details(self, user: User, changes: dict[str, Any]) -> dict[str, Any]:
        """Profile edit: name and surname must stay non-empty; texts are bounded."""
        allowed = {k: v for k, v in changes.items()
                   if k in ("name", "surname", "link", "description", "publicNickName") and v is not None}
        for key in ("name", "surname"):
            if key in allowed and not str(allowed[key]).strip():
                raise BadRequest(f"{key} cannot be empty")
        if any(len(str(v)) > MAX_TEXT for v in allowed.values()):
            raise BadRequest("a field is too long")
        updated = self.users.update(user.user_id, allowed)
        if updated is None:
            raise BadRequest("unknown user")
        return updated

    def change_password(self, user: User, current: str | None, new: str | None) -> None:
        doc = self.users.get(user.user_id)
        if doc is None or password_problem(current) or password_problem(new):
            raise BadRequest("both passwords must be at least 8 characters long")
        if not verify_password(current or "", doc.get("passwordHash")):
            raise BadRequest("wrong current password")
        self.users.update(user.user_id, {"passwordHash": hash_password(new or ""), "resetPasswordHash": None})

    def reset_password(self, user_id: str | None) -> None:
        """Lost password: a new random password, stored hashed beside the current one and mailed.

        The current password keeps working until the mailed one is first used (``authenticate``), so a
        stranger asking for a reset cannot lock anyone out; one mail per account per few minutes.  An unknown
        account gets the same answer in the same time: the new password is hashed either way, and the store
        write and the mail happen after the answer (``BackgroundJobs``), so nothing tells whether one was sent.
        """
        uid = normalise_user_id(user_id)
        if not uid or not EMAIL_PATTERN.match(uid):
            raise BadRequest("Bad Request")
        password = random_password()
        hashed = hash_secret(password)
        if self.users.get(uid) is not None:
            self.later.submit(lambda: self._mail_reset(uid, password, hashed))

    def _mail_reset(self, uid: str, password: str, hashed: str) -> None:
        doc = self.users.get(uid)
        stamp = now_ms()
        if doc is None or stamp - float(doc.get("resetMailDate") or 0) < RESET_MAIL_EVERY_SECONDS * 1000:
            return  # the mail sent moments ago is still valid
        previous = {k: doc.get(k) for k in ("resetPasswordHash", "resetDate", "resetMailDate")}
        self.users.update(uid, {"resetPasswordHash": hashed, "resetDate": stamp, "resetMailDate": stamp})
        if not send_quietly(self.mailer, uid, "WASDI Password Recovery",
                            f"Your WASDI password has been reset.\n\nUSER: {uid} - PASSWORD: {password}\n\n"
                            "Your previous password keeps working until you log in with this one. "
                            "Change it after logging in."):
            self.users.update(uid, previous)

    def set_active_project(self, user_id: str, project_id: str | None, subscription_id: str | None) -> None:
        self.users.update(user_id, {"activeProjectId": project_id, "activeSubscriptionId": subscription_id})

    def display_name(self, doc: dict[str, Any]) -> str:
        return str(doc.get("publicNickName") or doc.get("name") or doc.get("userId"))

