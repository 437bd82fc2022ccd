"""The other multi-step changes on a real server killed with SIGKILL under concurrent callers: deleting
organizations, subscriptions, apps, styles, and users (the admin's cascade over everything they own and every
sharing they hold).  After every restart the invariants of tests/e2e/crash_rounds.py hold (no sharing,
subscription, project, session or app part names something missing; every folder has its record and
every record its folder; no intent left pending) and no deletion answered 200 is undone.

Each round is populated with the services while no server runs, then deleted over HTTP."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from tests.e2e import conftest as e2e
from tests.e2e import crash_rounds as crash
from tests.server.app_fixtures import app_record
from tests.server.snap import graph
from tests.server.user_estate import SLD

from wasdi_server import load_settings
from wasdi_server.composition import Services, build_services
from wasdi_server.domains.accounts.identity import User

pytestmark = pytest.mark.e2e

ALICE, BOB, CAROL, ADMIN = e2e.ALICE, e2e.BOB, e2e.CAROL, e2e.ADMIN
ROUNDS = 3
PER_ROUND = 24


@contextlib.contextmanager
def offline(data_dir: Path) -> Iterator[Services]:
    """The services on ``data_dir`` while no server runs (to build what a round deletes)."""
    services = build_services(load_settings(data_dir=data_dir, environ={}))
    try:
        yield services
    finally:
        services.close()


def user(services: Services, user_id: str) -> User:
    found = services.users.active_user(user_id)
    assert found is not None, user_id
    return found


def run_rounds(servers: e2e.ServerFactory, data_dir: Path, populate: Callable[[Path, str], list[str]],
               caller: str, call: crash.Call, collection: str, shared_as: str | None = None) -> tuple[int, int]:
    """``ROUNDS`` rounds of: populate, call concurrently and kill, restart and check (with ``shared_as``, the
    sharing type of what ``populate`` made and shared: none still there may have lost its sharing).  Returns
    the calls the kills cut off and the intents they left pending (summed over the rounds)."""
    cut_off = pending = 0
    for round_number in range(ROUNDS):
        ids = populate(data_dir, f"r{round_number}")
        seen = crash.call_concurrently_then_kill(servers.start(data_dir, threads=crash.CALLERS), caller, ids, call)
        assert seen.refused == []
        cut_off += seen.cut_off
        pending += crash.pending_intents(data_dir)
        stored = crash.restart_and_check(servers, data_dir)
        remaining = crash.stored_keys(stored, collection)
        assert not remaining & set(seen.answered), f"a deletion answered 200 was undone in {collection}"
        if shared_as:
            assert crash.stripped_of_sharings(stored, shared_as, ids) == [], "a deletion left a resource unshared"
    return cut_off, pending


# -- organizations: their sharings and the subscriptions attached to them ------------------------------
def populate_organizations(data_dir: Path, tag: str) -> list[str]:
    """Alice's organizations, each shared with bob and with a subscription of hers attached."""
    with offline(data_dir) as services:
        alice = user(services, ALICE)
        ids = []
        for i in range(PER_ROUND):
            org = services.organizations.create(alice, {"name": f"{tag} org {i}"})
            services.organizations.share(alice, org, BOB, "read")
            services.subscriptions.create(alice, {"typeId": "OneMonthStandard", "organizationId": org,
                                                  "name": f"{tag} paid by org {i}"})
            ids.append(org)
        return ids


def delete_organization(client: httpx.Client, org_id: str) -> httpx.Response:
    return client.delete("/organizations/delete", params={"organization": org_id})


def test_organization_deletes_killed_midway_leave_no_sharing_or_subscription_naming_them(
        servers: e2e.ServerFactory, data_dir: Path) -> None:
    cut_off, _ = run_rounds(servers, data_dir, populate_organizations, ALICE, delete_organization, "organizations",
                            "organization")
    assert cut_off, "no kill came while a deletion was under way"


# -- subscriptions: their sharings, projects and the users' active choices ---------------------------
def populate_subscriptions(data_dir: Path, tag: str) -> list[str]:
    """Alice's subscriptions, each with its default project and one more, shared with bob, and the project
    bob has chosen as active in one of them."""
    with offline(data_dir) as services:
        alice, bob = user(services, ALICE), user(services, BOB)
        ids = []
        for i in range(PER_ROUND):
            sid = services.subscriptions.create(alice, {"typeId": "OneMonthStandard", "name": f"{tag} sub {i}"})[
                "subscriptionId"]
            project = services.projects.create(alice, {"subscriptionId": sid, "name": f"{tag} project {i}"})
            services.subscriptions.share(alice, sid, BOB, "read")
            ids.append(sid)
        services.projects.set_active(bob, project, None)
        return ids


def delete_subscription(client: httpx.Client, subscription_id: str) -> httpx.Response:
    return client.delete("/subscriptions/delete", params={"subscription": subscription_id})


def test_subscription_deletes_killed_midway_leave_no_sharing_project_or_choice_naming_them(
        servers: e2e.ServerFactory, data_dir: Path) -> None:
    cut_off, _ = run_rounds(servers, data_dir, populate_subscriptions, ALICE, delete_subscription, "subscriptions",
                            "subscription")
    assert cut_off, "no kill came while a deletion was under way"


# -- apps: sharings, templates, reviews, the record, then the folders ---------------------------------
def add_app(services: Services, owner_id: str, name: str) -> str:
    """An app of ``owner_id`` with its files and environment on disk (as a finished upload leaves them)."""
    app = services.store.collection("processors").insert(app_record(owner_id, name, isPublic=1))
    layout = services.apps.layout(app)
    layout.folder.mkdir(parents=True)
    (layout.folder / "myProcessor.py").write_text("def run():\n    pass\n")
    layout.home.mkdir(parents=True)
    (layout.home / "build.log").write_text("built\n")
    return str(app["processorId"])


def populate_apps(data_dir: Path, tag: str) -> list[str]:
    """Alice's apps, each shared with bob, with a parameter template of hers and a review by bob that she
    answered."""
    with offline(data_dir) as services:
        alice, bob = user(services, ALICE), user(services, BOB)
        ids = []
        for i in range(PER_ROUND):
            app_id = add_app(services, ALICE, f"{tag}app{i}")
            services.app_store.share(alice, app_id, BOB, "read")
            services.param_templates.add(alice, {"processorId": app_id, "name": f"{tag} template {i}"})
            review = services.reviews.add_review(bob, {"processorId": app_id, "vote": 4, "title": "good"})
            services.reviews.add_comment(alice, {"reviewId": review["reviewId"], "text": "thanks"})
            ids.append(app_id)
        return ids


def delete_app(client: httpx.Client, app_id: str) -> httpx.Response:
    return client.get("/processors/delete", params={"processorId": app_id})


def test_app_deletes_killed_midway_leave_no_half_deleted_app(servers: e2e.ServerFactory, data_dir: Path) -> None:
    _, pending = run_rounds(servers, data_dir, populate_apps, ALICE, delete_app, "processors", "processor")
    assert pending, "no kill came during a deletion: the restarts had nothing to finish"


# -- styles: their sharings and record as one, then the file ----------------------------------------
def populate_styles(data_dir: Path, tag: str) -> list[str]:
    """Alice's styles, each shared with bob."""
    with offline(data_dir) as services:
        alice = user(services, ALICE)
        ids = []
        for i in range(PER_ROUND):
            style = services.styles.create(alice, f"{tag}_style_{i}", "mine", False, services.styles.write_staged(SLD))
            services.styles.share(alice, style["styleId"], BOB, "read")
            ids.append(str(style["styleId"]))
        return ids


def delete_style(client: httpx.Client, style_id: str) -> httpx.Response:
    return client.delete("/styles/delete", params={"styleId": style_id})


def test_style_deletes_killed_midway_never_strip_a_style_of_its_sharings(servers: e2e.ServerFactory,
                                                                        data_dir: Path) -> None:
    cut_off, _ = run_rounds(servers, data_dir, populate_styles, ALICE, delete_style, "styles", "style")
    assert cut_off, "no kill came while a deletion was under way"


# -- users: the admin's deletion cascades over everything they own and every sharing they hold --------
def populate_users(data_dir: Path, tag: str) -> list[str]:
    """Users who each own two workspaces (with files) shared with bob, an organization, a subscription, an app
    and a workflow shared with bob, hold a sharing of carol's workspace, and have a session."""
    with offline(data_dir) as services:
        carol = user(services, CAROL)
        carols = services.workspaces.create(carol, f"{tag} carol's")
        template = services.users.users.get(ALICE)
        assert template is not None
        ids = []
        for i in range(PER_ROUND // 2):
            # A copy of alice's account (a fresh scrypt hash per user would cost more than the round).
            user_id = f"{tag}-doomed-{i}@example.org"
            services.users.users.insert({**template, "userId": user_id, "activeProjectId": None,
                                         "activeSubscriptionId": None})
            services.subscriptions.create_trial(user_id)
            doomed = user(services, user_id)
            for j in range(2):
                ws = services.workspaces.create(doomed, f"{tag} ws {j}")
                (services.workspaces.folder(ws) / "result.tif").write_bytes(b"pixels")
                services.processes.create(doomed, ws["workspaceId"], "INGEST", "result.tif")
                services.workspaces.share(doomed, ws["workspaceId"], BOB, "write")
            org = services.organizations.create(doomed, {"name": f"{tag} org of {i}"})
            services.organizations.share(doomed, org, BOB, "read")
            trial = services.subscriptions.list_for(doomed)[0]["subscriptionId"]
            services.subscriptions.share(doomed, trial, BOB, "read")
            services.app_store.share(doomed, add_app(services, user_id, f"{tag}doomedapp{i}"), BOB, "read")
            flow = services.workflows.create(doomed, f"{tag} flow {i}", "", False, services.workflows.stage(graph()))
            services.workflows.share(doomed, flow["workflowId"], BOB, "read")
            services.workspaces.share(carol, carols["workspaceId"], user_id, "read")
            services.sessions.open(user_id)
            ids.append(user_id)
        return ids


def delete_user(client: httpx.Client, user_id: str) -> httpx.Response:
    return client.delete("/admin/users", params={"userId": user_id})


def test_user_deletions_killed_midway_leave_no_sharing_session_or_resource_of_a_missing_user(
        servers: e2e.ServerFactory, data_dir: Path) -> None:
    _, pending = run_rounds(servers, data_dir, populate_users, ADMIN, delete_user, "users")
    assert pending, "no kill came during a deletion: the restarts had nothing to finish"
