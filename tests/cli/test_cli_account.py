"""``wasdi account ...``, ``wasdi uploads ...`` and ``wasdi server hello|skin|feedback`` against the in-process
server."""

from __future__ import annotations

import json
import re

import pytest

from tests.cli.conftest import ALICE, ALICE_PASSWORD, Cli


@pytest.fixture
def alice(cli: Cli) -> Cli:
    cli.login()
    return cli


def _mails(cli: Cli, to: str) -> list:
    cli.app.services.users.later.drain()  # lost-password mails are written after the answer
    return [m for m in cli.app.services.mailer.messages() if m["To"] == to]  # type: ignore[attr-defined]


def test_register_validate_then_login(cli: Cli) -> None:
    result = cli("account", "register", "new@example.org", "--name", "New", "--password-stdin",
                 input="long-enough\n")
    assert result.exit_code == 0, result.output
    assert "wasdi account validate new@example.org" in result.stderr
    match = re.search(r"validationCode=([0-9a-f-]{36})", _mails(cli, "new@example.org")[-1].get_content())
    assert match
    bad = cli("account", "validate", "new@example.org", "0" * 36)
    assert bad.exit_code == 1 and "validation code" in bad.stderr
    ok = cli("account", "validate", "new@example.org", match.group(1))
    assert ok.exit_code == 0, ok.output
    cli.login("new@example.org", "long-enough")
    short = cli("account", "register", "x@example.org", "--password-stdin", input="short\n")
    assert short.exit_code == 2 and "at least 8" in short.stderr


def test_password_change_reads_stdin(alice: Cli) -> None:
    wrong = alice("account", "password", "--password-stdin", input="not-the-one\nbrand-new-pw\n")
    assert wrong.exit_code != 0
    result = alice("account", "password", "--password-stdin", input=f"{ALICE_PASSWORD}\nbrand-new-pw\n")
    assert result.exit_code == 0, result.output
    assert "Password changed" in result.stderr
    alice("logout")
    alice.login(ALICE, "brand-new-pw")


def test_lost_password_mails_a_new_one(cli: Cli) -> None:
    result = cli("account", "lost-password", ALICE)
    assert result.exit_code == 0, result.output
    assert _mails(cli, ALICE)


def test_edit_profile(alice: Cli) -> None:
    assert alice("account", "edit").exit_code == 2
    result = alice("account", "edit", "--nickname", "ally", "--description", "maps", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["publicNickName"] == "ally" and data["description"] == "maps"
    assert alice.app.services.users.get(ALICE)["publicNickName"] == "ally"
    table = alice("account", "edit", "--surname", "L.").stdout
    assert "L." in table and "ally" in table


def test_missions(alice: Cli) -> None:
    expected = alice.sdk(alice.token()).auth.config().missions or []
    assert expected
    quiet = alice("account", "missions", "-q")
    assert quiet.exit_code == 0, quiet.output
    assert quiet.stdout.splitlines() == [m.indexvalue or "" for m in expected]
    private = alice("account", "missions", "--private", "--json")
    assert private.exit_code == 0 and json.loads(private.stdout) == []


def test_uploads_account_lifecycle(alice: Cli) -> None:
    status = alice("uploads", "status")
    assert status.exit_code == 1 and status.stdout == "no\n"
    created = alice("uploads", "create", ALICE)
    assert created.exit_code == 0, created.output
    assert alice("uploads", "status").stdout == "yes\n"
    files = alice("uploads", "files")
    assert files.exit_code == 0 and files.stdout == "" and "No uploaded files." in files.stderr
    reset = alice("uploads", "reset-password", ALICE)
    assert reset.exit_code == 0, reset.output
    assert alice("uploads", "remove").exit_code == 2  # no terminal, no --yes
    removed = alice("uploads", "remove", "--yes")
    assert removed.exit_code == 0, removed.output
    assert alice("uploads", "status").stdout == "no\n"


def test_server_hello_skin_and_feedback(cli: Cli) -> None:
    hello = cli("server", "hello")
    assert hello.exit_code == 0, hello.output
    assert hello.stdout.strip() == cli.sdk().utility.hello().string_value
    assert cli("server", "feedback", "t", "-m", "x").exit_code == 4  # needs a login
    cli.login()
    skin = cli("server", "skin", "--json")
    assert skin.exit_code == 0 and json.loads(skin.stdout) == cli.sdk(cli.token()).auth.skin().to_wire()
    sent = cli("server", "feedback", "Broken map", input="The layer is blank\n")
    assert sent.exit_code == 0, sent.output
    mail = [m for m in cli.app.services.mailer.messages() if "Broken map" in m["Subject"]]  # type: ignore[attr-defined]
    assert mail and "The layer is blank" in mail[-1].get_content()
