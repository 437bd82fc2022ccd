"""The message catalogue (gaps §7) as a listener of the built-in broker hears it: each code produced by the
operation that sends it, with its payload, in one workspace followed by the SDK over a real socket.

(GRAPH, SUBSCRIPTION and the apps' codes are checked where those operations are: test_workflows,
test_subscriptions, test_apps.)
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Person
from tests.messages_support import (
    LiveServer,
    live_server,  # noqa: F401 (the server fixture)
)
from tests.server.geodata import ingested, make_geotiff, new_workspace, wait_process

from wasdi_sdk.models.events import (
    DeleteMessage,
    FailureMessage,
    ProcessUpdateMessage,
    ProductMessage,
    PublishBandMessage,
    TextMessage,
    WorkspaceMessage,
)


def heard(events: object, until: type[WorkspaceMessage], code: str) -> list[WorkspaceMessage]:
    """Messages up to the first ``until`` with ``code`` (what came before included)."""
    got: list[WorkspaceMessage] = []
    while True:
        message = events.get(20)  # type: ignore[attr-defined]
        assert message is not None, f"no {code} message; heard {[(m.message_code, m.text()) for m in got]}"
        got.append(message)
        if isinstance(message, until) and message.message_code == code:
            return got


def test_each_operation_sends_its_code(server: LiveServer, alice: Person, tmp_path: Path) -> None:
    ws = new_workspace(server, alice)
    other = new_workspace(server, alice, "other")
    sdk = server.sdk(alice)
    with sdk.events.listen(ws, timeout=120) as events, sdk.events.listen(other, timeout=120) as other_events:
        # An upload is ingested: the process's updates, then INGEST with the product.
        record = ingested(server, alice, ws, make_geotiff(tmp_path / "scene.tif", count=1))
        got = heard(events, ProductMessage, "INGEST")
        updates = [m for m in got if isinstance(m, ProcessUpdateMessage)]
        assert [u.status for u in updates][:1] == ["RUNNING"] and updates[0].message_result is None
        assert got[-1].payload.file_name == record["fileName"]  # type: ignore[union-attr]
        ingest_done = heard(events, ProcessUpdateMessage, "UPDATEPROCESSES")[-1]
        assert isinstance(ingest_done, ProcessUpdateMessage) and ingest_done.status == "DONE"
        assert ingest_done.progress_perc == 100

        # An import from a file URL: DOWNLOAD with the product.
        source = server.settings.data_dir / "imports" / "S2B_MSIL1C_import.tif"
        source.parent.mkdir(exist_ok=True)
        source.write_bytes((tmp_path / "scene.tif").read_bytes())
        r = server.post("/filebuffer/download", alice, json={"fileUrl": source.as_uri(), "workspace": ws})
        assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
        download = heard(events, ProductMessage, "DOWNLOAD")[-1]
        assert download.payload.file_name == "S2B_MSIL1C_import.tif"  # type: ignore[union-attr]

        # An import that fails: a KO DOWNLOAD saying why (this server's own network is not for imports).
        r = server.post("/filebuffer/download", alice,
                        json={"fileUrl": "http://127.0.0.1:9/S2B_MSIL1C_x.tif", "workspace": ws})
        assert wait_process(server, r.json["stringValue"])["status"] == "ERROR"
        failure = heard(events, FailureMessage, "DOWNLOAD")[-1]
        assert not failure.ok and failure.payload

        # A band published: PUBLISHBAND with where it is on the map server.
        params = {"fileUrl": "scene.tif", "workspace": ws, "band": "red"}
        queued = server.get("/filebuffer/publishband", alice, **params).json
        assert wait_process(server, queued["payload"])["status"] == "DONE"
        band = heard(events, PublishBandMessage, "PUBLISHBAND")[-1]
        assert band.payload.band_name == "red" and band.payload.layer_id  # type: ignore[union-attr]

        # A copy to another workspace: SHARE, heard in the destination.
        r = server.get("/filebuffer/share", alice, originWorkspaceId=ws, destinationWorkspaceId=other,
                       productName="scene.tif")
        assert wait_process(server, r.json["stringValue"])["status"] == "DONE"
        shared = heard(other_events, ProductMessage, "SHARE")[-1]
        assert shared.payload.file_name == "scene.tif" and shared.workspace_id == other  # type: ignore[union-attr]

        # Metadata asked for the first time: an INFO while it is read.
        assert server.get("/product/metadatabyname", alice, name="scene.tif", workspace=ws).status_code == 200
        info = heard(events, TextMessage, "INFO")[-1]
        assert info.payload.startswith("Read Metadata Operation")  # type: ignore[union-attr]

        # Products deleted: DELETE.
        assert server.get("/product/delete", alice, name="scene.tif", workspace=ws).status_code == 200
        deleted = heard(events, DeleteMessage, "DELETE")[-1]
        assert deleted.ok and deleted.payload is None

        # An app reporting its progress (the official library's updateProgressPerc): UPDATEPROCESSES.
        pid = server.get("/process/lastbyws", alice, workspace=ws).json[0]["processObjId"]
        server.get("/process/updatebyid", alice, procws=pid, status="RUNNING", perc="55", sendrabbit="1")
        update = heard(events, ProcessUpdateMessage, "UPDATEPROCESSES")[-1]
        assert isinstance(update, ProcessUpdateMessage)
        assert (update.process_id, update.status, update.progress_perc) == (pid, "RUNNING", 55)
