"""Moving a one-machine data directory into a deployment: ``wasdi-server store copy --to postgresql://...``
copies what the nodes share into the database; the data directory keeps its own, and serves as the main node."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from tests.conftest import PASSWORD, Server
from wasdi_server.cli import app


def test_a_data_directory_moves_into_a_deployment_with_nothing_stranded(tmp_path: Path, pg_url: str) -> None:
    data = tmp_path / "data"
    alone = Server(data)
    alice = alone.add_user("alice@example.org")
    workspace = alone.get("/ws/create", alice, name="floods").json["stringValue"]
    owner = alone.services.users.active_user("alice@example.org")
    process = alone.services.processes.create(owner, workspace, "INGEST", "scene.tif")
    alone.close()

    runner = CliRunner()
    done = runner.invoke(app, ["store", "copy", "--to", pg_url, "--data-dir", str(data)])
    assert done.exit_code == 0, done.output
    assert "workspaces\t1" in done.output and "users\t1" in done.output
    assert "process_workspaces" not in done.output  # the node's own, kept in the data directory

    main = Server(data, store_url=pg_url, node_secret="s" * 16, public_url="http://127.0.0.1:1")
    try:
        login = main.post("/auth/login", json={"userId": "alice@example.org", "userPassword": PASSWORD}).json
        session = {"x-session-token": login["sessionId"]}
        listed = main.http.simulate_get("/ws/byuser", headers=session).json
        assert [w["workspaceId"] for w in listed] == [workspace]
        assert main.http.simulate_get("/process/byws", params={"workspace": workspace},
                                      headers=session).json[0]["processObjId"] == process["processObjId"]
        assert main.services.store.shared.collection("users").count() == 1  # in the database now
    finally:
        main.close()

    again = runner.invoke(app, ["store", "copy", "--to", pg_url, "--data-dir", str(data)])
    assert again.exit_code == 1 and "already holds" in again.output and "empty database" in again.output
