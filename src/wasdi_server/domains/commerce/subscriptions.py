"""Subscriptions: trials, creating, editing and deleting subscriptions, and their sharing.

Rules (contract, /subscriptions; where it is silent, the choices are written here); the terms (types,
periods, dates) are ``subscription_terms``', access and views ``subscription_records``', payment
``subscription_payments``':
- Periods: a missing start is now; a missing end is derived from the type, or from ``durationDays``
  when an admin gives it.
- Non-admins: the subscription is theirs (``userId`` is forced to the caller), ``buySuccess`` is false
  and cannot be changed, ``buyDate`` cannot be set, the end is always derived from the type (a client
  cannot buy one month and write a year), a start in the past becomes now, and once a subscription is
  paid its type and dates are frozen (changes to them are ignored, as for ``buySuccess``).
- Names are unique per owner; a clash is renamed ``Name(1)``, ``Name(2)`` ... (add and update).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, Forbidden
from ...naming import unique_name
from ..accounts.identity import User, normalise_user_id
from ..accounts.sharing import ALREADY_SHARED_NO_DOT, READ
from .organizations import check_display_name, check_text
from .subscription_payments import SubscriptionPayments
from .subscription_records import NO_ACCESS, SUBSCRIPTION
from .subscription_terms import (
    DAY_MS,
    SUBSCRIPTION_TYPES,
    TRIAL_DAYS,
    add_period,
    check_type,
    duration_days,
    parse_date,
    type_end,
    type_name,
)

TRIAL_NAME = "WASDI Trial"
SHARING_REMOVED = "Sharing removed"
DONE = "Done"


class SubscriptionService(SubscriptionPayments):
    """The ``subscriptions`` collection (``{subscriptionId, name, description, typeId, typeName, buyDate,
    startDate, endDate, durationDays, userId, organizationId, buySuccess}``, dates in epoch ms) and the
    default projects it creates in ``projects``: records and views (``subscription_records``), payment
    (``subscription_payments``), and here trials, changes and sharing."""

    # -- trials (used by /auth) ------------------------------------------------------------------
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
