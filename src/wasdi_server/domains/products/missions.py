"""Missions: what users may search (``/auth/config``) and private missions shared with them."""

from __future__ import annotations

import json
import threading
from importlib import resources
from pathlib import Path
from typing import Any

from ..accounts.identity import User
from ..accounts.sharing import SharingService

MISSION = "mission"


class MissionService:
    """Missions come from a JSON file (``{"missions": [...], "orbitsearch": {...}}``), reloaded when it changes."""

    def __init__(self, sharing: SharingService, missions_file: str = "") -> None:
        self.sharing = sharing
        self.path = Path(missions_file) if missions_file else None
        self._lock = threading.Lock()
        self._mtime: float | None = None
        self._config: dict[str, Any] = {}

    def _load(self) -> dict[str, Any]:
        with self._lock:
            if self.path is None:
                if not self._config:
                    text = resources.files("wasdi_server").joinpath("data/missions.json").read_text("utf-8")
                    self._config = json.loads(text)
                return self._config
            mtime = self.path.stat().st_mtime
            if mtime != self._mtime:
                self._config = json.loads(self.path.read_text("utf-8"))
                self._mtime = mtime
            return self._config

    def all(self) -> list[dict[str, Any]]:
        return list(self._load().get("missions", []))

    def can_access(self, user: User, mission: dict[str, Any]) -> bool:
        if mission.get("ispublic", True) or user.is_admin:
            return True
        if mission.get("userid") == user.user_id:
            return True
        shared = self.sharing.shared_with(user.user_id, MISSION)
        return str(mission.get("indexvalue")) in shared

    def client_config(self, user: User) -> dict[str, Any]:
        config = self._load()
        missions = [m for m in config.get("missions", []) if self.can_access(user, m)]
        return {"missions": missions, "orbitsearch": config.get("orbitsearch", {})}

    def private_missions(self, user: User) -> list[dict[str, Any]]:
        """Private missions the user owns or has a sharing on, as PrivateMissionViewModel fields."""
        shared = self.sharing.shared_with(user.user_id, MISSION)
        out = []
        for m in self.all():
            if m.get("ispublic", True):
                continue
            value = str(m.get("indexvalue"))
            owner = m.get("userid") or ""
            record = shared.get(value)
            if owner != user.user_id and record is None:
                continue
            out.append({
                "missionName": m.get("name"), "missionIndexValue": value, "missionOwner": owner,
                "userId": user.user_id,
                "permissionType": record["permissions"] if record else "write",
                "permissionCreationDate": record["createdDate"] if record else None,
                "permissionCreatedBy": record["createdBy"] if record else owner,
            })
        return out
