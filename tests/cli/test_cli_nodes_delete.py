"""``wasdi nodes delete`` (the web client's DELETE /node) against the in-process server."""

from __future__ import annotations

import pytest

from tests.cli.conftest import Cli
from wasdi_server.app import WasdiApp

ADMIN = "root@example.org"
ADMIN_PASSWORD = "password-root"


@pytest.fixture
def root(cli: Cli, wasdi_app: WasdiApp) -> Cli:
    wasdi_app.services.users.add(ADMIN, ADMIN_PASSWORD, admin=True, name="Root", surname="Admin")
    cli.login(ADMIN, ADMIN_PASSWORD)
    return cli


def test_delete_a_node(root: Cli) -> None:
    assert root("nodes", "create", "n2").exit_code == 0
    refused = root("nodes", "delete", "n2")  # no terminal, no --yes
    assert refused.exit_code == 2 and "--yes" in refused.stderr
    deleted = root("nodes", "delete", "n2", "--yes")
    assert deleted.exit_code == 0 and "Deleted node n2" in deleted.stderr
    assert root("nodes", "list", "--all", "-q").stdout.split() == ["wasdi"]
    assert root("nodes", "delete", "n2", "--yes").exit_code == 1


def test_only_admins_delete_nodes(cli: Cli, wasdi_app: WasdiApp) -> None:
    wasdi_app.services.store.collection("nodes").insert({"nodeCode": "n3", "active": True})
    cli.login()
    assert cli("nodes", "delete", "n3", "--yes").exit_code == 4
    assert wasdi_app.services.nodes.nodes.get("n3") is not None
