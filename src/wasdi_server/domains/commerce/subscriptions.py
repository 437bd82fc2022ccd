"""Subscriptions: trials, user types, the subscriptions a user has, editing, sharing and payment.

Rules (contract, /subscriptions; where it is silent, the choices are written here):
- Dates are stored as epoch milliseconds and emitted as ``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` (UTC).  On
  input a date is an ISO-8601 string (``Z`` or an offset; a date alone is midnight UTC) or a number of
  epoch milliseconds (also as text).
- Periods: a missing start is now; a missing end is derived from the type (Free 90 days, OneDay 1 day,
  OneWeek 7 days, OneMonth one calendar month, OneYear one calendar year), or from ``durationDays``
  when an admin gives it.  ``durationDays`` is always the whole number of days between start and end.
- Non-admins: the subscription is theirs (``userId`` is forced to the caller), ``buySuccess`` is false
  and cannot be changed, ``buyDate`` cannot be set, the end is always derived from the type (a client
  cannot buy one month and write a year), a start in the past becomes now, and once a subscription is
  paid its type and dates are frozen (changes to them are ignored, as for ``buySuccess``).
- Valid = paid (``buySuccess``) and now between start and end.
- Names are unique per owner; a clash is renamed ``Name(1)``, ``Name(2)`` ... (add and update).
- Access: owner and admins full powers; a ``write`` sharing edits and shares; a ``read`` sharing and
  the members of the subscription's organization only read; strangers get 403.
- ``active``: the user's active subscription (``activeSubscriptionId`` on the user) when they can still
  read it and it is valid; otherwise the best valid one they have (highest user type, then the latest
  end date); none: 404.
- Payment: the checkout's client reference is ``<subscriptionId>`` or ``<subscriptionId>_<workspaceId>``.
  Only a paid session (verified with the provider) whose reference names an existing subscription sets
  ``buySuccess`` and ``buyDate`` (a missing session id: 401; any failed verification: 500, like the other
  confirmation callbacks); a period that would already have started is moved to start at the
  payment (same length), so the buyer gets what they paid for.  A repeated confirmation changes nothing.
"""

from __future__ import annotations

import calendar
import logging
import math
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from ...dates import from_epoch_ms, iso_z_ms, now_ms, parse_epoch_ms
from ...errors import BadRequest, Forbidden, NotFound, ServerFailure
from ...messages import Messages
from ...naming import unique_name
from ...providers.payments import PaymentProviders
from ...providers.payments.base import CheckoutRequest, CheckoutSession
from ...store import Collection
from ..accounts.identity import User, UserService, normalise_user_id, valid_email
from ..accounts.sharing import ALREADY_SHARED_NO_DOT, READ, WRITE, Resource, SharingService
from .organizations import (
    OrganizationService,
    check_display_name,
    check_text,
    checked_id,
)

log = logging.getLogger("wasdi_server.subscriptions")

DAY_MS = 24 * 3600 * 1000.0
TRIAL_DAYS = 90
TRIAL_NAME = "WASDI Trial"
SUBSCRIPTION = "subscription"
MAX_EPOCH_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
INVALID_SUBSCRIPTION = "MSG_ERROR_INVALID_SUBSCRIPTION"
NO_ACCESS = "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_SUBSCRIPTION"
SHARING_REMOVED = "Sharing removed"
DONE = "Done"
PAYMENT_MESSAGE_CODE = "SUBSCRIPTION"

SUBSCRIPTION_TYPES: dict[str, tuple[str, str]] = {
    # typeId: (name, user type it grants)
    "Free": ("Free", "FREE"),
    "OneDayStandard": ("One Day Standard", "STANDARD"),
    "OneWeekStandard": ("One Week Standard", "STANDARD"),
    "OneMonthStandard": ("One Month Standard", "STANDARD"),
    "OneYearStandard": ("One Year Standard", "STANDARD"),
    "OneMonthProfessional": ("One Month Professional", "PROFESSIONAL"),
    "OneYearProfessional": ("One Year Professional", "PROFESSIONAL"),
}
TYPE_PERIODS: dict[str, tuple[int, int]] = {
    # typeId: (days, months) of the period the type buys
    "Free": (TRIAL_DAYS, 0),
    "OneDayStandard": (1, 0),
    "OneWeekStandard": (7, 0),
    "OneMonthStandard": (0, 1),
    "OneYearStandard": (0, 12),
    "OneMonthProfessional": (0, 1),
    "OneYearProfessional": (0, 12),
}
USER_TYPE_RANK = {"NONE": 0, "FREE": 1, "STANDARD": 2, "PROFESSIONAL": 3}

SORT_FIELDS = {"name": "name", "userId": "userId", "endDate": "endDate", "startDate": "startDate",
               "buyDate": "buyDate", "typeId": "typeId", "subscriptionId": "subscriptionId"}
DESCENDING = frozenset({"desc", "des", "descending", "-1", "0"})
ASCENDING = frozenset({"asc", "ascending", "1"})
STATUS_FILTERS = ("valid", "expired", "future", "paid", "unpaid")
"""``statusfilter`` of /subscriptions/list: valid (paid, now within the period), expired (ended),
future (not started), paid (buySuccess), unpaid (not bought yet)."""


def parse_date(value: Any, what: str) -> int | None:
    """Epoch milliseconds from an ISO string or a number (or its text); ``None`` when empty."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise BadRequest(f"{what} is not a date")
    number: float | None = None
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str):
        text = value.strip()
        if len(text) > 64:
            raise BadRequest(f"{what} is not a date")
        try:
            number = float(text)
        except ValueError:
            number = None
        if number is None:
            try:
                number = parse_epoch_ms(text)
            except ValueError as e:
                raise BadRequest(f"{what} is not an ISO-8601 date or epoch milliseconds: {text[:40]!r}") from e
    else:
        raise BadRequest(f"{what} is not a date")
    if not math.isfinite(number) or not 0 <= number <= MAX_EPOCH_MS:
        raise BadRequest(f"{what} is out of range")
    return int(number)


def add_period(start_ms: int, days: int, months: int) -> int:
    """``start`` plus whole days and calendar months (a missing day of month becomes the month's last)."""
    if months:
        stamp = from_epoch_ms(start_ms)
        total = stamp.month - 1 + months
        year, month = stamp.year + total // 12, total % 12 + 1
        day = min(stamp.day, calendar.monthrange(year, month)[1])
        start_ms = int(stamp.replace(year=year, month=month, day=day).timestamp() * 1000)
    return min(MAX_EPOCH_MS, int(start_ms + days * DAY_MS))


def type_end(type_id: str, start_ms: int) -> int:
    days, months = TYPE_PERIODS.get(type_id, (TRIAL_DAYS, 0))
    return add_period(start_ms, days, months)


def duration_days(start_ms: float, end_ms: float) -> int:
    return max(0, round((end_ms - start_ms) / DAY_MS))


def type_name(type_id: str | None) -> str:
    return SUBSCRIPTION_TYPES.get(type_id or "", (type_id or "", "NONE"))[0]


def check_type(type_id: Any) -> str:
    if not isinstance(type_id, str) or type_id not in SUBSCRIPTION_TYPES:
        raise BadRequest(f"invalid subscription type; one of: {', '.join(SUBSCRIPTION_TYPES)}")
    return type_id


class SubscriptionService:
    """The ``subscriptions`` collection (``{subscriptionId, name, description, typeId, typeName, buyDate,
    startDate, endDate, durationDays, userId, organizationId, buySuccess}``, dates in epoch ms) and the
    default projects it creates in ``projects``."""

    def __init__(self, subscriptions: Collection, projects: Collection, users: UserService,
                 sharing: SharingService | None = None, organizations: OrganizationService | None = None,
                 messages: Messages | None = None, *,
                 atomic: Callable[[], AbstractContextManager[None]]) -> None:
        self.subscriptions = subscriptions
        self.atomic = atomic
        """``Store.atomic``: a deletion's writes commit as one (a crash leaves all of them or none)."""
        self.projects = projects
        self.users = users
        self.sharing = sharing
        self.organizations = organizations
        self.messages = messages

    # -- trials and user types (used by /auth) ---------------------------------------------------
    def create_trial(self, user_id: str) -> dict[str, Any]:
        """The 90-day FREE trial of a newly validated user, with its project made active."""
        start = int(now_ms())
        with self.atomic():  # the subscription, its project and the user's choice of it: all or none
            subscription = self.subscriptions.insert({
                "subscriptionId": str(uuid.uuid4()), "name": TRIAL_NAME, "description": TRIAL_NAME,
                "typeId": "Free", "typeName": SUBSCRIPTION_TYPES["Free"][0], "buyDate": start, "startDate": start,
                "endDate": int(start + TRIAL_DAYS * DAY_MS), "durationDays": TRIAL_DAYS, "userId": user_id,
                "organizationId": None, "buySuccess": True,
            })
            project = self.projects.insert({
                "projectId": str(uuid.uuid4()), "subscriptionId": subscription["subscriptionId"],
                "name": TRIAL_NAME, "description": TRIAL_NAME,
            })
            self.users.set_active_project(user_id, project["projectId"], subscription["subscriptionId"])
        return subscription

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

    # -- changes -------------------------------------------------------------------------------
    def _organization_for(self, user: User, organization_id: Any) -> str | None:
        """The organization a subscription is attached to: it must exist and the caller (unless admin)
        must be able to write it."""
        if organization_id is None or (isinstance(organization_id, str) and not organization_id.strip()):
            return None
        if not isinstance(organization_id, str) or self.organizations is None:
            raise BadRequest("Invalid organizationId.")
        org = self.organizations.load(organization_id)
        if not user.is_admin:
            self.organizations.writable(user, org["organizationId"])
        return str(org["organizationId"])

    @staticmethod
    def _period(admin: bool, type_id: str, start: int | None, end: int | None,
                days: Any) -> tuple[int, int]:
        """(start, end) in epoch ms by the rules in the module docstring."""
        now = int(now_ms())
        if admin:
            begin = now if start is None else start
            if end is None:
                if days is not None:
                    if not isinstance(days, int) or days <= 0 or days > 36500:
                        raise BadRequest("durationDays must be a positive number of days")
                    end = add_period(begin, days, 0)
                else:
                    end = type_end(type_id, begin)
        else:
            begin = max(now, start) if start is not None else now
            end = type_end(type_id, begin)
        if end < begin:
            raise BadRequest("endDate is before startDate")
        return begin, end

    def create(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        """A new subscription with its default project (active for its user when they have none)."""
        admin = caller.is_admin
        type_id = check_type(data.get("typeId"))
        owner = caller.user_id
        if admin and data.get("userId"):
            wanted = data.get("userId")
            if not isinstance(wanted, str) or self.users.get(wanted) is None:
                raise BadRequest("MSG_ERROR_INVALID_DESTINATION_USER")
            owner = normalise_user_id(wanted)
        raw_name = data.get("name")
        name = check_display_name(raw_name if isinstance(raw_name, str) and raw_name.strip() else type_name(type_id),
                                  "subscription")
        description = check_text(data.get("description"), "description")
        organization_id = self._organization_for(caller, data.get("organizationId"))
        start, end = self._period(admin, type_id, parse_date(data.get("startDate"), "startDate"),
                                  parse_date(data.get("endDate"), "endDate"), data.get("durationDays"))
        bought = bool(data.get("buySuccess")) if admin else False
        buy_date = parse_date(data.get("buyDate"), "buyDate") if admin else None
        if bought and buy_date is None:
            buy_date = int(now_ms())
        # The subscription, its default project and the owner's choice of it commit as one (all or none).
        with self.atomic(), self.subscriptions.transaction():
            doc = self.subscriptions.insert({
                "subscriptionId": str(uuid.uuid4()), "name": unique_name(name, self.names_of(owner)),
                "description": description, "typeId": type_id, "typeName": type_name(type_id), "buyDate": buy_date,
                "startDate": start, "endDate": end, "durationDays": duration_days(start, end), "userId": owner,
                "organizationId": organization_id, "buySuccess": bought,
            })
            project = self.projects.insert({
                "projectId": str(uuid.uuid4()), "subscriptionId": doc["subscriptionId"], "name": doc["name"],
                "description": f"Project automatically created for the {doc['name']} subscription",
            })
            owner_doc = self.users.get(owner) or {}
            if not owner_doc.get("activeProjectId"):
                self.users.set_active_project(owner, project["projectId"], doc["subscriptionId"])
        return doc

    def update(self, caller: User, data: Mapping[str, Any]) -> str:
        """Change a subscription (write permission); the id.  Fields not sent, or sent as null, are kept
        (``organizationId: ""`` detaches it); ``userId`` (the owner) never changes."""
        subscription_id = data.get("subscriptionId")
        if not isinstance(subscription_id, str) or not subscription_id:
            raise BadRequest("Invalid subscriptionId.")
        doc = self.writable(caller, subscription_id)
        admin = caller.is_admin
        sid = str(doc["subscriptionId"])
        changes: dict[str, Any] = {}
        if data.get("description") is not None:
            changes["description"] = check_text(data.get("description"), "description")
        if data.get("organizationId") is not None and \
                (data.get("organizationId") or None) != (doc.get("organizationId") or None):
            changes["organizationId"] = self._organization_for(caller, data.get("organizationId"))
        commercial = admin or not doc.get("buySuccess")
        if commercial:
            type_id = doc.get("typeId") or "Free"
            type_changed = data.get("typeId") is not None and data.get("typeId") != type_id
            if type_changed:
                type_id = check_type(data.get("typeId"))
                changes["typeId"], changes["typeName"] = type_id, type_name(type_id)
            stored_start, stored_end = int(doc.get("startDate") or 0), int(doc.get("endDate") or 0)
            start = parse_date(data.get("startDate"), "startDate")
            end = parse_date(data.get("endDate"), "endDate") if admin else None
            days = data.get("durationDays") if admin else None
            start_changed = start is not None and start != stored_start
            end_changed = end is not None and end != stored_end
            days_changed = days is not None and days != doc.get("durationDays") and not end_changed
            if type_changed or start_changed or end_changed or days_changed:
                # An admin's new end (or duration) wins; otherwise the end follows the type from the start.
                new_start, new_end = self._period(admin, type_id, start if start_changed else stored_start,
                                                  end if end_changed else None, days if days_changed else None)
                changes.update(startDate=new_start, endDate=new_end, durationDays=duration_days(new_start, new_end))
            if admin:
                if data.get("buySuccess") is not None:
                    changes["buySuccess"] = bool(data.get("buySuccess"))
                buy_date = parse_date(data.get("buyDate"), "buyDate")
                if buy_date is not None:
                    changes["buyDate"] = buy_date
                elif changes.get("buySuccess") and not doc.get("buyDate"):
                    changes["buyDate"] = int(now_ms())
        with self.subscriptions.transaction():
            raw_name = data.get("name")
            if isinstance(raw_name, str) and raw_name.strip() and raw_name.strip() != doc.get("name"):
                changes["name"] = unique_name(check_display_name(raw_name, "subscription"),
                                              self.names_of(doc["userId"], exclude_id=sid))
            elif raw_name is not None and not isinstance(raw_name, str):
                raise BadRequest("subscription name must be a string")
            if changes:
                self.subscriptions.update(sid, changes)
        return sid

    def delete(self, caller: User, subscription_id: str | None) -> str:
        """Owner or admin: sharings, projects, then the subscription (``Done``).  A user it is shared
        with: their sharing only (``Sharing removed``).  Anyone else: 403."""
        doc = self.load(subscription_id)
        sid = str(doc["subscriptionId"])
        sharing = self._sharing()
        resource = self.resource(doc)
        if caller.user_id != doc["userId"] and not caller.is_admin:
            if sharing.sharing(resource, caller.user_id) is None:
                raise Forbidden(NO_ACCESS)
            # One commit: a crash never leaves the user's active choice on a subscription they left.
            with self.atomic():
                sharing.sharings.delete(sharing.key(SUBSCRIPTION, sid, caller.user_id))
                self.users.users.update_where({"activeProjectId": None, "activeSubscriptionId": None},
                                              userId=caller.user_id, activeSubscriptionId=sid)
            return SHARING_REMOVED
        self._remove(doc)
        return DONE

    def _remove(self, doc: Mapping[str, Any]) -> None:
        """Sharings, projects, users' active choices that pointed at them, then the subscription."""
        sid = str(doc["subscriptionId"])
        # Every atomic block takes the collections in one order (sharings, subscriptions, projects, users, as
        # an organization's delete and a subscription's creation do), so two blocks never wait on each other.
        with self.atomic():
            self._sharing().remove_all(self.resource(doc))
            self.subscriptions.delete(sid)
            project_ids = {p["projectId"] for p in self.projects.find(subscriptionId=sid)}
            self.projects.delete_where(subscriptionId=sid)
            self.users.users.update_where(
                {"activeProjectId": None, "activeSubscriptionId": None},
                lambda u: u.get("activeSubscriptionId") == sid or u.get("activeProjectId") in project_ids)

    def delete_all_of_user(self, user_id: str) -> None:
        """Every subscription the user owns, with its projects and sharings."""
        for doc in self.subscriptions.find(userId=user_id):
            self._remove(doc)

    # -- sharing ---------------------------------------------------------------------------------
    def share(self, caller: User, subscription_id: str | None, user_id: str | None, rights: str | None) -> str:
        """``Done``, or ``Already Shared`` for a repeat (rights default to read).  Nobody shares with
        themself here, admins included (the contract's rule for subscriptions)."""
        outcome = self._sharing().share(caller, self.resource(self.load(subscription_id)), user_id, rights,
                                        admin_self_share=False)
        return outcome.message if outcome.created else ALREADY_SHARED_NO_DOT

    def unshare(self, caller: User, subscription_id: str | None, user_id: str | None) -> None:
        """Remove a user's sharing: the owner cannot be removed; owner, writers and admins may remove
        anyone, a user may remove themself."""
        doc = self.load(subscription_id)
        with self.atomic():  # the sharing and the user's choice that needed it go as one
            self._sharing().unshare(caller, self.resource(doc), user_id)
            target = normalise_user_id(user_id)
            self.users.users.update_where({"activeProjectId": None, "activeSubscriptionId": None},
                                          userId=target, activeSubscriptionId=doc["subscriptionId"])

    def sharings(self, caller: User, subscription_id: str | None) -> list[dict[str, Any]]:
        """SubscriptionSharingViewModel fields (read access needed)."""
        doc = self.readable(caller, subscription_id)
        return [{"subscriptionId": doc["subscriptionId"], "userId": s["userId"], "ownerId": doc["userId"],
                 "permissions": s.get("permissions") or READ}
                for s in self._sharing().sharings_of(self.resource(doc))]

    # -- payment ---------------------------------------------------------------------------------
    def payment_url(self, caller: User, subscription_id: str | None, workspace_id: str | None,
                    payments: PaymentProviders, payprov: str, base_url: str) -> str:
        """The provider's checkout URL for an unpaid subscription the caller can read.

        The client reference is ``<subscriptionId>`` or ``<subscriptionId>_<workspaceId>``; the price is
        the type's price (a type that costs nothing is not sold: 400)."""
        provider = payments.get(payprov)
        doc = self.readable(caller, subscription_id)
        if doc.get("buySuccess"):
            raise BadRequest("The subscription is already paid.")
        type_id = doc.get("typeId")
        if not type_id or type_id not in SUBSCRIPTION_TYPES:
            raise BadRequest("The subscription does not have a valid type.")
        amount, currency = payments.price(type_id)
        if amount <= 0:
            raise BadRequest(f"The subscription type {type_id} is not sold.")
        sid = str(doc["subscriptionId"])
        reference = f"{sid}_{workspace_id}" if workspace_id else sid
        success_url, cancel_url = PaymentProviders.checkout_urls(base_url, "subscriptions", provider.code, reference)
        request = CheckoutRequest(
            client_reference_id=reference, product_code=type_id,
            description=f"WASDI subscription {doc.get('name') or sid} ({type_name(type_id)})",
            amount_cents=amount, currency=currency, success_url=success_url, cancel_url=cancel_url,
            customer_email=caller.user_id if valid_email(caller.user_id) else None)
        return payments.start_checkout(provider, request).url

    def confirm_payment(self, payments: PaymentProviders, provider_code: str | None,
                        session_id: str | None) -> dict[str, Any]:
        """Verify a checkout session with the provider and mark its subscription paid (once); the record.

        Verification follows the callbacks' rules (``PaymentProviders.verify``); a paid session whose
        reference names no subscription is a failed verification too (500).
        """
        _, session = payments.verify(provider_code, session_id)
        subscription_id, _, workspace_id = (session.client_reference_id or "").partition("_")
        if not subscription_id or self.subscriptions.get(subscription_id) is None:
            raise ServerFailure("the checkout session does not pay for a subscription")
        paid_at = int(now_ms())
        settled = False

        def settle(doc: dict[str, Any]) -> dict[str, Any] | None:
            nonlocal settled
            if doc.get("buySuccess"):
                return None  # already paid: confirming again changes nothing
            settled = True
            doc.update(buySuccess=True, buyDate=paid_at)
            start, end = int(doc.get("startDate") or 0), int(doc.get("endDate") or 0)
            if start < paid_at:
                length = max(0, end - start) or type_end(doc.get("typeId") or "Free", paid_at) - paid_at
                doc.update(startDate=paid_at, endDate=min(MAX_EPOCH_MS, paid_at + length))
                doc["durationDays"] = duration_days(paid_at, doc["endDate"])
            return doc

        with self.atomic():  # the payment and the owner's first choice of the subscription: both or neither
            try:
                updated = self.subscriptions.modify(subscription_id, settle)
            except Exception as e:
                log.exception("recording the payment of subscription %s failed", subscription_id)
                raise ServerFailure("the payment could not be recorded") from e
            if updated is None:
                raise ServerFailure("the subscription disappeared")
            if not settled:
                return updated
            owner = self.users.get(updated["userId"]) or {}
            if not owner.get("activeProjectId"):
                first = self.projects.find_one(subscriptionId=subscription_id)
                if first is not None:
                    self.users.set_active_project(updated["userId"], first["projectId"], subscription_id)
        if workspace_id and self.messages is not None:
            self.messages.send(PAYMENT_MESSAGE_CODE, payment_detail(session, paid_at), workspace_id)
        return updated

def payment_detail(session: CheckoutSession, paid_at_ms: int) -> dict[str, Any]:
    """The PaymentDetail record of a paid checkout (the broker message payload)."""
    from wasdi_sdk.models import PaymentDetail

    seconds = session.created_seconds if session.created_seconds is not None else paid_at_ms // 1000
    return PaymentDetail(
        client_reference_id=session.client_reference_id, customer_name=session.customer_name,
        customer_email=session.customer_email, payment_intent_id=session.payment_intent_id,
        payment_status="paid", payment_currency=session.currency, payment_amount_in_cents=session.amount_cents,
        invoice_id=session.invoice_id, product_description=session.description,
        payment_date_in_seconds=seconds, date=paid_at_ms, invoice_pdf_url=session.invoice_pdf_url,
    ).to_wire()
