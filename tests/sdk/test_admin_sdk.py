"""client.admin against the real app: every method's happy path and its failures as exceptions."""

from __future__ import annotations

import pytest
from tests.conftest import Person, Server

from wasdi_sdk import AuthenticationError, BadRequestError, EmptyResultError, PermissionDeniedError
from wasdi_sdk.models import FullUserViewModel, MetricsEntry


def test_lookups(server: Server, admin: Person, alice: Person) -> None:
    client = server.sdk(admin)
    user = server.services.users.active_user(alice.user_id)
    ws = server.services.workspaces.create(user, "river basin")
    assert [u.user_id for u in client.admin.find_users("alice")] == [alice.user_id]
    assert [w.workspace_id for w in client.admin.find_workspaces("basin")] == [ws["workspaceId"]]
    assert client.admin.find_processors("nothing") == []
    page = client.admin.find_resources(resource_type="WORKSPACE", partial_name="river", limit=5)
    assert [(r.resource_id, r.user_id) for r in page] == [(ws["workspaceId"], alice.user_id)]
    with pytest.raises(BadRequestError):
        client.admin.find_users("al")
    with pytest.raises(PermissionDeniedError):
        server.sdk(alice).admin.find_users("alice")
    with pytest.raises(AuthenticationError):
        server.sdk().admin.find_users("alice")


def test_permissions(server: Server, admin: Person, alice: Person, bob: Person) -> None:
    client = server.sdk(admin)
    ws = server.services.workspaces.create(server.services.users.active_user(alice.user_id), "shared")
    assert "WORKSPACE" in client.admin.resource_types()
    with pytest.raises(PermissionDeniedError):
        server.sdk(alice).admin.resource_types()
    with pytest.raises(PermissionDeniedError):  # owners share through client.workspaces.share_add
        server.sdk(alice).admin.add_resource_permission(resource_type="WORKSPACE", resource_id=ws["workspaceId"],
                                                        user_id=bob.user_id)
    client.admin.add_resource_permission(resource_type="WORKSPACE", resource_id=ws["workspaceId"],
                                         user_id=bob.user_id, rights="write")
    found = client.admin.list_resource_permissions(user_id=bob.user_id)
    assert [(p.resource_id, p.permissions) for p in found] == [(ws["workspaceId"], "write")]
    client.admin.remove_resource_permission(resource_type="WORKSPACE", resource_id=ws["workspaceId"],
                                            user_id=bob.user_id)
    assert client.admin.list_resource_permissions(user_id=bob.user_id) == []
    with pytest.raises(BadRequestError):
        client.admin.list_resource_permissions()
    with pytest.raises(BadRequestError):
        client.admin.add_resource_permission(resource_type="GALAXY", resource_id="x", user_id=bob.user_id)


def test_metrics(server: Server, admin: Person) -> None:
    client = server.sdk(admin)
    answer = client.admin.push_metrics(MetricsEntry(node="edge-1", disks=[], licenses=[{"name": "SNAP",
                                                                                          "status": True}]))
    assert answer.message == "MSG_SUCCESS_METRICS_ENTRY_INSERT"
    latest = client.admin.latest_metrics(node_code="edge-1")
    assert latest.node == "edge-1" and latest.licenses == [{"name": "snap", "status": True}]
    with pytest.raises(EmptyResultError):
        client.admin.latest_metrics(node_code="nowhere")
    with pytest.raises(BadRequestError):
        client.admin.push_metrics(MetricsEntry(node="../../x"))


def test_users(server: Server, admin: Person, alice: Person, bob: Person) -> None:
    client = server.sdk(admin)
    assert [u.user_id for u in client.admin.list_users(sortedby="userId", limit=2)] == [alice.user_id,
                                                                                         bob.user_id]
    assert client.admin.users_summary().total_users == 3
    client.admin.update_user(FullUserViewModel(user_id=bob.user_id, surname="Marley"))
    assert client.admin.get_user(bob.user_id).surname == "Marley"
    client.admin.delete_user(bob.user_id)
    with pytest.raises(BadRequestError):
        client.admin.get_user(bob.user_id)
    client.admin.clean_processes_queue()
    client.admin.clean_old_processes()
    with pytest.raises(PermissionDeniedError):
        server.sdk(alice).admin.clean_old_processes()
