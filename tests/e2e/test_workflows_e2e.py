"""Workflows end to end on a real server process: a SNAP graph uploaded with the SDK, its Read and Write
nodes detected, run through a stand-in ``gpt`` on the server's PATH to an output product in the workspace,
with gpt's output in the run log; another user refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.e2e.test_data_e2e import make_geotiff
from tests.server.snap import graph, install_gpt

pytestmark = pytest.mark.e2e


def test_a_snap_graph_runs_through_gpt_to_an_output_product(servers, data_dir: Path, accounts, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)  # the server process inherits this PATH
    server = servers.start(data_dir)
    source = tmp_path / "scale.xml"
    source.write_bytes(graph(reads=("Read",), writes=("Write",)))
    with server.sdk(accounts.alice) as sdk:
        sdk.workflows.upload(source, name="scale", description="multiply band_1")
        flow = sdk.workflows.get_by_name("scale")
        assert flow.input_node_names == ["Read"] and flow.output_node_names == ["Write"]
        ws = sdk.workspaces.create(name="graphs").string_value
        assert ws
        sdk.upload_and_ingest(ws, make_geotiff(tmp_path / "scene.tif"), timeout=60)
        assert flow.workflow_id
        started = sdk.workflows.run(workspace=ws, workflow_id=flow.workflow_id, input_file_names=["scene.tif"],
                                    template_params={"$SCALE": "2"})
        assert started.bool_value and started.string_value
        final = sdk.wait_for_process(started.string_value, poll_interval=0.2, timeout=60)
        assert final.status == "DONE" and final.operation_type == "GRAPH"
        products = {p.file_name: p for p in sdk.products.list(workspace=ws)}
        assert "scene_scale.tif" in products and products["scene_scale.tif"].bbox
        log = [row.log_row for row in sdk.processors.list_logs(started.string_value)]
        assert "gpt: expression 2 * band_1" in log and "gpt: wrote scene_scale.tif" in log
        # bob cannot run alice's private workflow, even in his own workspace
        with server.sdk(accounts.bob) as other:
            from wasdi_sdk import PermissionDeniedError

            bobs = other.workspaces.create(name="bobs").string_value
            assert bobs
            with pytest.raises(PermissionDeniedError):
                other.workflows.run(workspace=bobs, workflow_id=flow.workflow_id, input_file_names=["x.tif"])


def test_the_official_library_runs_a_workflow(waspy, servers, data_dir: Path, accounts, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import json

    install_gpt(tmp_path / "bin", monkeypatch)
    server = servers.start(data_dir)
    source = tmp_path / "flow.xml"
    source.write_bytes(graph())
    with server.sdk(accounts.alice) as sdk:
        sdk.workflows.upload(source, name="lib flow")
        ws = sdk.workspaces.create(name="waspy graphs").string_value
        assert ws
        sdk.upload_and_ingest(ws, make_geotiff(tmp_path / "in.tif"), timeout=60)
    config = {"USER": accounts.alice, "PASSWORD": accounts.password, "BASEURL": server.base_url,
              "BASEPATH": str(tmp_path / "waspy-data") + "/", "WORKSPACE": "waspy graphs", "REQUESTSTIMEOUT": 30,
              "POLLINGSLEEPSECONDS": 1, "VERBOSE": False}
    (tmp_path / "config.json").write_text(json.dumps(config))
    assert waspy.init(str(tmp_path / "config.json")) is True
    assert [w["name"] for w in waspy.getWorkflows()] == ["lib flow"]
    assert waspy.executeWorkflow("in.tif", "out.tif", "lib flow", {"$SCALE": "3"}) == "DONE"
    assert "out.tif" in waspy.getProductsByActiveWorkspace()
