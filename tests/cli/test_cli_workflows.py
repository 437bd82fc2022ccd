"""``wasdi workflows ...`` against the in-process server, runs through a stand-in gpt."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import BOB, BOB_PASSWORD, Cli
from tests.server.geodata import make_geotiff
from tests.server.snap import graph, install_gpt

GRAPH = graph()
TWO = graph(reads=("Read", "Read(2)"))


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    path = tmp_path / "scale.xml"
    path.write_bytes(GRAPH)
    return path


def upload(cli: Cli, path: Path, *extra: str) -> str:
    result = cli("workflows", "upload", str(path), *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_upload_list_show_and_update(alice: Cli, graph_file: Path, tmp_path: Path) -> None:
    flow_id = upload(alice, graph_file, "--description", "times", "--public")
    assert len(flow_id) == 36
    listed = alice("workflows", "list", "--json")
    assert listed.exit_code == 0
    (entry,) = json.loads(listed.stdout)
    assert entry["workflowId"] == flow_id and entry["inputNodeNames"] == ["Read"] and entry["isPublic"] is True
    assert alice("workflows", "list", "-q").stdout.split() == [flow_id]
    shown = alice("workflows", "show", "SCALE")
    assert shown.exit_code == 0 and "Read" in shown.stdout and "Write" in shown.stdout
    assert alice("workflows", "show", "scale", "--xml").stdout.strip() == GRAPH.decode().strip()
    two = tmp_path / "two.xml"
    two.write_bytes(TWO)
    result = alice("workflows", "update", "scale", "--file", str(two), "--name", "scale2")
    assert result.exit_code == 0, result.output
    assert json.loads(alice("workflows", "show", "scale2", "--json").stdout)["inputNodeNames"] == ["Read", "Read(2)"]
    result = alice("workflows", "update", "scale2", "--file", "-", input=GRAPH.decode())
    assert result.exit_code == 0 and "Replaced" in result.stderr
    result = alice("workflows", "update", "scale2", "--file", "-", input=GRAPH.decode())
    assert result.exit_code == 0 and "unchanged" in result.stderr
    assert alice("workflows", "update", "scale2").exit_code == 2


def test_errors_are_sentences(alice: Cli, tmp_path: Path) -> None:
    bad = tmp_path / "bad.xml"
    bad.write_text("<StyledLayerDescriptor/>")
    result = alice("workflows", "upload", str(bad))
    assert result.exit_code == 1 and "not a SNAP graph" in result.stderr
    missing = alice("workflows", "show", "nope")
    assert missing.exit_code == 1 and "no workflow has the id or name 'nope'" in missing.stderr
    assert alice("workflows", "delete", "nope", "--yes").exit_code == 1
    assert alice("workflows", "run", "nope", "--ws", "x", "-i", "a", "--param", "novalue").exit_code == 2


def test_run_wait_download_share_delete(alice: Cli, graph_file: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    install_gpt(tmp_path / "bin", monkeypatch)
    upload(alice, graph_file)
    assert alice("ws", "create", "floods").exit_code == 0
    tif = make_geotiff(tmp_path / "scene.tif")
    assert alice("products", "upload", str(tif), "--ws", "floods").exit_code == 0
    result = alice("workflows", "run", "scale", "--ws", "floods", "-i", "scene.tif", "-o", "double.tif",
                   "--param", "$SCALE=2", "--wait", "--timeout", "60")
    assert result.exit_code == 0, result.output
    assert "done" in result.stderr
    names = alice("products", "list", "--ws", "floods", "-q").stdout.split()
    assert "double.tif" in names
    failed = alice("workflows", "run", "scale", "--ws", "floods", "-i", "scene.tif", "--wait", "--timeout", "60")
    assert failed.exit_code == 1 and "failed" in failed.stderr  # $SCALE left in the graph: gpt exits 3
    # download
    out = tmp_path / "out"
    out.mkdir()
    assert alice("workflows", "download", "scale", "-o", str(out)).exit_code == 0
    assert (out / "scale.xml").read_bytes() == GRAPH
    assert alice("workflows", "download", "scale", "-o", "-").stdout_bytes == GRAPH
    # share with bob, who then leaves it; then delete
    assert alice("workflows", "share", "add", "scale", BOB).exit_code == 0
    assert BOB in alice("workflows", "share", "list", "scale").stdout
    bob = alice("login", "--user", BOB, "--password-stdin", "--profile", "bob", input=BOB_PASSWORD + "\n")
    assert bob.exit_code == 0
    left = alice("workflows", "delete", "scale", "--yes", "--profile", "bob")
    assert left.exit_code == 0 and "Left workflow" in left.stderr
    deleted = alice("workflows", "delete", "scale", "--yes")
    assert deleted.exit_code == 0 and "Deleted workflow" in deleted.stderr
    assert alice("workflows", "list", "-q").stdout.strip() == ""
