"""Stored app records for the store, payment, template and review tests (the upload endpoint is not theirs)."""

from __future__ import annotations

import uuid
from typing import Any

from tests.conftest import Person, Server

from wasdi_server.dates import now_ms


def make_app(server: Server, owner: Person, name: str, **fields: Any) -> dict[str, Any]:
    """An app record with exactly the documented fields (domains/apps/app_records.py), overridable, stored."""
    return server.services.store.collection("processors").insert(app_record(owner.user_id, name, **fields))


def app_record(owner_id: str, name: str, **fields: Any) -> dict[str, Any]:
    """The record ``make_app`` stores."""
    stamp = now_ms()
    doc: dict[str, Any] = {
        "processorId": str(uuid.uuid4()), "name": name, "version": "1", "description": f"{name} app",
        "userId": owner_id, "type": "python312", "isPublic": 0, "paramsSample": "", "minuteTimeout": 180,
        "deploymentOngoing": False, "deployed": True, "uploadDate": stamp, "lastUpdate": stamp, "logo": "",
        "placeholderIndex": 3, "showInStore": False, "friendlyName": "", "link": "", "email": "",
        "longDescription": "", "categories": [], "ondemandPrice": 0.0, "squareKilometerPrice": 0.0,
        "subscriptionPrice": 0.0, "areaParameterName": "", "uiJson": "",
    }
    doc.update(fields)
    return doc


def share_app(server: Server, owner: Person, app: dict[str, Any], who: Person, rights: str = "read") -> None:
    r = server.put("/processors/share/add", owner, processorId=app["processorId"], userId=who.user_id, rights=rights)
    assert r.status_code == 200 and r.json["boolValue"] is True, r.text
