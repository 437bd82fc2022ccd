"""User administration: the admin console's list, summary, details, edit and delete of accounts.

Only admins (403 ``MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD`` for others).  An admin edits a user's
name, surname, role, description, link, preferred node, public nickname and registration date; the
rest of an account (password, validation, activity) is the user's own.  Deleting a user is
irreversible and durable (domains/accounts/user_deletion.py); an admin cannot delete their own account, so
that a console never locks its last operator out by a slip.
"""

from __future__ import annotations

from typing import Any

from ...dates import java_date_text, parse_any_ms
from ...errors import BadRequest
from ..accounts.identity import MAX_TEXT, ROLES, User, UserService, normalise_user_id
from ..accounts.sessions import SessionService
from ..accounts.user_deletion import UserDeletion
from ..commerce.organizations import OrganizationService
from ..commerce.subscription_records import DESCENDING
from ..commerce.subscriptions import SubscriptionService
from ..platform.nodes import NodeService
from .admin_lookups import require_admin

SORT_FIELDS = {"name": "name", "surname": "surname", "userid": "userId"}
TEXT_FIELDS = {"name": "name", "surname": "surname", "description": "description", "link": "link",
               "public_nick_name": "publicNickName"}
DEFAULT_LIMIT = 10
MAX_LIMIT = 1000
UNKNOWN_USER = "MSG_ERROR_INVALID_USER"


def date_text(value: Any) -> str | None:
    """A stored epoch-ms date as the text clients show (``None`` stays ``None``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return java_date_text(float(value))
    return str(value) if value else None


def parse_date_ms(text: str) -> float:
    """Epoch milliseconds from ``1700000000000``, an ISO 8601 date or the ``Tue Jul 02 17:17:26 UTC 2024`` form."""
    try:
        return parse_any_ms(text)
    except ValueError as e:
        raise BadRequest("registrationDate must be epoch milliseconds or an ISO 8601 date") from e


class AdminUsers:
    def __init__(self, users: UserService, sessions: SessionService, subscriptions: SubscriptionService,
                 organizations: OrganizationService, nodes: NodeService, deletion: UserDeletion) -> None:
        self.users = users
        self.sessions = sessions
        self.subscriptions = subscriptions
        self.organizations = organizations
        self.nodes = nodes
        self.deletion = deletion

    def _load(self, user_id: str | None) -> dict[str, Any]:
        uid = normalise_user_id(user_id)
        doc = self.users.get(uid) if uid else None
        if doc is None:
            raise BadRequest(UNKNOWN_USER)
        return doc

    def list_page(self, caller: User, partial: str | None, offset: int, limit: int, sorted_by: str | None,
                  order: str | None) -> list[dict[str, Any]]:
        """UserListViewModel fields of one sorted page (a bad offset or limit falls back to the defaults)."""
        require_admin(caller)
        text = (partial or "").strip().lower()
        docs = [d for d in self.users.users.all()
                if not text or any(text in str(d.get(f) or "").lower() for f in ("userId", "name", "surname"))]
        field = SORT_FIELDS.get((sorted_by or "").strip().lower(), "userId")
        descending = (order or "").strip().lower() in DESCENDING
        docs.sort(key=lambda d: (str(d.get(field) or "").lower(), d["userId"]), reverse=descending)
        start = max(offset, 0)
        size = limit if 0 < limit <= MAX_LIMIT else DEFAULT_LIMIT
        return [{"userId": d["userId"], "active": bool(d.get("active")),
                 "type": self.subscriptions.user_type(d["userId"]), "lastLogin": date_text(d.get("lastLogin")),
                 "name": d.get("name") or "", "surname": d.get("surname") or "",
                 "publicNickName": d.get("publicNickName") or ""} for d in docs[start:start + size]]

    def summary(self, caller: User) -> dict[str, Any]:
        """UsersSummaryViewModel fields: users by their subscription type, and organizations."""
        require_admin(caller)
        counts = {"NONE": 0, "FREE": 0, "STANDARD": 0, "PROFESSIONAL": 0}
        docs = self.users.users.all()
        for doc in docs:
            kind = self.subscriptions.user_type(doc["userId"])
            counts[kind] = counts.get(kind, 0) + 1
        return {"totalUsers": len(docs), "noneUsers": counts["NONE"], "freeUsers": counts["FREE"],
                "standardUsers": counts["STANDARD"], "proUsers": counts["PROFESSIONAL"],
                "organizations": self.organizations.organizations.count()}

    def details(self, caller: User, user_id: str | None) -> dict[str, Any]:
        """FullUserViewModel fields of one user."""
        require_admin(caller)
        doc = self._load(user_id)
        return {"userId": doc["userId"], "name": doc.get("name") or "", "surname": doc.get("surname") or "",
                "link": doc.get("link") or "", "type": self.subscriptions.user_type(doc["userId"]),
                "role": doc.get("role") or "USER", "active": bool(doc.get("active")),
                "defaultNode": doc.get("defaultNode") or "",
                "registrationDate": date_text(doc.get("registrationDate")),
                "confirmationDate": date_text(doc.get("confirmationDate")),
                "lastLogin": date_text(doc.get("lastLogin")), "description": doc.get("description") or "",
                "publicNickName": doc.get("publicNickName") or ""}

    def update(self, caller: User, fields: dict[str, Any]) -> None:
        """Edit the editable fields present (non-null) in ``fields`` (snake_case names of FullUserViewModel)."""
        require_admin(caller)
        doc = self._load(fields.get("user_id"))
        changes: dict[str, Any] = {}
        for name, stored in TEXT_FIELDS.items():
            value = fields.get(name)
            if value is None:
                continue
            text = str(value).strip()
            if len(text) > MAX_TEXT or any(ord(ch) < 32 for ch in text):
                raise BadRequest(f"{stored} is too long or holds control characters")
            if stored in ("name", "surname") and not text:
                raise BadRequest(f"{stored} cannot be empty")
            changes[stored] = text
        if fields.get("role") is not None:
            role = str(fields["role"]).strip().upper()
            if role not in ROLES:
                raise BadRequest(f"role must be one of {', '.join(ROLES)}")
            changes["role"] = role
        if fields.get("default_node") is not None:
            node = str(fields["default_node"]).strip()
            if node and not self.nodes.is_usable(node):
                raise BadRequest(f"unknown or inactive node {node[:60]!r}")
            changes["defaultNode"] = node
        if fields.get("registration_date") is not None:
            changes["registrationDate"] = parse_date_ms(str(fields["registration_date"]))
        if changes:
            if self.users.users.update(doc["userId"], changes) is None:
                raise BadRequest(UNKNOWN_USER)
            self.sessions.forget_user(doc["userId"])

    def delete(self, caller: User, user_id: str | None) -> None:
        """Delete the account and everything it owns (durable; see domains/accounts/user_deletion.py)."""
        require_admin(caller)
        doc = self._load(user_id)
        if doc["userId"] == caller.user_id:
            raise BadRequest("an admin cannot delete their own account; ask another admin")
        self.deletion.delete(doc["userId"])
