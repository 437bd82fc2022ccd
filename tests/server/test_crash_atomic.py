"""Multi-step deletions are all or nothing: a crash between any two steps (simulated by a step that
raises, then the services reopened on the same data dir) leaves either the whole resource or none of it."""

from __future__ import annotations

import threading
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app
from tests.server.snap import graph
from tests.server.user_estate import SLD

from wasdi_server.domains.apps import app_uploads
from wasdi_server.domains.apps import apps as apps_module
from wasdi_server.domains.workspaces import workspaces as workspaces_module


class Crash(Exception):
    """Stands for the process dying at this instant."""


def boom(*args: Any, **kwargs: Any) -> Any:
    raise Crash


@contextmanager
def restarted(tmp_path: Path) -> Iterator[Server]:
    """The services opened again on the same data dir, as the server's start after the crash opens them."""
    server = Server(tmp_path / "data")
    try:
        yield server
    finally:
        server.close()


def workspace_with_everything(server: Server, alice: Person, bob: Person) -> tuple[str, Path]:
    ws = server.get("/ws/create", alice, name="Floods").json["stringValue"]
    assert server.put("/ws/share/add", alice, workspace=ws, userId=bob.user_id).status_code == 200
    server.services.workspaces.processes.insert({"processObjId": f"p-{ws}", "workspaceId": ws, "userId": alice.user_id,
                                                 "status": "DONE", "operationType": "RUNPROCESSOR"})
    folder = server.services.workspaces.folder(server.services.workspaces.load(ws))
    (folder / "result.tif").write_bytes(b"pixels")
    return ws, folder


def traces(server: Server, ws: str, folder: Path) -> dict[str, bool]:
    services = server.services
    return {
        "record": services.workspaces.workspaces.get(ws) is not None,
        "sharings": bool(services.sharing.sharings.find(resourceId=ws)),
        "processes": bool(services.workspaces.processes.find(workspaceId=ws)),
        "folder": folder.exists(),
    }


# Where the crash comes: (object to patch, attribute) relative to the services, in step order.
CRASH_POINTS = {
    "before the intent is recorded": lambda s: (s.intents, "record"),
    "after the products and logs": lambda s: (s.workspaces.processes, "delete_where"),
    "after the process records": lambda s: (s.sharing, "remove_all"),
    "after the sharings": lambda s: (s.workspaces.workspaces, "delete"),
    "after the record, before the files": lambda s: (workspaces_module, "remove_tree"),
}


@pytest.mark.parametrize("point", list(CRASH_POINTS))
def test_a_crash_during_workspace_delete_leaves_all_or_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               point: str) -> None:
    server = Server(tmp_path / "data")
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org")
    ws, folder = workspace_with_everything(server, alice, bob)
    with monkeypatch.context() as patch:
        patch.setattr(*CRASH_POINTS[point](server.services), boom)
        assert server.delete("/ws/delete", alice, workspace=ws).status_code == 500
    server.close()

    with restarted(tmp_path) as server:  # the restart: pending intents are finished at start
        left = traces(server, ws, folder)
        if point == "before the intent is recorded":
            assert left == {"record": True, "sharings": True, "processes": True, "folder": True}
        else:
            assert left == {"record": False, "sharings": False, "processes": False, "folder": False}
        assert server.services.intents.pending() == []


def test_an_uninterrupted_delete_leaves_no_intent(server: Server, alice: Person, bob: Person) -> None:
    ws, folder = workspace_with_everything(server, alice, bob)
    assert server.delete("/ws/delete", alice, workspace=ws).status_code == 200
    assert traces(server, ws, folder) == {"record": False, "sharings": False, "processes": False, "folder": False}
    assert server.services.intents.pending() == []


# -- organizations and subscriptions: their records only, so one atomic block -----------------------------
def organization_with_everything(server: Server, alice: Person, bob: Person) -> tuple[str, str]:
    services = server.services
    owner = services.users.active_user(alice.user_id)
    org = services.organizations.create(owner, {"name": "Flood watchers"})
    services.organizations.share(owner, org, bob.user_id, "read")
    trial = services.subscriptions.list_for(owner)[0]["subscriptionId"]
    services.subscriptions.subscriptions.update(trial, {"organizationId": org})
    return org, trial


def organization_traces(server: Server, org: str, subscription: str) -> dict[str, bool]:
    services = server.services
    return {"record": services.organizations.organizations.get(org) is not None,
            "sharings": bool(services.sharing.sharings.find(resourceId=org)),
            "attached": services.subscriptions.subscriptions.get(subscription).get("organizationId") == org}


ORGANIZATION_CRASH_POINTS = {
    "after the sharings": lambda s: (s.organizations.subscriptions, "update_where"),
    "after detaching the subscriptions": lambda s: (s.organizations.organizations, "delete"),
}


@pytest.mark.parametrize("point", list(ORGANIZATION_CRASH_POINTS))
def test_a_crash_during_organization_delete_leaves_it_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            point: str) -> None:
    server = Server(tmp_path / "data")
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org")
    org, trial = organization_with_everything(server, alice, bob)
    owner = server.services.users.active_user(alice.user_id)
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(*ORGANIZATION_CRASH_POINTS[point](server.services), boom)
        server.services.organizations.delete(owner, org)
    server.close()

    with restarted(tmp_path) as server:
        assert organization_traces(server, org, trial) == {"record": True, "sharings": True, "attached": True}
        server.services.organizations.delete(server.services.users.active_user(alice.user_id), org)
        assert organization_traces(server, org, trial) == {"record": False, "sharings": False, "attached": False}


def subscription_traces(server: Server, subscription: str, user_id: str) -> dict[str, bool]:
    services = server.services
    return {"record": services.subscriptions.subscriptions.get(subscription) is not None,
            "sharings": bool(services.sharing.sharings.find(resourceId=subscription)),
            "projects": bool(services.subscriptions.projects.find(subscriptionId=subscription)),
            "active": services.users.users.get(user_id).get("activeSubscriptionId") == subscription}


SUBSCRIPTION_CRASH_POINTS = {
    "after the sharings": lambda s: (s.subscriptions.subscriptions, "delete"),
    "after the record": lambda s: (s.subscriptions.projects, "delete_where"),
    "after the projects": lambda s: (s.users.users, "update_where"),
}


@pytest.mark.parametrize("point", list(SUBSCRIPTION_CRASH_POINTS))
def test_a_crash_during_subscription_delete_leaves_it_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            point: str) -> None:
    server = Server(tmp_path / "data")
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org")
    owner = server.services.users.active_user(alice.user_id)
    trial = server.services.subscriptions.list_for(owner)[0]["subscriptionId"]
    server.services.subscriptions.share(owner, trial, bob.user_id, "read")
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(*SUBSCRIPTION_CRASH_POINTS[point](server.services), boom)
        server.services.subscriptions.delete(owner, trial)
    server.close()

    with restarted(tmp_path) as server:
        whole = {"record": True, "sharings": True, "projects": True, "active": True}
        assert subscription_traces(server, trial, alice.user_id) == whole
        server.services.subscriptions.delete(server.services.users.active_user(alice.user_id), trial)
        assert subscription_traces(server, trial, alice.user_id) == dict.fromkeys(whole, False)


# -- workspace creation: the folder first, the record last; the start removes an empty folder left alone --
def nothing(*args: Any, **kwargs: Any) -> None:
    """A dead process runs no clean-up."""


def test_a_crash_between_the_folder_and_the_record_of_a_new_workspace_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    files = server.settings.files_root / alice.user_id
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.workspaces.workspaces, "insert", boom)
        patch.setattr(workspaces_module, "remove_tree", nothing)
        server.services.workspaces.create(owner, "Floods")
    left_by_the_crash = list(files.iterdir())
    assert len(left_by_the_crash) == 1 and not any(left_by_the_crash[0].iterdir())
    server.close()

    with restarted(tmp_path) as server:  # the restart removes the folder that has no record
        assert server.services.workspaces.workspaces.find(userId=alice.user_id) == []
        assert list(files.iterdir()) == []


def test_a_failed_workspace_creation_removes_its_folder(server: Server, alice: Person,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    owner = server.services.users.active_user(alice.user_id)
    monkeypatch.setattr(server.services.workspaces.workspaces, "insert", boom)
    with pytest.raises(Crash):
        server.services.workspaces.create(owner, "Floods")
    files = server.settings.files_root / alice.user_id
    assert not files.exists() or list(files.iterdir()) == []


def test_the_start_keeps_recorded_workspaces_and_folders_holding_files(tmp_path: Path) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    kept = server.get("/ws/create", alice, name="Kept").json["stringValue"]
    kept_folder = server.services.workspaces.folder(server.services.workspaces.load(kept))
    # A workspace deleted with deleteFile=false leaves its files on purpose: the start must not take them.
    gone = server.get("/ws/create", alice, name="Gone").json["stringValue"]
    gone_folder = server.services.workspaces.folder(server.services.workspaces.load(gone))
    (gone_folder / "result.tif").write_bytes(b"pixels")
    assert server.delete("/ws/delete", alice, workspace=gone, deletefile="false").status_code == 200
    server.close()

    with restarted(tmp_path) as server:
        assert server.services.workspaces.workspaces.get(kept) is not None
        assert kept_folder.is_dir()
        assert (gone_folder / "result.tif").read_bytes() == b"pixels"


# -- projects and a user's active choice: one commit --------------------------------------------------
def active_choice(server: Server, user_id: str) -> tuple[Any, Any]:
    doc = server.services.users.users.get(user_id)
    return doc.get("activeProjectId"), doc.get("activeSubscriptionId")


def test_a_crash_during_project_delete_leaves_the_project_and_the_choice_of_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    trial = server.services.subscriptions.list_for(owner)[0]["subscriptionId"]
    project = server.services.projects.create(owner, {"subscriptionId": trial, "name": "Floods",
                                                      "activeProject": True})
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.users.users, "update_where", boom)
        server.services.projects.delete(owner, project)
    server.close()

    with restarted(tmp_path) as server:
        assert server.services.projects.projects.get(project) is not None
        assert active_choice(server, alice.user_id) == (project, trial)


def test_a_crash_during_project_creation_leaves_neither_the_project_nor_the_choice(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    trial = server.services.subscriptions.list_for(owner)[0]["subscriptionId"]
    before = active_choice(server, alice.user_id)
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.users, "set_active_project", boom)
        server.services.projects.create(owner, {"subscriptionId": trial, "name": "Floods", "activeProject": True})
    server.close()

    with restarted(tmp_path) as server:
        assert not any(p["name"] == "Floods" for p in server.services.projects.projects.all())
        assert active_choice(server, alice.user_id) == before


@pytest.mark.parametrize("how", ["leave", "unshare"])
def test_a_crash_while_a_user_loses_a_subscription_keeps_their_sharing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    server = Server(tmp_path / "data")
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org", trial=False)
    owner = server.services.users.active_user(alice.user_id)
    trial = server.services.subscriptions.list_for(owner)[0]["subscriptionId"]
    server.services.subscriptions.share(owner, trial, bob.user_id, "read")
    project = server.services.projects.projects.find(subscriptionId=trial)[0]["projectId"]
    server.services.projects.set_active(server.services.users.active_user(bob.user_id), project, None)
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.users.users, "update_where", boom)
        if how == "leave":
            server.services.subscriptions.delete(server.services.users.active_user(bob.user_id), trial)
        else:
            server.services.subscriptions.unshare(owner, trial, bob.user_id)
    server.close()

    with restarted(tmp_path) as server:
        assert server.services.sharing.sharings.find(resourceId=trial, userId=bob.user_id) != []
        assert active_choice(server, bob.user_id) == (project, trial)


# -- a style's sharings and record; a review and its comments: one commit each -------------------------
def test_a_crash_during_style_delete_never_strips_the_style_of_its_sharings(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org")
    owner = server.services.users.active_user(alice.user_id)
    style = server.services.styles.create(owner, "floods", "mine", False, server.services.styles.write_staged(SLD))
    server.services.styles.share(owner, style["styleId"], bob.user_id, "read")
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.styles.styles, "delete", boom)
        server.services.styles.delete(owner, style["styleId"])
    server.close()

    with restarted(tmp_path) as server:
        assert server.services.styles.styles.get(style["styleId"]) is not None
        assert server.services.sharing.sharings.find(resourceId=style["styleId"]) != []
        assert server.services.styles.sld_path("floods").is_file()


def test_a_crash_during_review_delete_leaves_the_review_with_its_comments(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice, bob = server.add_user("alice@example.org"), server.add_user("bob@example.org")
    app = make_app(server, alice, "floodmapper", isPublic=1)
    reviewer = server.services.users.active_user(bob.user_id)
    review = server.services.reviews.add_review(reviewer, {"processorId": app["processorId"], "vote": 4})
    server.services.reviews.add_comment(server.services.users.active_user(alice.user_id),
                                        {"reviewId": review["reviewId"], "text": "thanks"})
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.reviews.comments, "delete_where", boom)
        server.services.reviews.delete_review(reviewer, app["processorId"], review["reviewId"])
    server.close()

    with restarted(tmp_path) as server:
        assert server.services.reviews.reviews.get(review["reviewId"]) is not None
        assert server.services.reviews.comments.find(reviewId=review["reviewId"]) != []


# -- a subscription, its default project and the owner's choice of it: one commit ------------------------
SUBSCRIPTION_CREATION_CRASH_POINTS = {
    "after the subscription": lambda s: (s.subscriptions.projects, "insert"),
    "after the project": lambda s: (s.users, "set_active_project"),
}


@pytest.mark.parametrize("point", list(SUBSCRIPTION_CREATION_CRASH_POINTS))
@pytest.mark.parametrize("trial", [True, False], ids=["trial", "bought"])
def test_a_crash_during_subscription_creation_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              point: str, trial: bool) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org", trial=False)
    owner = server.services.users.active_user(alice.user_id)
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(*SUBSCRIPTION_CREATION_CRASH_POINTS[point](server.services), boom)
        if trial:
            server.services.subscriptions.create_trial(alice.user_id)
        else:
            server.services.subscriptions.create(owner, {"typeId": "OneMonthStandard"})
    server.close()

    with restarted(tmp_path) as server:
        assert server.services.subscriptions.subscriptions.find(userId=alice.user_id) == []
        assert server.services.subscriptions.projects.all() == []
        assert active_choice(server, alice.user_id) == (None, None)


# -- app uploads: the folder first, the record last; a half-replaced folder is restored at start -------
def app_zip(tmp_path: Path) -> Path:
    archive = tmp_path / "app.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("myProcessor.py", "def run():\n    pass\n")
    return archive


# Where an app's new files can be interrupted: (object to patch, attribute) relative to the services.
APP_FILES_CRASH_POINTS = {
    "before the change is recorded": lambda s: (s.intents, "record"),
    "before the files are in place": lambda s: (app_uploads, "replace_folder"),
    "after the files, before the record": lambda s: (s.apps.records.processors, "insert"),
    "after the record, before the build is queued": lambda s: (s.processes, "create"),
}


def upload(server: Server, owner: Any, tmp_path: Path, *, version: str = "1", force: bool = False) -> str:
    return server.services.apps.upload(owner, app_zip(tmp_path), name="floodmapper", workspace_id=None,
                                       version=version, description=None, app_type="python312", params_sample=None,
                                       public=None, timeout=None, force=force)


def app_state(server: Server) -> dict[str, Any]:
    services = server.services
    doc = services.apps.records.by_name("floodmapper")
    builds = services.processes.processes.find(productName="floodmapper") if doc else []
    return {"record": doc is not None, "version": doc.get("version") if doc else None,
            "files": (server.settings.apps_root / "floodmapper" / "myProcessor.py").is_file(),
            "builds": sorted(b["operationType"] for b in builds), "pending": services.intents.pending()}


@pytest.mark.parametrize("point", list(APP_FILES_CRASH_POINTS))
def test_a_crash_during_a_new_apps_upload_leaves_it_whole_or_absent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   point: str) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(*APP_FILES_CRASH_POINTS[point](server.services), boom)
        patch.setattr(apps_module.shutil, "rmtree", nothing)  # a crash cleans nothing up
        upload(server, owner, tmp_path)
    server.close()

    with restarted(tmp_path) as server:  # the restart finishes a recorded change, and removes what an unrecorded left
        if point == "before the change is recorded":
            assert app_state(server) == {"record": False, "version": None, "files": False, "builds": [],
                                         "pending": []}
        else:
            assert app_state(server) == {"record": True, "version": "1", "files": True, "builds": ["DEPLOYPROCESSOR"],
                                         "pending": []}
        assert [p.name for p in server.settings.apps_root.iterdir() if p.name not in (".incoming", "floodmapper")] \
            == []


@pytest.mark.parametrize("point", ["before the files are in place", "after the record, before the build is queued"])
def test_a_crash_during_a_forced_reupload_never_leaves_new_files_under_the_old_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    upload(server, owner, tmp_path)
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(*APP_FILES_CRASH_POINTS[point](server.services), boom)
        patch.setattr(apps_module.shutil, "rmtree", nothing)
        upload(server, owner, tmp_path, version="2", force=True)
    server.close()

    with restarted(tmp_path) as server:
        state = app_state(server)
        assert (state["version"], state["files"], state["builds"], state["pending"]) == \
            ("2", True, ["DEPLOYPROCESSOR", "DEPLOYPROCESSOR"], [])


def test_the_servers_stop_ends_a_running_build_as_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A server stopping asks its running operations to stop: a build ends its installer and is STOPPED, the app
    neither deployed nor left marked as being deployed (before, the stop waited for the installer, up to 10 s,
    and left the record for the restart to call an error)."""
    monkeypatch.setenv("UV_INDEX_URL", "https://no-such-index.invalid/simple")  # the build waits on uv's retries
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    upload(server, server.services.users.active_user(alice.user_id), tmp_path)
    deadline = time.monotonic() + 30
    while not server.services.processes.processes.find(productName="floodmapper", status="RUNNING"):
        assert time.monotonic() < deadline, "the build never started"
        time.sleep(0.02)
    server.close()

    with restarted(tmp_path) as server:
        build = server.services.processes.processes.find(productName="floodmapper")[0]
        assert build["status"] == "STOPPED", build
        doc = server.services.apps.records.by_name("floodmapper")
        assert (doc["deployed"], doc["deploymentOngoing"]) == (False, False)


def test_a_crash_while_an_apps_files_are_updated_is_finished_at_the_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    upload(server, owner, tmp_path)
    processor_id = server.services.apps.records.by_name("floodmapper")["processorId"]
    pip = tmp_path / "pip.txt"
    pip.write_text("six==1.16.0\n")
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(server.services.processes, "create", boom)
        patch.setattr(apps_module.shutil, "rmtree", nothing)
        server.services.apps.update_files(owner, processor_id, None, pip, "pip.txt")
    server.close()

    with restarted(tmp_path) as server:
        state = app_state(server)
        assert (state["builds"], state["pending"]) == (["DEPLOYPROCESSOR", "REDEPLOYPROCESSOR"], [])
        assert (server.settings.apps_root / "floodmapper" / "pip.txt").read_text() == "six==1.16.0\n"
        assert (server.settings.apps_root / "floodmapper" / "myProcessor.py").is_file()


def test_the_start_restores_an_app_folder_a_crash_left_half_replaced(tmp_path: Path) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    for name in ("halfway", "replaced"):
        make_app(server, alice, name)
    server.close()
    apps_root = server.settings.apps_root
    # What replace_folder leaves when the crash comes between its two renames, or after both, and an unpack
    # that never finished.
    (apps_root / ".halfway.old").mkdir(parents=True)
    (apps_root / ".halfway.old" / "myProcessor.py").write_text("old")
    (apps_root / "replaced").mkdir()
    (apps_root / "replaced" / "myProcessor.py").write_text("new")
    (apps_root / ".replaced.old").mkdir()
    (apps_root / ".staging-x1y2").mkdir()

    with restarted(tmp_path) as server:
        assert (apps_root / "halfway" / "myProcessor.py").read_text() == "old"
        assert (apps_root / "replaced" / "myProcessor.py").read_text() == "new"
        assert sorted(p.name for p in apps_root.iterdir() if p.name != ".incoming") == ["halfway", "replaced"]


# -- the atomic blocks take collections in one order: concurrent ones never wait on each other ----------
def test_concurrent_atomic_changes_all_finish(server: Server, alice: Person, bob: Person) -> None:
    services = server.services
    owner, sharer = services.users.active_user(alice.user_id), services.users.active_user(bob.user_id)
    failures: list[str] = []

    def churn(worker: int) -> None:
        try:
            for i in range(15):
                org = services.organizations.create(owner, {"name": f"org {worker}-{i}"})
                sid = services.subscriptions.create(owner, {"typeId": "OneMonthStandard", "organizationId": org})[
                    "subscriptionId"]
                services.subscriptions.share(owner, sid, bob.user_id, "write")
                project = services.projects.create(sharer, {"subscriptionId": sid, "name": "p", "activeProject": True})
                services.projects.update(owner, {"projectId": project, "name": "q", "activeProject": True})
                services.organizations.delete(owner, org)
                if i % 2:
                    services.subscriptions.unshare(owner, sid, bob.user_id)
                    services.projects.delete(owner, project)
                else:
                    services.subscriptions.delete(sharer, sid)
                services.subscriptions.delete(owner, sid)
        except Exception as e:  # reported below: a thread's exception would otherwise vanish
            failures.append(f"worker {worker}: {e!r}")

    workers = [threading.Thread(target=churn, args=(n,), daemon=True) for n in range(6)]
    for worker in workers:
        worker.start()
    give_up = time.monotonic() + 120  # a deadlock never ends: this bound only keeps the suite from hanging on one
    for worker in workers:
        worker.join(max(0.0, give_up - time.monotonic()))
    assert [w.name for w in workers if w.is_alive()] == [], "atomic blocks waited on each other"
    assert failures == []
    assert services.organizations.organizations.find(userId=alice.user_id) == []


STYLE_FILE_CRASH_POINTS = {
    "deleting, after the record, before the file": lambda s: (s.styles, "sld_path"),
    "creating, after the file, before the record": lambda s: (s.styles.styles, "insert"),
}


@pytest.mark.parametrize("point", list(STYLE_FILE_CRASH_POINTS))
def test_the_start_removes_a_style_file_a_crash_left_without_its_style(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, point: str) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    styles = server.services.styles
    kept = styles.create(owner, "kept", "mine", False, styles.write_staged(SLD))
    if point.startswith("deleting"):
        doomed = styles.create(owner, "floods", "mine", False, styles.write_staged(SLD))
    orphan = styles.sld_path("floods")
    preview = server.services.images.path(styles.preview_place("floods"))
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(*STYLE_FILE_CRASH_POINTS[point](server.services), boom)
        if point.startswith("deleting"):
            styles.delete(owner, doomed["styleId"])
        else:
            styles.create(owner, "floods", "mine", False, styles.write_staged(SLD))
    assert orphan.is_file() and styles.by_name("floods") is None
    server.close()

    with restarted(tmp_path) as server:
        assert not orphan.exists() and not preview.exists()
        assert server.services.styles.get(kept["styleId"]) is not None
        assert server.services.styles.sld_path("kept").is_file()


def test_the_start_removes_a_graph_file_a_crash_left_without_its_workflow(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = Server(tmp_path / "data")
    alice = server.add_user("alice@example.org")
    owner = server.services.users.active_user(alice.user_id)
    workflows = server.services.workflows
    kept = workflows.create(owner, "kept", "mine", False, workflows.stage(graph()))
    with monkeypatch.context() as patch, pytest.raises(Crash):
        patch.setattr(workflows.workflows, "insert", boom)
        workflows.create(owner, "floods", "mine", False, workflows.stage(graph()))
    left = [p.name for p in server.settings.workflows_root.glob("*.xml")]
    assert len(left) == 2
    server.close()

    with restarted(tmp_path) as server:
        assert [p.name for p in server.settings.workflows_root.glob("*.xml")] == [f"{kept['workflowId']}.xml"]
        assert server.services.workflows.workflows.get(kept["workflowId"]) is not None


def test_the_start_removes_half_received_uploads(tmp_path: Path) -> None:
    server = Server(tmp_path / "data")
    services = server.services
    folders = [services.styles.staging, services.workflows.staging, services.images.staging,
               server.settings.apps_root / ".incoming"]
    server.close()
    for folder in folders:
        (folder / "nested").mkdir(parents=True, exist_ok=True)
        (folder / "upload-123.part").write_bytes(b"half")
        (folder / "nested" / "chunk").write_bytes(b"half")

    with restarted(tmp_path) as server:
        assert {str(folder): sorted(p.name for p in folder.iterdir()) for folder in folders} == \
            {str(folder): [] for folder in folders}
