"""A user with something of every kind the server keeps, and the check that none of it is left.

Used by the admin tests (in-process) and by the crash test (against a real server's data directory).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.server.app_fixtures import app_record
from tests.server.snap import graph

from wasdi_server.composition import Services
from wasdi_server.store.tinydb_store import read_documents

SLD = (b'<?xml version="1.0" encoding="UTF-8"?>\n<StyledLayerDescriptor version="1.0.0" '
       b'xmlns="http://www.opengis.net/sld"><NamedLayer><Name>x</Name><UserStyle><FeatureTypeStyle><Rule>'
       b'<RasterSymbolizer><ColorMap type="ramp"><ColorMapEntry color="#ff0000" quantity="0"/>'
       b'<ColorMapEntry color="#0000ff" quantity="1"/></ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle>'
       b"</UserStyle></NamedLayer></StyledLayerDescriptor>")

OWNER_FIELDS = ("userId", "ownerId")
"""Fields that say whose a record is (``createdBy`` is history of someone else's resource, not ownership)."""


def build_estate(services: Services, user_id: str, other_id: str, tag: str, workspaces: int = 2) -> dict[str, Any]:
    """Give ``user_id`` workspaces with files and processes, a style, an organization, a subscription
    (the trial), sharings given to and received from ``other_id``, an upload account, an avatar and a
    process in ``other_id``'s workspace.  Returns the ids of what ``other_id`` owns, to check it stays."""
    user = services.users.active_user(user_id)
    other = services.users.active_user(other_id)
    assert user is not None and other is not None
    for i in range(workspaces):
        ws = services.workspaces.create(user, f"{tag}-ws-{i}")
        folder = services.workspaces.folder(ws)
        (folder / f"{tag}-{i}.txt").write_text("data")
        record = services.processes.create(user, ws["workspaceId"], "INGEST", f"{tag}-{i}.txt")
        services.process_logs.logs.append(record["processObjId"], f"a log line of {user_id}", 0)
        services.workspaces.share(user, ws["workspaceId"], other_id, "write")
    staged = services.styles.write_staged(SLD)
    style = services.styles.create(user, f"{tag}_style", "mine", False, staged)
    services.styles.share(user, style["styleId"], other_id, "read")
    org_id = services.organizations.create(user, {"name": f"{tag} org"})
    services.organizations.share(user, org_id, other_id, "read")
    theirs = services.workspaces.create(other, f"{tag}-theirs")
    services.workspaces.share(other, theirs["workspaceId"], user_id, "write")
    services.processes.create(user, theirs["workspaceId"], "INGEST", "visitor.txt")
    their_org = services.organizations.create(other, {"name": f"{tag} their org"})
    services.organizations.share(other, their_org, user_id, "read")
    services.uploads.create(user, user_id)
    (services.uploads.folder(user_id) / "up.bin").write_bytes(b"x")
    avatar = services.images.folder_path("users", user_id)
    avatar.mkdir(parents=True, exist_ok=True)
    (avatar / "avatar.png").write_bytes(b"png")
    # Apps, their templates, reviews and payments, and a SNAP workflow: the groups that register their own
    # cleanups with the user deletion.
    app = services.store.collection("processors").insert(app_record(user_id, f"{tag}-app", isPublic=1))
    app_folder = services.apps.layout(app).folder
    app_folder.mkdir(parents=True, exist_ok=True)
    (app_folder / "myProcessor.py").write_text("def run():\n    pass\n")
    services.app_store.share(user, app["processorId"], other_id, "read")
    their_app = services.store.collection("processors").insert(app_record(other_id, f"{tag}-their-app", isPublic=1))
    services.param_templates.add(user, {"processorId": app["processorId"], "name": f"{tag} template"})
    services.param_templates.add(user, {"processorId": their_app["processorId"], "name": f"{tag} on theirs"})
    services.reviews.add_review(user, {"processorId": their_app["processorId"], "vote": 4, "title": "good"})
    graph_file = services.settings.data_dir / f"{tag}-graph.xml"
    graph_file.write_bytes(graph())
    services.workflows.create(user, f"{tag} flow", "mine", False, graph_file)
    services.sessions.open(user_id)
    return {"workspace": theirs["workspaceId"], "organization": their_org, "app": their_app["processorId"]}


def stored_documents(data_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Every stored document by collection and id, read through the store's own read-only reader (no lock taken,
    so it works whether or not a server holds the data directory)."""
    return {name: {str(k): v for k, v in table.items()} for name, table in read_documents(data_dir).items()}


def leftovers(data_dir: Path, user_id: str) -> list[str]:
    """Everything in the store and the data folders that still belongs to ``user_id``."""
    found = [f"{name}: {json.dumps(doc, sort_keys=True)}"
             for name, table in sorted(stored_documents(data_dir).items()) for doc in table.values()
             if any(doc.get(f) == user_id for f in OWNER_FIELDS)]
    for log in sorted((data_dir / "logs").glob("*.jsonl")) if (data_dir / "logs").is_dir() else []:
        if user_id in log.read_text():
            found.append(f"log {log.name}")
    for root in ("files", "uploads", "images/users"):
        if (data_dir / root / user_id).exists():
            found.append(f"folder {root}/{user_id}")
    return found


def owned_keys(data_dir: Path, user_id: str) -> set[tuple[str, str]]:
    """``(collection, key)`` of every stored record that belongs to ``user_id`` (contents may change)."""
    from wasdi_server.composition import COLLECTIONS

    return {(name, str(doc.get(COLLECTIONS.get(name, ""))))
            for name, table in stored_documents(data_dir).items() for doc in table.values()
            if any(doc.get(f) == user_id for f in OWNER_FIELDS)}
