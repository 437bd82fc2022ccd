"""Subscription records: lookups, who may read or change a subscription, the user type they grant, and their
views (a user's list, the active one, one subscription, the admin list).

- Valid = paid (``buySuccess``) and now between start and end.
- Access: owner and admins full powers; a ``write`` sharing edits and shares; a ``read`` sharing and
  the members of the subscription's organization only read; strangers get 403.
- ``active``: the user's active subscription (``activeSubscriptionId`` on the user) when they can still
  read it and it is valid; otherwise the best valid one they have (highest user type, then the latest
  end date); none: 404.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from ...dates import iso_z_ms, now_ms
from ...errors import BadRequest, Forbidden, NotFound, ServerFailure
from ...store import Collection
from ..accounts.identity import User, UserService
from ..accounts.sharing import WRITE, Resource, SharingService
from .organizations import OrganizationService, checked_id
from .ports import MessagePublisher
from .subscription_terms import SUBSCRIPTION_TYPES, USER_TYPE_RANK, type_name

SUBSCRIPTION = "subscription"
INVALID_SUBSCRIPTION = "MSG_ERROR_INVALID_SUBSCRIPTION"
NO_ACCESS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_SUBSCRIPTION"


SORT_FIELDS = {"name": "name", "userId": "userId", "endDate": "endDate", "startDate": "startDate",
               "buyDate": "buyDate", "typeId": "typeId", "subscriptionId": "subscriptionId"}
DESCENDING = frozenset({"desc", "des", "descending", "-1", "0"})
ASCENDING = frozenset({"asc", "ascending", "1"})
STATUS_FILTERS = ("valid", "expired", "future", "paid", "unpaid")
"""``statusfilter`` of /subscriptions/list: valid (paid, now within the period), expired (ended),
future (not started), paid (buySuccess), unpaid (not bought yet)."""



class SubscriptionRecords:
    """The ``subscriptions`` collection (``{subscriptionId, name, description, typeId, typeName, buyDate,
    startDate, endDate, durationDays, userId, organizationId, buySuccess}``, dates in epoch ms) and the
    default projects it creates in ``projects``."""

    def __init__(self, subscriptions: Collection, projects: Collection, users: UserService,
                 sharing: SharingService | None = None, organizations: OrganizationService | None = None,
                 messages: MessagePublisher | None = None, *,
                 atomic: Callable[[], AbstractContextManager[None]]) -> None:
        self.subscriptions = subscriptions
        self.atomic = atomic
        """``Store.atomic``: a deletion's writes commit as one (a crash leaves all of them or none)."""
        self.projects = projects
        self.users = users
        self.sharing = sharing
        self.organizations = organizations
        self.messages = messages

    # -- user types (used by /auth) --------------------------------------------------------------

    def is_valid(self, subscription: Mapping[str, Any], at_ms: float | None = None) -> bool:
        at = now_ms() if at_ms is None else at_ms
        return bool(subscription.get("buySuccess")) and \
            float(subscription.get("startDate") or 0) <= at <= float(subscription.get("endDate") or 0)

    def user_type(self, user_id: str, extra_subscriptions: list[dict[str, Any]] | None = None) -> str:
        """The highest type among the user's valid subscriptions (owned, shared with them, or of their
        organizations); ``NONE`` without one."""
        best = "NONE"
        for subscription in self._all_of(user_id) + (extra_subscriptions or []):
            if not self.is_valid(subscription):
                continue
            granted = SUBSCRIPTION_TYPES.get(subscription.get("typeId") or "", ("", "NONE"))[1]
            if USER_TYPE_RANK[granted] > USER_TYPE_RANK[best]:
                best = granted
        return best

    def _all_of(self, user_id: str) -> list[dict[str, Any]]:
        return [doc for doc, _ in self._accessible(user_id)]

    # -- lookups ---------------------------------------------------------------------------------
    def _sharing(self) -> SharingService:
        if self.sharing is None:
            raise ServerFailure("subscriptions are not wired to the sharing service")
        return self.sharing

    def resource(self, doc: Mapping[str, Any]) -> Resource:
        """The sharing view of a subscription; its organization's members may read it."""
        via: tuple[Resource, ...] = ()
        org = self.organizations.get(doc.get("organizationId")) if self.organizations else None
        if org is not None and self.organizations is not None:
            via = (self.organizations.resource(org),)
        return Resource(SUBSCRIPTION, doc["subscriptionId"], doc["userId"], doc.get("name") or "", via)

    def get(self, subscription_id: str | None) -> dict[str, Any] | None:
        return self.subscriptions.get(subscription_id) if subscription_id else None

    def load(self, subscription_id: str | None) -> dict[str, Any]:
        """The record; ``BadRequest`` when the id is missing, malformed or unknown."""
        key = checked_id(subscription_id, "subscription", "Invalid subscriptionId.")
        doc = self.subscriptions.get(key)
        if doc is None:
            raise BadRequest("The subscription cannot be found.")
        return doc

    def rights(self, user: User, doc: Mapping[str, Any]) -> str | None:
        return self._sharing().rights_of(user, self.resource(doc))

    def readable(self, user: User, subscription_id: str | None) -> dict[str, Any]:
        doc = self.load(subscription_id)
        if self.rights(user, doc) is None:
            raise Forbidden(NO_ACCESS)
        return doc

    def writable(self, user: User, subscription_id: str | None) -> dict[str, Any]:
        doc = self.load(subscription_id)
        if self.rights(user, doc) != WRITE:
            raise Forbidden(NO_ACCESS)
        return doc

    def names_of(self, owner_id: str, exclude_id: str | None = None) -> list[str]:
        return [d.get("name") or "" for d in self.subscriptions.find(userId=owner_id)
                if d["subscriptionId"] != exclude_id]

    def _organization_names(self, docs: list[dict[str, Any]]) -> dict[str, str]:
        out: dict[str, str] = {}
        for doc in docs:
            org_id = doc.get("organizationId")
            if org_id and org_id not in out and self.organizations is not None:
                org = self.organizations.get(org_id)
                if org is not None:
                    out[org_id] = org.get("name") or ""
        return out

    def _accessible(self, user_id: str) -> list[tuple[dict[str, Any], str]]:
        """(subscription, reason) for every subscription the user has: owned ("owner"), through an
        organization they own or share ("shared by <org name>"), shared with them ("shared by user").
        Listed in that order; each once (owner, then a direct sharing, win over an organization)."""
        owned = self.subscriptions.find(userId=user_id)
        seen = {d["subscriptionId"] for d in owned}
        direct_ids = set(self.sharing.shared_with(user_id, SUBSCRIPTION)) if self.sharing else set()
        out: list[tuple[dict[str, Any], str]] = [(d, "owner") for d in owned]
        if self.organizations is not None:
            orgs = self.organizations.member_of(user_id)
            for doc in self.subscriptions.find(lambda d: d.get("organizationId") in orgs):
                sid = doc["subscriptionId"]
                if sid in seen or sid in direct_ids:
                    continue
                seen.add(sid)
                out.append((doc, "shared by " + (orgs[doc["organizationId"]].get("name") or "")))
        for sid in direct_ids:
            found = self.subscriptions.get(sid)
            if found is not None and sid not in seen:
                seen.add(sid)
                out.append((found, "shared by user"))
        return out

    # -- views -----------------------------------------------------------------------------------
    def list_view(self, doc: Mapping[str, Any], reason: str, read_only: bool,
                  org_names: Mapping[str, str]) -> dict[str, Any]:
        """SubscriptionListViewModel fields (``runningTime`` is not tracked, so it is left out)."""
        org_id = doc.get("organizationId") or None
        return {
            "subscriptionId": doc["subscriptionId"], "ownerUserId": doc["userId"], "name": doc.get("name"),
            "typeId": doc.get("typeId") or "Free", "typeName": type_name(doc.get("typeId") or "Free"),
            "startDate": iso_z_ms(doc.get("startDate")), "endDate": iso_z_ms(doc.get("endDate")),
            "organizationName": org_names.get(org_id) if org_id else None, "organizationId": org_id,
            "reason": reason, "buySuccess": bool(doc.get("buySuccess")), "readOnly": read_only,
        }

    def list_for(self, user: User, valid: bool = False) -> list[dict[str, Any]]:
        """The user's subscriptions as SubscriptionListViewModel fields; ``valid`` keeps valid ones only."""
        entries = [(d, r) for d, r in self._accessible(user.user_id) if not valid or self.is_valid(d)]
        names = self._organization_names([d for d, _ in entries])
        return [self.list_view(d, reason, reason != "owner" and self.rights(user, d) != WRITE, names)
                for d, reason in entries]

    def active_for(self, user: User) -> dict[str, Any]:
        """The user's active subscription when readable and valid, else the best valid one; 404 without."""
        entries = [(d, r) for d, r in self._accessible(user.user_id) if self.is_valid(d)]
        if not entries:
            raise NotFound("No valid subscription.")
        user_doc = self.users.get(user.user_id) or {}
        active_id = user_doc.get("activeSubscriptionId")
        chosen = next(((d, r) for d, r in entries if d["subscriptionId"] == active_id), None)
        if chosen is None:
            def rank(entry: tuple[dict[str, Any], str]) -> tuple[int, float]:
                granted = SUBSCRIPTION_TYPES.get(entry[0].get("typeId") or "", ("", "NONE"))[1]
                return USER_TYPE_RANK[granted], float(entry[0].get("endDate") or 0)
            chosen = max(entries, key=rank)
        doc, reason = chosen
        return self.list_view(doc, reason, reason != "owner" and self.rights(user, doc) != WRITE,
                              self._organization_names([doc]))

    def view(self, user: User, subscription_id: str | None) -> dict[str, Any]:
        """SubscriptionViewModel fields with ``readOnly`` (read access needed)."""
        doc = self.readable(user, subscription_id)
        org_id = doc.get("organizationId") or None
        return {
            "subscriptionId": doc["subscriptionId"], "name": doc.get("name"), "description": doc.get("description"),
            "typeId": doc.get("typeId"), "typeName": type_name(doc.get("typeId")),
            "buyDate": iso_z_ms(doc.get("buyDate")), "startDate": iso_z_ms(doc.get("startDate")),
            "endDate": iso_z_ms(doc.get("endDate")), "durationDays": int(doc.get("durationDays") or 0),
            "userId": doc["userId"], "organizationId": org_id,
            "organizationName": self._organization_names([doc]).get(org_id) if org_id else None,
            "buySuccess": bool(doc.get("buySuccess")), "readOnly": self.rights(user, doc) != WRITE,
        }

    @staticmethod
    def types() -> list[dict[str, Any]]:
        """SubscriptionTypeViewModel fields of every type on sale."""
        return [{"typeId": type_id, "name": name, "description": name}
                for type_id, (name, _) in SUBSCRIPTION_TYPES.items()]

    def count(self) -> int:
        return self.subscriptions.count()

    def list_all(self, user_filter: str | None = None, id_filter: str | None = None,
                 name_filter: str | None = None, status_filter: str | None = None, offset: int = 0,
                 limit: int = 10, sort_by: str = "name", order: str = "asc") -> list[dict[str, Any]]:
        """Every subscription (admin view): case-insensitive substring filters, all of which must match,
        sorted (ties by id) and paged."""
        sort_key = SORT_FIELDS.get((sort_by or "name").strip())
        if sort_key is None:
            raise BadRequest(f"sortby must be one of: {', '.join(SORT_FIELDS)}")
        direction = (order or "asc").strip().lower()
        if direction not in DESCENDING and direction not in ASCENDING:
            raise BadRequest("order must be asc or desc")
        status = (status_filter or "").strip().lower()
        if status and status not in STATUS_FILTERS:
            raise BadRequest(f"statusfilter must be one of: {', '.join(STATUS_FILTERS)}")
        if offset < 0 or limit < 0:
            raise BadRequest("offset and limit cannot be negative")
        now = now_ms()
        needles = {"userId": user_filter, "subscriptionId": id_filter, "name": name_filter}

        def keep(doc: Mapping[str, Any]) -> bool:
            for field_name, needle in needles.items():
                if needle and needle.strip().casefold() not in str(doc.get(field_name) or "").casefold():
                    return False
            if status == "valid":
                return self.is_valid(doc, now)
            if status == "expired":
                return float(doc.get("endDate") or 0) < now
            if status == "future":
                return float(doc.get("startDate") or 0) > now
            if status == "paid":
                return bool(doc.get("buySuccess"))
            if status == "unpaid":
                return not doc.get("buySuccess")
            return True

        def key(doc: Mapping[str, Any]) -> tuple[Any, str]:
            value = doc.get(sort_key)
            if sort_key in ("endDate", "startDate", "buyDate"):
                return float(value or 0), str(doc["subscriptionId"])
            return str(value or "").casefold(), str(doc["subscriptionId"])

        docs = sorted(self.subscriptions.find(keep), key=key, reverse=direction in DESCENDING)
        page = docs[offset:offset + limit]
        names = self._organization_names(page)
        return [self.list_view(d, "owner", False, names) for d in page]

