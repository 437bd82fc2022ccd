"""client.workflows against the real app (every method, failures as exceptions) and with respx (the
wire form of updatexml)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
import respx
from tests.conftest import Person, Server
from tests.server.geodata import make_geotiff, new_workspace, upload, wait_all
from tests.server.snap import graph, install_gpt

from wasdi_sdk import (
    AuthenticationError,
    BadRequestError,
    NoContentError,
    NotModifiedError,
    PermissionDeniedError,
    WasdiClient,
)
from wasdi_sdk.models import SnapWorkflowViewModel

GRAPH = graph()
TWO = graph(reads=("Read", "Read(2)"))


def test_workflow_round_trip(server: Server, alice: Person, bob: Person, tmp_path: Path,
                             monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    client = server.sdk(alice)
    source = tmp_path / "flow.xml"
    source.write_bytes(GRAPH)
    client.workflows.upload(source, name="scale", description="x2")
    flow = client.workflows.get_by_name("Scale")
    assert isinstance(flow, SnapWorkflowViewModel) and flow.workflow_id
    assert flow.input_node_names == ["Read"] and flow.output_node_names == ["Write"] and flow.is_public is False
    assert [w.name for w in client.workflows.list()] == ["scale"]
    assert client.workflows.get_xml(flow.workflow_id).encode() == GRAPH
    with pytest.raises(NotModifiedError):
        client.workflows.update_xml(workflow_id=flow.workflow_id, xml=GRAPH.decode())
    client.workflows.update_xml(workflow_id=flow.workflow_id, xml=TWO.decode())
    assert client.workflows.get_by_name("scale").input_node_names == ["Read", "Read(2)"]
    client.workflows.update_file(source, workflowid=flow.workflow_id)
    client.workflows.update_params(flow.workflow_id, description="times two", public=True)
    assert client.workflows.list()[0].description == "times two"
    # run it through the stand-in gpt
    ws = new_workspace(server, alice, "sdk")
    assert upload(server, alice, ws, make_geotiff(tmp_path / "in.tif")).status_code == 200
    wait_all(server, ws, "INGEST")
    result = client.workflows.run(workspace=ws, workflow_id=flow.workflow_id, input_file_names=["in.tif"],
                                  output_file_names=["out.tif"], template_params={"$SCALE": 2})
    assert result.bool_value is True and result.string_value
    done = client.wait_for_process(result.string_value, poll_interval=0.05, timeout=30)
    assert done.status == "DONE"
    assert "out.tif" in [p.file_name for p in client.products.list(workspace=ws)]
    # download: bytes, and to a folder under the workflow's name
    assert client.workflows.download(flow.workflow_id) == GRAPH
    saved = client.workflows.download(flow.workflow_id, to=tmp_path)
    assert saved.name == "scale.xml" and saved.read_bytes() == GRAPH
    # sharing
    assert client.workflows.share_add(workflow_id=flow.workflow_id, user_id=bob.user_id).string_value == "Done"
    with pytest.raises(BadRequestError, match="Already shared"):
        client.workflows.share_add(workflow_id=flow.workflow_id, user_id=bob.user_id)
    assert [s.user_id for s in client.workflows.share_list(flow.workflow_id)] == [bob.user_id]
    other = server.sdk(bob)
    assert other.workflows.list()[0].shared_with_me is True
    other.workflows.delete(flow.workflow_id)  # removes only bob's sharing
    assert client.workflows.share_list(flow.workflow_id) == []
    client.workflows.delete(flow.workflow_id)
    with pytest.raises(NoContentError):
        client.workflows.download(flow.workflow_id)
    assert client.workflows.list() == []


def test_failures_are_exceptions(server: Server, alice: Person, bob: Person, tmp_path: Path) -> None:
    client = server.sdk(alice)
    bad = tmp_path / "bad.xml"
    bad.write_bytes(b"<notagraph/>")
    with pytest.raises(BadRequestError, match="not a SNAP graph"):
        client.workflows.upload(bad, name="bad")
    good = tmp_path / "good.xml"
    good.write_bytes(GRAPH)
    client.workflows.upload(good, name="private")
    flow_id = client.workflows.get_by_name("private").workflow_id
    assert flow_id
    with pytest.raises(PermissionDeniedError):
        server.sdk(bob).workflows.get_xml(flow_id)
    with pytest.raises(PermissionDeniedError):
        server.sdk(bob).workflows.run(workspace="w", workflow_id=flow_id, input_file_names=["x"])
    with pytest.raises(AuthenticationError):
        server.sdk(None).workflows.get_by_name("private")


@respx.mock
def test_update_xml_sends_the_xml_as_the_body() -> None:
    route = respx.post("http://wasdi.test/rest/workflows/updatexml").mock(return_value=httpx.Response(200))
    with WasdiClient(base_url="http://wasdi.test/rest", session_token="t", max_retries=0) as client:
        client.workflows.update_xml(workflow_id="w1", xml="<graph/>")
    request = route.calls.last.request
    assert request.url.params["workflowId"] == "w1" and request.content == b"<graph/>"
    assert request.headers["content-type"] == "application/xml"
