"""``client.organizations``, ``client.subscriptions`` and ``client.projects`` against the in-process server."""

from __future__ import annotations

from datetime import UTC, datetime

import httpx
import pytest
import respx
from tests.conftest import Person, Server

from wasdi_sdk import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PermissionDeniedError,
    ServerError,
    WasdiClient,
)
from wasdi_sdk.catalog import Style
from wasdi_sdk.models import (
    OrganizationEditorViewModel,
    ProjectListViewModel,
    SubscriptionListViewModel,
    SubscriptionViewModel,
)
from wasdi_sdk.resources.subscriptions import date_text


def test_organizations_cycle(server: Server, alice: Person, bob: Person) -> None:
    owner, other = server.sdk(alice), server.sdk(bob)
    org = owner.organizations.create(name="ACME", description="rockets").message
    assert org
    with pytest.raises(BadRequestError) as duplicate:
        other.organizations.create(OrganizationEditorViewModel(name="acme"))
    assert duplicate.value.status == 400 and duplicate.value.style is Style.STATUS
    listed = owner.organizations.list()
    assert [(o.organization_id, o.name, o.read_only) for o in listed] == [(org, "ACME", False)]
    details = owner.organizations.get(org)
    assert details.description == "rockets" and details.shared_users == [] and details.read_only is False
    with pytest.raises(PermissionDeniedError):
        other.organizations.get(org)
    assert owner.organizations.share_add(organization=org, user_id=bob.user_id).message == "Done"
    assert owner.organizations.share_add(organization=org, user_id=bob.user_id).message == "Already Shared"
    assert other.organizations.get(org).read_only is True
    with pytest.raises(PermissionDeniedError):
        other.organizations.update(organization_id=org, name="Bob's")
    assert [s.user_id for s in owner.organizations.share_list(org)] == [bob.user_id]
    assert owner.organizations.update(organization_id=org, name="ACME Rockets").message == org
    assert owner.organizations.get(org).description == "rockets"  # not sent: kept
    assert owner.organizations.share_delete(organization=org, user_id=bob.user_id).message == "Done"
    assert other.organizations.list() == []
    assert owner.organizations.delete(org).message == org
    with pytest.raises(BadRequestError):
        owner.organizations.get(org)


def test_subscriptions_cycle(server: Server, alice: Person, bob: Person, admin: Person) -> None:
    client, other, root = server.sdk(alice), server.sdk(bob), server.sdk(admin)
    types = client.subscriptions.list_types()
    assert [t.type_id for t in types][:2] == ["Free", "OneDayStandard"]
    trial = client.subscriptions.get_active()
    assert isinstance(trial, SubscriptionListViewModel) and trial.reason == "owner" and trial.type_id == "Free"
    sub = client.subscriptions.create(type_id="OneWeekStandard", name="Week",
                                      start_date=datetime(2999, 1, 1, tzinfo=UTC)).message
    assert sub
    view = client.subscriptions.get(sub)
    assert isinstance(view, SubscriptionViewModel)
    assert view.start_date == "2999-01-01T00:00:00.000Z" and view.end_date == "2999-01-08T00:00:00.000Z"
    assert view.duration_days == 7 and view.buy_success is False and view.read_only is False
    assert client.subscriptions.update(subscription_id=sub, description="seven days").message == sub
    assert client.subscriptions.get(sub).description == "seven days"
    assert {s.subscription_id for s in client.subscriptions.list()} == {trial.subscription_id, sub}
    assert [s.subscription_id for s in client.subscriptions.list(valid=True)] == [trial.subscription_id]
    with pytest.raises(PermissionDeniedError):
        other.subscriptions.get(sub)
    assert client.subscriptions.share_add(subscription=sub, user_id=bob.user_id, rights="write").message == "Done"
    assert [s.permissions for s in client.subscriptions.share_list(sub)] == ["write"]
    assert other.subscriptions.get(sub).read_only is False
    assert client.subscriptions.share_delete(subscription=sub, user_id=bob.user_id).message == "Done"
    with pytest.raises(PermissionDeniedError):
        client.subscriptions.count()
    assert root.subscriptions.count().int_value == 4
    page = root.subscriptions.list_all(namefilter="week", sortby="endDate", order="desc")
    assert [s.subscription_id for s in page] == [sub]
    with pytest.raises(BadRequestError):
        root.subscriptions.list_all(sortby="nonsense")
    assert client.subscriptions.delete(sub).message == "Done"


def test_subscription_payment(server: Server, alice: Person) -> None:
    client = server.sdk(alice)
    sub = client.subscriptions.create(SubscriptionViewModel(type_id="OneDayStandard", name="Day")).message
    assert sub
    url = client.subscriptions.payment_url(sub, payprov="local").message
    assert url and "/payments/local/checkout/" in url
    session_id = url.rsplit("/", 1)[1]
    public = server.sdk()  # the confirmation needs no session
    with pytest.raises(ServerError):  # not paid yet: the verification fails
        public.subscriptions.confirm_payment(session_id, payprov="local")
    server.services.payments.get("local").pay(session_id)
    assert public.subscriptions.confirm_payment(session_id, payprov="local") is None
    assert client.subscriptions.get(sub).buy_success is True
    with pytest.raises(BadRequestError):
        client.subscriptions.payment_url(sub, payprov="local")
    with pytest.raises(BadRequestError):
        client.subscriptions.payment_url(sub, payprov="nowhere")


def test_active_subscription_not_found(server: Server) -> None:
    nobody = server.add_user("nobody@example.org", trial=False)
    with pytest.raises(NotFoundError) as info:
        server.sdk(nobody).subscriptions.get_active()
    assert info.value.status == 404


def test_projects_cycle(server: Server, alice: Person, bob: Person) -> None:
    client = server.sdk(alice)
    trial = client.subscriptions.get_active().subscription_id
    assert trial
    listed = client.projects.list()
    assert isinstance(listed[0], ProjectListViewModel) and listed[0].active_project is True
    project = client.projects.create(subscription_id=trial, name="Floods", description="rivers").message
    assert project
    assert client.projects.create(subscription_id=trial, name="Floods").message != project
    assert [p.name for p in client.projects.list_by_subscription(trial)] == ["Floods", "Floods(1)", "WASDI Trial"]
    assert client.projects.set_active(project=project).message == project
    assert client.projects.get(project).active_project is True
    assert client.projects.update(project_id=project, active_project=False).message == project
    assert client.projects.get(project).active_project is False
    assert client.projects.update(project_id=project, name="Rivers").message == project
    assert client.projects.get(project).name == "Rivers" and client.projects.get(project).description == "rivers"
    with pytest.raises(PermissionDeniedError):
        server.sdk(bob).projects.get(project)
    with pytest.raises(PermissionDeniedError):
        client.projects.set_active(project=project, target=bob.user_id)
    assert client.projects.set_active().message == ""
    assert client.projects.delete(project).message == project
    with pytest.raises(BadRequestError):
        client.projects.get(project)


def test_errors_by_meaning(server: Server, alice: Person) -> None:
    expired = server.sdk(token="not-a-session")
    with pytest.raises(AuthenticationError) as info:
        expired.organizations.list()
    assert info.value.status_code == info.value.status == 401 and info.value.code == "MSG_ERROR_INVALID_SESSION"
    with pytest.raises(BadRequestError):
        server.sdk(alice).subscriptions.create(type_id="Platinum")


def test_raw_response_and_wire_names() -> None:
    with respx.mock(base_url="http://wasdi.test") as mock:
        route = mock.post("/subscriptions/add").mock(return_value=httpx.Response(200, json={"message": "s1"}))
        client = WasdiClient(base_url="http://wasdi.test", session_token="tok", max_retries=0)
        raw = client.subscriptions.with_raw_response.create(type_id="Free", start_date=1_700_000_000_000,
                                                            organization_id="")
        assert raw.status_code == 200 and raw.parse().message == "s1"
        sent = route.calls.last.request
        assert sent.headers["x-session-token"] == "tok"
        assert sent.read() == b'{"typeId": "Free", "startDate": "1700000000000", "organizationId": ""}'
        listed = mock.get("/subscriptions/list").mock(return_value=httpx.Response(200, json=[]))
        assert client.subscriptions.list_all(userfilter="a", offset=5, limit=2, order="desc") == []
        assert dict(listed.calls.last.request.url.params) == {"userfilter": "a", "offset": "5", "limit": "2",
                                                              "order": "desc"}
        confirm = mock.get("/subscriptions/stripe/confirmation/cs%2F1").mock(return_value=httpx.Response(200))
        client.subscriptions.confirm_payment("cs/1", payprov="stripe")
        assert "x-session-token" not in confirm.calls.last.request.headers


def test_date_text() -> None:
    assert date_text(datetime(2024, 5, 6, 7, 8, 9, 123456, tzinfo=UTC)) == "2024-05-06T07:08:09.123Z"
    assert date_text(datetime(2024, 5, 6)) == "2024-05-06T00:00:00.000Z"
    assert date_text(1_700_000_000_000) == "1700000000000"
    assert date_text("2024-01-01") == "2024-01-01" and date_text(None) is None
