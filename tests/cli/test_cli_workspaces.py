"""``wasdi ws ...`` against the in-process server."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import ALICE, BOB, BOB_PASSWORD, Cli, lines
from wasdi_cli import output


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


def create(cli: Cli, name: str, *extra: str) -> str:
    result = cli("ws", "create", name, *extra)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def test_create_prints_only_the_new_id(alice: Cli) -> None:
    result = alice("ws", "create", "floods")
    assert result.exit_code == 0, result.output
    ws_id = result.stdout.strip()
    assert result.stdout == ws_id + "\n" and len(ws_id) == 36
    assert "Created workspace 'floods'" in result.stderr
    assert alice.sdk(alice.token()).workspaces.get(ws_id).name == "floods"


def test_create_on_a_node(alice: Cli) -> None:
    ws_id = create(alice, "on-node", "--node", "wasdi")
    assert alice.sdk(alice.token()).workspaces.get(ws_id).node_code == "wasdi"


def test_list_json_is_exactly_the_wire_models(alice: Cli) -> None:
    first, second = create(alice, "floods"), create(alice, "fires")
    result = alice("ws", "list", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)  # the whole of stdout is one JSON document
    expected = [w.to_wire() for w in alice.sdk(alice.token()).workspaces.list()]
    assert data == expected
    assert {w["workspaceId"] for w in data} == {first, second}
    assert {"workspaceId", "workspaceName", "ownerUserId", "sharedUsers", "readOnly"} <= set(data[0])
    assert result.stderr == ""


def test_list_quiet_prints_ids_only(alice: Cli) -> None:
    ids = {create(alice, "floods"), create(alice, "fires")}
    result = alice("ws", "list", "-q")
    assert result.exit_code == 0
    assert set(result.stdout.splitlines()) == ids and len(result.stdout.splitlines()) == 2


def test_list_table(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    result = alice("ws", "list")
    assert result.exit_code == 0, result.output
    rows = lines(result.stdout)
    header = rows[0].split()
    assert header[:4] == ["id", "name", "owner", "node"] and "read-only" in header
    assert "shared" in rows[0] and "size" in rows[0]
    row = next(r for r in rows if ws_id in r)  # a full id, not wrapped or cut
    assert row.split()[:5] == [ws_id, "floods", ALICE, "wasdi", "0B"] and row.rstrip().endswith("no")
    assert all(r == r.rstrip() for r in result.stdout.splitlines())


def test_list_empty(alice: Cli) -> None:
    result = alice("ws", "list")
    assert result.exit_code == 0 and result.stdout == "" and "No workspaces" in result.stderr
    assert alice("ws", "list", "--json").stdout.strip() == "[]"


def test_show_by_id_and_by_name(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    expected = alice.sdk(alice.token()).workspaces.get(ws_id).to_wire()
    by_id = alice("ws", "show", ws_id, "--json")
    by_name = alice("ws", "show", "floods", "--json")
    assert by_id.exit_code == 0 and by_name.exit_code == 0, by_name.output
    assert json.loads(by_id.stdout) == json.loads(by_name.stdout) == expected
    assert json.loads(by_name.stdout)["workspaceId"] == ws_id
    table = alice("ws", "show", "floods")
    assert any(line.split() == ["id", ws_id] for line in table.stdout.splitlines()), table.stdout
    assert any(line.split() == ["owner", ALICE] for line in table.stdout.splitlines())
    assert alice("ws", "show", "floods", "-q").stdout == ws_id + "\n"


def test_show_unknown_workspace(alice: Cli) -> None:
    result = alice("ws", "show", "no-such-workspace")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: no workspace has the id or name 'no-such-workspace'")


def test_a_name_used_by_two_workspaces_needs_the_id(alice: Cli) -> None:
    mine = create(alice, "shared-name")
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    bobs = create(alice, "shared-name", "--profile", "bob")
    assert alice("ws", "share", "add", bobs, ALICE, "--profile", "bob").exit_code == 0
    result = alice("ws", "show", "shared-name")
    assert result.exit_code == 2
    assert mine in result.stderr and bobs in result.stderr
    assert json.loads(alice("ws", "show", bobs, "--json").stdout)["userId"] == BOB


def test_rename(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    result = alice("ws", "rename", "floods", "droughts")
    assert result.exit_code == 0, result.output
    assert "to 'droughts'" in result.stderr
    assert alice.sdk(alice.token()).workspaces.get(ws_id).name == "droughts"
    assert alice("ws", "show", "floods").exit_code == 1


def test_delete_with_yes(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    keep = create(alice, "fires")
    result = alice("ws", "delete", "floods", "--yes")
    assert result.exit_code == 0, result.output
    assert "Deleted workspace 'floods'" in result.stderr
    assert [w.workspace_id for w in alice.sdk(alice.token()).workspaces.list()] == [keep]
    assert ws_id not in alice("ws", "list", "-q").stdout


def test_delete_refuses_without_yes_when_not_a_terminal(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    calls = len(alice.calls)
    result = alice("ws", "delete", ws_id, input="y\n")
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: refusing to delete") and "--yes" in result.stderr
    assert len(alice.calls) == calls  # refused before talking to the server
    assert alice("ws", "list", "-q").stdout.strip() == ws_id


def test_delete_asks_on_a_terminal(alice: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(output, "stdin_is_tty", lambda: True)
    ws_id = create(alice, "floods")
    no = alice("ws", "delete", "floods", input="n\n")
    assert no.exit_code == 1 and "Cancelled" in no.stderr
    assert "Delete workspace 'floods'" in no.stderr
    assert alice("ws", "list", "-q").stdout.strip() == ws_id
    yes = alice("ws", "delete", "floods", input="y\n")
    assert yes.exit_code == 0, yes.output
    assert alice("ws", "list", "-q").stdout == ""


def test_delete_keep_files(alice: Cli) -> None:
    folders = {}
    for name in ("kept", "gone"):
        ws_id = create(alice, name)
        folder = alice.app.services.workspaces.folder({"userId": ALICE, "workspaceId": ws_id})
        (folder / "scene.tif").write_bytes(b"data")
        folders[name] = folder
    assert alice("ws", "delete", "kept", "--yes", "--keep-files").exit_code == 0
    assert alice("ws", "delete", "gone", "--yes").exit_code == 0
    assert (folders["kept"] / "scene.tif").exists()
    assert not folders["gone"].exists()


def test_share_add_list_remove(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    added = alice("ws", "share", "add", "floods", BOB, "--rights", "write")
    assert added.exit_code == 0, added.output
    assert BOB in added.stderr and added.stdout == ""

    as_json = alice("ws", "share", "list", "floods", "--json")
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout) == [s.to_wire() for s in alice.sdk(alice.token()).workspaces.share_list(ws_id)]
    assert json.loads(as_json.stdout) == [{"workspaceId": ws_id, "userId": BOB, "ownerId": ALICE,
                                           "permissions": "write"}]
    assert alice("ws", "share", "list", ws_id, "-q").stdout == BOB + "\n"
    table = alice("ws", "share", "list", "floods")
    assert any(line.split()[:2] == [BOB, "write"] for line in table.stdout.splitlines()), table.stdout
    assert BOB in alice("ws", "list").stdout  # the "shared with" column

    removed = alice("ws", "share", "remove", "floods", BOB)
    assert removed.exit_code == 0, removed.output
    assert alice("ws", "share", "list", "floods", "--json").stdout.strip() == "[]"
    assert "not shared" in alice("ws", "share", "list", "floods").stderr


def test_share_default_rights_are_read_and_bad_rights_are_usage_errors(alice: Cli) -> None:
    create(alice, "floods")
    assert alice("ws", "share", "add", "floods", BOB).exit_code == 0
    data = json.loads(alice("ws", "share", "list", "floods", "--json").stdout)
    assert [s["permissions"] for s in data] == ["read"]
    assert alice("ws", "share", "add", "floods", BOB, "--rights", "admin").exit_code == 2


def test_share_with_an_unknown_user_is_an_error(alice: Cli) -> None:
    create(alice, "floods")
    result = alice("ws", "share", "add", "floods", "nobody@example.org")
    assert result.exit_code == 1
    assert lines(result.stderr) == [lines(result.stderr)[0]]
    # A sentence saying what to do; the raw code only with --verbose (or --json).
    assert result.stderr.startswith("Error: there is no user with that id on this server")
    assert "MSG_" not in result.stderr and "wasdi-server user add" in result.stderr
    verbose = alice("--verbose", "ws", "share", "add", "floods", "nobody@example.org")
    assert verbose.exit_code == 1 and "(MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER, status 400, workspaces.share_add)" \
        in verbose.stderr


def test_a_stranger_is_denied_with_exit_4(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    result = alice("ws", "delete", ws_id, "--yes", "--profile", "bob")
    assert result.exit_code == 4, result.output
    assert result.stderr.startswith("Error: ")
    assert alice("ws", "list", "-q").stdout.strip() == ws_id


def test_a_user_it_is_shared_with_leaves_it(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    assert alice("ws", "share", "add", ws_id, BOB).exit_code == 0
    alice.login(BOB, BOB_PASSWORD, "--profile", "bob")
    result = alice("ws", "delete", "floods", "--yes", "--profile", "bob")
    assert result.exit_code == 0, result.output
    assert "Left workspace 'floods'" in result.stderr
    assert alice("ws", "list", "-q").stdout.strip() == ws_id  # still there for its owner
    assert alice("ws", "list", "-q", "--profile", "bob").stdout == ""


def test_ws_commands_need_a_login(cli: Cli) -> None:
    for args in (["ws", "list"], ["ws", "create", "x"], ["ws", "share", "list", "x"]):
        result = cli(*args)
        assert result.exit_code == 4, (args, result.output)
        assert result.stderr.startswith("Error: not logged in")
    assert cli.calls == []


def test_list_with_an_expired_session_says_so(alice: Cli) -> None:
    token = alice.token()
    alice.app.services.sessions.close(token)  # the server forgets it, the profile still has it
    result = alice("ws", "list")
    assert result.exit_code == 4 and "wasdi login" in result.stderr


def test_name_by_id(alice: Cli, cli: Cli) -> None:
    ws_id = create(alice, "floods")
    result = alice("ws", "name", ws_id)
    assert result.exit_code == 0, result.output
    assert result.stdout == "floods\n"
    missing = alice("ws", "name", "00000000-0000-0000-0000-000000000000")
    assert missing.exit_code != 0 and missing.stdout == ""


def test_set_public_private_and_name(alice: Cli) -> None:
    ws_id = create(alice, "floods")
    assert alice("ws", "set", "floods").exit_code == 2
    result = alice("ws", "set", "floods", "--public")
    assert result.exit_code == 0, result.output
    assert "is now public" in result.stderr
    sdk = alice.sdk(alice.token())
    assert sdk.workspaces.get(ws_id).is_public is True
    result = alice("ws", "set", ws_id, "--private", "--name", "floods-2023")
    assert result.exit_code == 0, result.output
    details = sdk.workspaces.get(ws_id)
    assert details.is_public is False and details.name == "floods-2023"
