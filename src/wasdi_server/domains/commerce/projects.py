"""Projects: the work units of a subscription, and each user's active project.

Rules (contract, /projects; where it is silent, the choices are written here):
- Access to a project follows access to its subscription: reading, listing and activating need read
  access to the subscription; creating, editing and deleting need write access.
- Names are unique within their subscription; a clash is renamed ``Name(1)``, ``Name(2)`` ... (on
  update the project's own name does not count).
- The active project is stored on the user (``activeProjectId``) together with its subscription
  (``activeSubscriptionId``); making a project active sets both, clearing clears both.
- Acting on another user's active project (``targetUser`` / ``target``) needs admin (403 otherwise); the
  target must exist (400) and be able to read the project's subscription (403).
- ``/projects/byuser``: when the user's active project is unset, gone or no longer readable, the first
  listed project becomes active and is saved on the user.
- Deleting a project (or its subscription) clears it wherever it is the active project.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ...errors import BadRequest, Forbidden
from ...naming import unique_name
from ...store import Collection
from ..accounts.identity import User, UserService, normalise_user_id
from ..accounts.sharing import WRITE
from .organizations import check_display_name, check_text, checked_id
from .subscription_records import NO_ACCESS
from .subscriptions import SubscriptionService

INVALID_PROJECT = "Invalid projectId."
CANNOT_ACCESS = "MSG_ERROR_CANNOT_ACCESS"


class ProjectService:
    """The ``projects`` collection: ``{projectId, subscriptionId, name, description}``."""

    def __init__(self, projects: Collection, subscriptions: SubscriptionService, users: UserService) -> None:
        self.projects = projects
        self.subscriptions = subscriptions
        self.users = users

    # -- lookups -------------------------------------------------------------------------------
    def load(self, project_id: str | None) -> dict[str, Any]:
        key = checked_id(project_id, "project", INVALID_PROJECT)
        doc = self.projects.get(key)
        if doc is None:
            raise BadRequest("No project with this id exists.")
        return doc

    def _subscription_of(self, doc: Mapping[str, Any]) -> dict[str, Any]:
        subscription = self.subscriptions.get(doc.get("subscriptionId"))
        if subscription is None:
            raise BadRequest("The project is not connected with a subscription.")
        return subscription

    def readable(self, user: User, project_id: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        doc = self.load(project_id)
        subscription = self._subscription_of(doc)
        if self.subscriptions.rights(user, subscription) is None:
            raise Forbidden(CANNOT_ACCESS)
        return doc, subscription

    def writable(self, user: User, project_id: str | None) -> tuple[dict[str, Any], dict[str, Any]]:
        doc = self.load(project_id)
        subscription = self._subscription_of(doc)
        if self.subscriptions.rights(user, subscription) != WRITE:
            raise Forbidden(CANNOT_ACCESS)
        return doc, subscription

    def names_in(self, subscription_id: str, exclude_id: str | None = None) -> list[str]:
        return [d.get("name") or "" for d in self.projects.find(subscriptionId=subscription_id)
                if d["projectId"] != exclude_id]

    def active_project_id(self, user_id: str) -> str | None:
        doc = self.users.get(user_id) or {}
        value = doc.get("activeProjectId")
        return str(value) if value else None

    def _target(self, caller: User, target: str | None) -> User:
        """The user whose active project changes: the caller, or (admins only) an existing user."""
        wanted = normalise_user_id(target)
        if not wanted or wanted == caller.user_id:
            return caller
        if not caller.is_admin:
            raise Forbidden("Only an admin may change another user's active project.")
        doc = self.users.get(wanted)
        if doc is None:
            raise BadRequest("MSG_ERROR_INVALID_DESTINATION_USER")
        return User.from_doc(doc)

    # -- views -----------------------------------------------------------------------------------
    @staticmethod
    def list_view(doc: Mapping[str, Any], subscription_name: str | None, active_id: str | None) -> dict[str, Any]:
        return {"projectId": doc["projectId"], "subscriptionName": subscription_name, "name": doc.get("name"),
                "description": doc.get("description") or "", "activeProject": doc["projectId"] == active_id}

    def list_for(self, user: User, valid: bool = False) -> list[dict[str, Any]]:
        """ProjectListViewModel fields of the projects of the user's subscriptions (in the order of
        ``/subscriptions/byuser``, then by name); makes the first active when none is."""
        subscriptions = [s for s in self.subscriptions.list_for(user, valid)]
        order = {s["subscriptionId"]: i for i, s in enumerate(subscriptions)}
        names = {s["subscriptionId"]: s["name"] for s in subscriptions}
        docs = sorted(self.projects.find(lambda d: d.get("subscriptionId") in order),
                      key=lambda d: (order[d["subscriptionId"]], str(d.get("name") or "").casefold(), d["projectId"]))
        active_id = self.active_project_id(user.user_id)
        if docs and not self._active_still_usable(user, active_id):
            first = docs[0]
            self.users.set_active_project(user.user_id, first["projectId"], first["subscriptionId"])
            active_id = first["projectId"]
        return [self.list_view(d, names.get(d["subscriptionId"]), active_id) for d in docs]

    def _active_still_usable(self, user: User, active_id: str | None) -> bool:
        if not active_id:
            return False
        doc = self.projects.get(active_id)
        subscription = self.subscriptions.get(doc.get("subscriptionId")) if doc else None
        return subscription is not None and self.subscriptions.rights(user, subscription) is not None

    def list_by_subscription(self, user: User, subscription_id: str | None) -> list[dict[str, Any]]:
        subscription = self.subscriptions.readable(user, subscription_id)
        active_id = self.active_project_id(user.user_id)
        docs = sorted(self.projects.find(subscriptionId=subscription["subscriptionId"]),
                      key=lambda d: (str(d.get("name") or "").casefold(), d["projectId"]))
        return [self.list_view(d, subscription.get("name"), active_id) for d in docs]

    def view(self, user: User, project_id: str | None) -> dict[str, Any]:
        """ProjectViewModel fields."""
        doc, _ = self.readable(user, project_id)
        return {"projectId": doc["projectId"], "subscriptionId": doc["subscriptionId"], "name": doc.get("name"),
                "description": doc.get("description") or "",
                "activeProject": doc["projectId"] == self.active_project_id(user.user_id)}

    # -- changes -------------------------------------------------------------------------------
    def create(self, caller: User, data: Mapping[str, Any]) -> str:
        """A new project in a subscription the caller can write; its id."""
        subscription_id = data.get("subscriptionId")
        if not isinstance(subscription_id, str) or not subscription_id.strip():
            raise BadRequest("Invalid subscriptionId.")
        name = check_display_name(data.get("name"), "project")
        description = check_text(data.get("description"), "description")
        subscription = self.subscriptions.load(subscription_id)
        if self.subscriptions.rights(caller, subscription) != WRITE:
            raise Forbidden(NO_ACCESS)
        activate = bool(data.get("activeProject"))
        target = self._target(caller, data.get("targetUser")) if activate or data.get("targetUser") else caller
        if activate and self.subscriptions.rights(target, subscription) is None:
            raise Forbidden("The target user cannot access the subscription.")
        sid = str(subscription["subscriptionId"])
        # The project and the user's choice of it commit as one (a crash leaves both or neither).
        with self.subscriptions.atomic(), self.projects.transaction():
            doc = self.projects.insert({"projectId": str(uuid.uuid4()), "subscriptionId": sid,
                                        "name": unique_name(name, self.names_in(sid)), "description": description})
            if activate:
                self.users.set_active_project(target.user_id, doc["projectId"], sid)
        return str(doc["projectId"])

    def update(self, caller: User, data: Mapping[str, Any]) -> str:
        """Rename, describe, move to another writable subscription, or (de)activate; the id.  Fields not
        sent (or null) are kept."""
        project_id = data.get("projectId")
        if not isinstance(project_id, str) or not project_id:
            raise BadRequest(INVALID_PROJECT)
        doc, subscription = self.writable(caller, project_id)
        pid = str(doc["projectId"])
        changes: dict[str, Any] = {}
        target_sid = str(subscription["subscriptionId"])
        new_sid = data.get("subscriptionId")
        if new_sid is not None and new_sid != target_sid:
            moved_to = self.subscriptions.writable(caller, new_sid if isinstance(new_sid, str) else None)
            target_sid = changes["subscriptionId"] = str(moved_to["subscriptionId"])
            subscription = moved_to
        if data.get("description") is not None:
            changes["description"] = check_text(data.get("description"), "description")
        active = data.get("activeProject")
        target = self._target(caller, data.get("targetUser")) if data.get("targetUser") else caller
        if active is True and self.subscriptions.rights(target, subscription) is None:
            raise Forbidden("The target user cannot access the subscription.")
        # A move and the users' choices that follow it commit as one (no user left with the project in one
        # subscription and the other as active after a crash).
        with self.subscriptions.atomic(), self.projects.transaction():
            raw_name = data.get("name")
            if raw_name is not None:
                name = check_display_name(raw_name, "project")
                if name != doc.get("name") or "subscriptionId" in changes:
                    changes["name"] = unique_name(name, self.names_in(target_sid, exclude_id=pid))
            elif "subscriptionId" in changes:
                changes["name"] = unique_name(doc.get("name") or "", self.names_in(target_sid, exclude_id=pid))
            if changes:
                self.projects.update(pid, changes)
            if active is True:
                self.users.set_active_project(target.user_id, pid, target_sid)
            elif active is False and self.active_project_id(target.user_id) == pid:
                self.users.set_active_project(target.user_id, None, None)
            elif "subscriptionId" in changes:
                self.users.users.update_where({"activeSubscriptionId": target_sid}, activeProjectId=pid)
        return pid

    def set_active(self, caller: User, project_id: str | None, target_user: str | None) -> str:
        """Make a project the target's active one (and its subscription the active subscription), or
        clear both when ``project_id`` is empty; the project id (empty when cleared)."""
        target = self._target(caller, target_user)
        if project_id is None or not project_id.strip() or project_id.strip().lower() == "null":
            self.users.set_active_project(target.user_id, None, None)
            return ""
        doc = self.load(project_id)
        subscription = self._subscription_of(doc)
        if self.subscriptions.rights(target, subscription) is None:
            raise Forbidden(CANNOT_ACCESS)
        self.users.set_active_project(target.user_id, doc["projectId"], subscription["subscriptionId"])
        return str(doc["projectId"])

    def delete(self, caller: User, project_id: str | None) -> str:
        """Delete a project (write access to its subscription); the id."""
        doc, _ = self.writable(caller, project_id)
        pid = str(doc["projectId"])
        # One commit: a crash never leaves a user whose active project is gone.
        with self.subscriptions.atomic():
            self.projects.delete(pid)
            self.users.users.update_where({"activeProjectId": None, "activeSubscriptionId": None},
                                          activeProjectId=pid)
        return pid
