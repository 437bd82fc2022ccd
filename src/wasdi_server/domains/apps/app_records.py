"""What an app (processor) is in the store, and who may see or change it: the one definition that the
deploy/run service, the store (market), payments, templates and the admin console all read.

A record of the ``processors`` collection (key ``processorId``)::

    processorId        str    random UUID
    name               str    unique, lower case, trimmed (gaps §9)
    version            str    "1" at upload
    description        str
    userId             str    the owner
    type               str    a processor type string (``PROCESSOR_TYPES``); unknown/empty -> DEFAULT_TYPE
    isPublic           int    1 public, 0 private (DeployedProcessorViewModel's int, gaps §0.5)
    paramsSample       str    JSON text, "" when none
    minuteTimeout      int    minutes; -1 = no timeout (default 180)
    deploymentOngoing  bool   true while a build runs
    deployed           bool   the last build succeeded (a failed build leaves the app not runnable)
    uploadDate         float  epoch ms (AppDetailViewModel.publishDate)
    lastUpdate         float  epoch ms
    logo               str    absolute images/get link, "" when none
    placeholderIndex   int    1..7, fixed per app (imgLink placeholder, gaps §4)
    showInStore        bool   false at upload
    friendlyName, link, email, longDescription     str
    categories         list[str]   category ids
    ondemandPrice, squareKilometerPrice, subscriptionPrice   float (0 = free)
    areaParameterName  str
    uiJson             str    the app's UI descriptor, "" = default ``{"tabs":[]}``

The app's files live under ``<data_dir>/processors/<name>/`` and its environment beside them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...errors import NotFound
from ...store import Collection
from ..accounts.identity import User
from ..accounts.sharing import Resource, SharingService

PROCESSOR = "processor"
"""The stored resource type of apps in sharings."""

DEFAULT_TYPE = "ubuntu_python37_snap"
DEFAULT_MINUTE_TIMEOUT = 180

PYTHON_TYPES = frozenset({"python312", "local_python312", "pip_oneshot", "python_pip_2", "python_pip_2_ubuntu_20",
                          "ubuntu_python37_snap"})
"""Types whose engine is Python + pip: this server builds and runs them in a virtual environment."""

PROCESSOR_TYPES = frozenset(PYTHON_TYPES | {"conda", "ubuntu_idl372", "octave", "jupyter-notebook", "csharp",
                                            "eoepca", "java_17_Ubuntu_22", "personalized_docker"})
"""Every type string of the original server (gaps §4)."""


def normalise_type(value: str | None) -> str:
    """The stored type: one of ``PROCESSOR_TYPES`` as given, anything else the default (gaps §0.13)."""
    candidate = (value or "").strip()
    return candidate if candidate in PROCESSOR_TYPES else DEFAULT_TYPE


def normalise_name(value: str | None) -> str:
    """App names are stored lower case and trimmed."""
    return (value or "").strip().lower()


def is_public(doc: Mapping[str, Any]) -> bool:
    value = doc.get("isPublic")
    if isinstance(value, str):
        return value.strip().lower() in {"1", "true"}
    return bool(value)


def processor_resource(doc: Mapping[str, Any]) -> Resource:
    """The app as the sharing module sees it."""
    return Resource(PROCESSOR, str(doc["processorId"]), str(doc.get("userId") or ""), str(doc.get("name") or ""))


class AppRecords:
    """Lookups and access rules over the ``processors`` collection."""

    def __init__(self, processors: Collection, sharing: SharingService) -> None:
        self.processors = processors
        self.sharing = sharing

    def get(self, processor_id: str | None) -> dict[str, Any] | None:
        return self.processors.get(processor_id) if processor_id else None

    def by_name(self, name: str | None) -> dict[str, Any] | None:
        wanted = normalise_name(name)
        return self.processors.find_one(name=wanted) if wanted else None

    def by_id_or_name(self, value: str | None) -> dict[str, Any] | None:
        return self.get(value) or self.by_name(value)

    def require(self, processor_id: str | None) -> dict[str, Any]:
        doc = self.get(processor_id)
        if doc is None:
            raise NotFound(f"no app with id {str(processor_id)[:80]!r}")
        return doc

    def require_by_name(self, name: str | None) -> dict[str, Any]:
        doc = self.by_name(name)
        if doc is None:
            raise NotFound(f"no app named {str(name)[:80]!r}")
        return doc

    # -- rights ----------------------------------------------------------------------------------
    def can_read(self, user: User, doc: Mapping[str, Any]) -> bool:
        """Public apps are readable by everyone; others by the owner, sharers and admins."""
        return is_public(doc) or self.sharing.can_read(user, processor_resource(doc))

    def can_write(self, user: User, doc: Mapping[str, Any]) -> bool:
        return self.sharing.can_write(user, processor_resource(doc))

    def is_owner(self, user: User, doc: Mapping[str, Any]) -> bool:
        return doc.get("userId") == user.user_id

    def visible_to(self, user: User) -> list[dict[str, Any]]:
        """Owned, shared with the user, and public apps (admins see every app)."""
        if user.is_admin:
            return self.processors.all()
        shared = self.sharing.shared_with(user.user_id, PROCESSOR)
        return [d for d in self.processors.all()
                if d.get("userId") == user.user_id or d["processorId"] in shared or is_public(d)]
