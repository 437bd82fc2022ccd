"""Subscriptions and projects: the records behind user types, trials and the active project."""

from __future__ import annotations

import time
import uuid
from typing import Any

from ..store import Collection
from .identity import UserService, now_ms

DAY_MS = 24 * 3600 * 1000.0
TRIAL_DAYS = 90
TRIAL_NAME = "WASDI Trial"

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
USER_TYPE_RANK = {"NONE": 0, "FREE": 1, "STANDARD": 2, "PROFESSIONAL": 3}


def iso_from_ms(ms: float | None) -> str | None:
    """``yyyy-MM-dd'T'HH:mm:ss.SSS'Z'`` in UTC, the subscription date format."""
    if ms is None:
        return None
    seconds, millis = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class SubscriptionService:
    """The ``subscriptions`` and ``projects`` collections."""

    def __init__(self, subscriptions: Collection, projects: Collection, users: UserService) -> None:
        self.subscriptions = subscriptions
        self.projects = projects
        self.users = users

    def create_trial(self, user_id: str) -> dict[str, Any]:
        """The 90-day FREE trial of a newly validated user, with its project made active."""
        start = now_ms()
        subscription = self.subscriptions.insert({
            "subscriptionId": str(uuid.uuid4()), "name": TRIAL_NAME, "description": TRIAL_NAME,
            "typeId": "Free", "typeName": SUBSCRIPTION_TYPES["Free"][0], "buyDate": start, "startDate": start,
            "endDate": start + TRIAL_DAYS * DAY_MS, "durationDays": TRIAL_DAYS, "userId": user_id,
            "organizationId": None, "buySuccess": True,
        })
        project = self.projects.insert({
            "projectId": str(uuid.uuid4()), "subscriptionId": subscription["subscriptionId"], "name": TRIAL_NAME,
            "description": TRIAL_NAME,
        })
        self.users.set_active_project(user_id, project["projectId"], subscription["subscriptionId"])
        return subscription

    def is_valid(self, subscription: dict[str, Any], at_ms: float | None = None) -> bool:
        at = now_ms() if at_ms is None else at_ms
        return bool(subscription.get("buySuccess")) and \
            float(subscription.get("startDate") or 0) <= at <= float(subscription.get("endDate") or 0)

    def user_type(self, user_id: str, extra_subscriptions: list[dict[str, Any]] | None = None) -> str:
        """The highest type among the user's valid subscriptions; ``NONE`` without one."""
        best = "NONE"
        for subscription in self.subscriptions.find(userId=user_id) + (extra_subscriptions or []):
            if not self.is_valid(subscription):
                continue
            granted = SUBSCRIPTION_TYPES.get(subscription.get("typeId") or "", ("", "NONE"))[1]
            if USER_TYPE_RANK[granted] > USER_TYPE_RANK[best]:
                best = granted
        return best
