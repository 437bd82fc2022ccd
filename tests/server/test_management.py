"""``wasdi-server user ...`` and ``catalogue ...``: accounts managed also while a server runs, the local catalogue."""

from __future__ import annotations

import json
import socket
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from tests.box_jobs import python_job
from tests.conftest import PASSWORD, Server

from wasdi_server import cli
from wasdi_server.launcher.box import Box
from wasdi_server.management import catalogue, channel

NEW = "colleague@example.org"


@pytest.fixture
def running(server: Server) -> Iterator[Server]:
    """The test server with its admin channel listening, as ``wasdi-server serve`` runs it."""
    listening = channel.AdminChannel(server.services)
    assert listening.start()
    yield server
    listening.stop()


def login(server: Server, user: str, password: str) -> dict:
    return server.post("/auth/login", json={"userId": user, "userPassword": password}).json


def test_users_are_managed_through_the_running_server(running: Server, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = str(running.settings.data_dir)
    monkeypatch.setattr("sys.stdin", _Lines(PASSWORD))
    # The store is locked by the running server: only the channel can reach it.
    assert cli.main(["user", "add", NEW, "--password-stdin", "--data-dir", data_dir]) == 0
    assert "added user colleague@example.org" in capsys.readouterr().out
    assert login(running, NEW, PASSWORD)["sessionId"]
    assert cli.main(["user", "list", "--data-dir", data_dir]) == 0
    assert f"{NEW}\tUSER\tactive" in capsys.readouterr().out

    assert cli.main(["user", "disable", NEW, "--data-dir", data_dir]) == 0
    assert not login(running, NEW, PASSWORD).get("sessionId")
    assert cli.main(["user", "enable", NEW, "--data-dir", data_dir]) == 0
    assert login(running, NEW, PASSWORD)["sessionId"]

    capsys.readouterr()
    assert cli.main(["user", "reset-password", NEW, "--data-dir", data_dir]) == 0
    new_password = capsys.readouterr().out.rsplit(": ", 1)[1].strip()
    assert not login(running, NEW, PASSWORD).get("sessionId")
    assert login(running, NEW, new_password)["sessionId"]


def test_channel_failures_are_one_sentence(running: Server, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir = str(running.settings.data_dir)
    assert cli.main(["user", "disable", "nobody@example.org", "--data-dir", data_dir]) == 1
    assert capsys.readouterr().err == "wasdi-server: there is no user nobody@example.org\n"
    monkeypatch.setattr("sys.stdin", _Lines("short"))
    assert cli.main(["user", "add", NEW, "--password-stdin", "--data-dir", data_dir]) == 1
    err = capsys.readouterr().err
    assert err.startswith("wasdi-server: ") and "Traceback" not in err
    with pytest.raises(channel.ChannelError, match="unknown operation"):
        channel.call(running.settings.data_dir, "store.drop", {})
    with pytest.raises(channel.ChannelError, match="bad arguments"):
        channel.call(running.settings.data_dir, "user.add", {})


def test_the_channel_socket_is_the_owners_only(running: Server) -> None:
    mode = (Path(running.settings.data_dir) / channel.SOCKET_NAME).stat().st_mode
    assert stat.S_ISSOCK(mode) and stat.S_IMODE(mode) == 0o600


def test_a_caller_without_the_channels_key_is_refused(running: Server) -> None:
    data_dir = Path(running.settings.data_dir)
    key = data_dir / channel.KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    for request in ({"operation": "user.list"}, {"key": "guessed", "operation": "user.list"}):
        with socket.socket(socket.AF_UNIX) as s:
            s.connect(str(data_dir / channel.SOCKET_NAME))
            s.sendall(json.dumps(request).encode() + b"\n")
            answer = json.loads(s.makefile("rb").readline())
        assert answer == {"ok": False, "error": channel.REFUSED}


def test_a_boxed_run_can_neither_reach_the_socket_nor_read_the_key(running: Server) -> None:
    """The data directory does not exist in a run's world: neither the channel's socket nor its key."""
    data_dir = Path(running.settings.data_dir)
    code = ("import json, socket, sys\n"
            "try:\n    open(sys.argv[2]).read(); print('read the key')\n"
            "except OSError as e:\n    print('key refused', e.strerror)\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try:\n    s.connect(sys.argv[1])\n"
            "except OSError as e:\n    print('socket refused', e.strerror); sys.exit(0)\n"
            "s.sendall(json.dumps({'operation': 'user.add', 'arguments': {'userId': 'intruder@x.org', "
            "'password': 'Intruder-pass-1', 'admin': True}}).encode() + b'\\n')\n"
            "print(s.makefile('rb').readline().decode().strip())\n")
    job = python_job(code)
    job = replace(job, argv=[*job.argv, str(data_dir / channel.SOCKET_NAME), str(data_dir / channel.KEY_NAME)])
    lines: list[str] = []
    outcome = Box.from_settings(running.settings).run(job, on_output=lines.append)
    assert outcome.exit_code == 0, lines
    assert lines == ["key refused No such file or directory", "socket refused No such file or directory"]
    assert running.services.users.get("intruder@x.org") is None


def test_the_listing_holds_no_secret(running: Server) -> None:
    running.add_user("alice@example.org")
    rows = channel.call(running.settings.data_dir, "user.list")
    assert rows == [{"userId": "alice@example.org", "name": "Alice", "surname": "Test", "role": "USER",
                     "active": True}]


def test_without_a_server_the_store_is_opened_directly(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", _Lines(PASSWORD))
    data_dir = str(tmp_path / "d")
    assert cli.main(["user", "add", NEW, "--admin", "--password-stdin", "--data-dir", data_dir]) == 0
    assert cli.main(["user", "list", "--json", "--data-dir", data_dir]) == 0
    assert '"role": "ADMIN"' in capsys.readouterr().out
    assert cli.main(["user", "add", NEW, "--password-stdin", "--data-dir", data_dir]) == 1


def test_disabling_closes_open_sessions(server: Server) -> None:
    alice = server.add_user("alice@example.org")
    from wasdi_server.management import accounts

    accounts.set_active(server.services, alice.user_id, False)
    assert server.get("/auth/checksession", alice).json.get("userId") in (None, "")


class _Lines:
    def __init__(self, *lines: str) -> None:
        self.lines = [line + "\n" for line in lines]

    def readline(self) -> str:
        return self.lines.pop(0) if self.lines else ""


# -- the local catalogue ---------------------------------------------------------------------------
def test_the_sample_is_searchable(server: Server) -> None:
    written = catalogue.sample(server.settings)
    assert [p.platform for p in written] == ["Sentinel-2", "Sentinel-2", "Sentinel-2", "Sentinel-1"]
    assert all(p.bbox for p in written) and written[0].cloud == 12.0
    assert catalogue.sample(server.settings, if_empty=True) == []
    user = server.add_user("alice@example.org")
    query = ('( footprint:"intersects(POLYGON((7 45,7 46,8 46,8 45,7 45)))") AND ( platformname:Sentinel-2 '
             'AND cloudcoverpercentage:[0 TO 30])')
    # A fresh server built after the sample: the catalogue folder exists now.
    fresh = Server(server.settings.data_dir.parent / "other", search_catalogue_dir=str(catalogue.folder_of(
        server.settings)))
    try:
        user = fresh.add_user("alice@example.org")
        found = fresh.get("/search/query", user, query=query).json
        assert sorted(r["title"] for r in found) == sorted(p.title for p in written if p.cloud is not None
                                                           and p.cloud <= 30)
    finally:
        fresh.close()


def test_catalogue_add_reads_the_files(server: Server, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenes = tmp_path / "scenes"
    scenes.mkdir()
    catalogue.sample(server.settings.__class__(data_dir=scenes))  # real GeoTIFFs to add
    tif = scenes / "catalogue" / catalogue.SAMPLE_SCENES[0].name
    data_dir = str(server.settings.data_dir)
    assert cli.main(["catalogue", "add", str(tif), "--data-dir", data_dir]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"added {tif.name}  Sentinel-2  2024-01-08 10:33  bbox 7,45,7.6,45.6")
    assert cli.main(["catalogue", "add", str(tif), "--data-dir", data_dir]) == 1
    assert "already in the catalogue" in capsys.readouterr().err

    plain = tmp_path / "flood-map.tif"
    plain.write_bytes(tif.read_bytes())
    assert cli.main(["catalogue", "add", str(plain), "--data-dir", data_dir]) == 1
    assert "--platform" in capsys.readouterr().err
    assert cli.main(["catalogue", "add", str(plain), "--platform", "S2", "--data-dir", data_dir]) == 0
    assert (catalogue.folder_of(server.settings) / "Sentinel-2" / plain.name).is_file()
    assert [p.title for p in catalogue.listing(server.settings)] == [tif.name, plain.name]
    assert cli.main(["catalogue", "add", str(tmp_path / "missing.tif"), "--data-dir", data_dir]) == 1
    assert "does not exist" in capsys.readouterr().err
