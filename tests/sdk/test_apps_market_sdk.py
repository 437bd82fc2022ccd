"""client.processors (store, sharing, payments), client.param_templates and client.processor_media against
the real app: typed answers and failures as exceptions."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app

from wasdi_sdk import (
    AuthenticationError,
    BadRequestError,
    EmptyResultError,
    NotFoundError,
    PermissionDeniedError,
)
from wasdi_sdk.models import AppDetailViewModel, AppFilterViewModel, AppListViewModel, DeployedProcessorViewModel


def test_store_and_sharing(server: Server, alice: Person, bob: Person) -> None:
    app = make_app(server, alice, "alpha", isPublic=1, showInStore=True, categories=["marine"])
    client, bobs = server.sdk(alice), server.sdk(bob)
    listed = client.processors.list()
    assert [p.processor_name for p in listed] == ["alpha"] and isinstance(listed[0], DeployedProcessorViewModel)
    assert listed[0].is_public == 1
    assert client.processors.get(name="alpha").processor_id == app["processorId"]
    with pytest.raises(EmptyResultError):
        client.processors.get(processor_id="nope")
    rows = bobs.processors.market_list(categories=["marine"], order_by="name")
    assert [r.processor_name for r in rows] == ["alpha"] and isinstance(rows[0], AppListViewModel)
    assert bobs.processors.market_list(AppFilterViewModel(name="zzz")) == []
    assert rows[0].score == -1 and rows[0].is_mine is False
    detail = bobs.processors.market_detail("alpha")
    assert isinstance(detail, AppDetailViewModel) and detail.category_names == ["Marine and Coasts"]
    with pytest.raises(BadRequestError):
        bobs.processors.market_detail("nothing")
    client.processors.update_details(AppDetailViewModel(friendly_name="Alpha!", ondemand_price=2.0),
                                     processor_id=app["processorId"])
    assert bobs.processors.market_detail("alpha").friendly_name == "Alpha!"
    with pytest.raises(PermissionDeniedError):
        bobs.processors.update_details(AppDetailViewModel(friendly_name="mine"), processor_id=app["processorId"])
    assert client.processors.share_add(processor_id=app["processorId"], user_id=bob.user_id).string_value == "Done"
    with pytest.raises(BadRequestError, match="Already shared"):
        client.processors.share_add(processor_id=app["processorId"], user_id=bob.user_id)
    assert [s.user_id for s in client.processors.share_list(app["processorId"])] == [bob.user_id]
    client.processors.share_delete(processor_id=app["processorId"], user_id=bob.user_id)
    with pytest.raises(EmptyResultError):
        client.processors.share_list("nope")


def test_purchase_and_credits(server: Server, alice: Person, bob: Person) -> None:
    app = make_app(server, alice, "paid", isPublic=1, ondemandPrice=3.0, squareKilometerPrice=0.0)
    bobs = server.sdk(bob)
    assert bobs.processors.is_app_purchased(app["processorId"]) is False
    payment_id = bobs.processors.add_app_payment(processor_id=app["processorId"], payment_name="run",
                                                 buy_date="2026-01-01T00:00:00.000Z").message
    assert payment_id
    url = bobs.processors.payment_url(processor=app["processorId"], app_payment=str(payment_id),
                                      payprov="local").message
    checkout = urlsplit(str(url)).path
    paid = server.http.simulate_post(checkout, body="action=pay",
                                     headers={"Content-Type": "application/x-www-form-urlencoded"})
    session_id = paid.headers["location"].rsplit("/", 1)[1]
    assert "window.close" in bobs.processors.confirm_payment(session_id, payprov="local")
    assert bobs.processors.is_app_purchased(app["processorId"]) is True
    assert bobs.processors.get_app_payment(str(payment_id)).buy_success is True
    with pytest.raises(NotFoundError):
        bobs.processors.get_app_payment("nope")
    with pytest.raises(EmptyResultError):
        bobs.processors.confirm_payment("nope", payprov="local")
    area = make_app(server, alice, "area", isPublic=1, squareKilometerPrice=1.0, areaParameterName="bbox")
    assert bobs.processors.credits_for_run({"AOI": "1,0,0,1"}, processor_id=area["processorId"]) == 10875.13
    with pytest.raises(BadRequestError):
        bobs.processors.credits_for_run({"nothing": 1}, processor_id=area["processorId"])


def test_templates(server: Server, alice: Person, bob: Person) -> None:
    app = make_app(server, alice, "alpha", isPublic=1)
    client = server.sdk(alice)
    client.param_templates.create(processor_id=app["processorId"], name="t", json_parameters={"a": 1})
    (listed,) = client.param_templates.list(app["processorId"])
    got = client.param_templates.get(str(listed.template_id))
    assert got.json_parameters == '{"a": 1}' and got.read_only is False
    client.param_templates.update(template_id=listed.template_id, processor_id=app["processorId"], name="u")
    assert client.param_templates.get(str(listed.template_id)).name == "u"
    share = client.param_templates.share_add(processor_parameters_template=str(listed.template_id),
                                             user_id=bob.user_id)
    assert share.string_value == "Done"
    again = client.param_templates.share_add(processor_parameters_template=str(listed.template_id),
                                             user_id=bob.user_id)
    assert again.string_value == "Already Shared."
    assert [s.user_id for s in client.param_templates.share_list(str(listed.template_id))] == [bob.user_id]
    with pytest.raises(BadRequestError):
        client.param_templates.share_add(processor_parameters_template="nope", user_id=bob.user_id)
    client.param_templates.share_delete(processor_parameters_template=str(listed.template_id), user_id=bob.user_id)
    with pytest.raises(PermissionDeniedError):
        server.sdk(bob).param_templates.get(str(listed.template_id))
    client.param_templates.delete(str(listed.template_id))
    assert client.param_templates.list(app["processorId"]) == []


def test_reviews_and_comments(server: Server, alice: Person, bob: Person) -> None:
    app = make_app(server, alice, "alpha", isPublic=1, showInStore=True)
    bobs, client = server.sdk(bob), server.sdk(alice)
    bobs.processor_media.add_review(processor_id=app["processorId"], vote=4, title="good")
    with pytest.raises(BadRequestError):
        bobs.processor_media.add_review(processor_id=app["processorId"], vote=4)
    page = client.processor_media.list_reviews("alpha", page=0, itemsperpage=10)
    assert page.avg_vote == 4.0 and page.number_of_four_star_votes == 1 and page.already_voted is False
    review = (page.reviews or [])[0]
    bobs.processor_media.update_review(id=review.id, processor_id=app["processorId"], vote=5)
    client.processor_media.add_comment(review_id=str(review.id), text="thanks")
    (comment,) = bobs.processor_media.list_comments(str(review.id))
    client.processor_media.update_comment(comment_id=str(comment.comment_id), review_id=str(review.id), text="ty")
    with pytest.raises(AuthenticationError):
        bobs.processor_media.delete_comment(review_id=str(review.id), comment_id=str(comment.comment_id))
    client.processor_media.delete_comment(review_id=str(review.id), comment_id=str(comment.comment_id))
    assert [p.publisher for p in bobs.processor_media.list_publishers()] == [alice.user_id]
    assert any(c.id == "tools" for c in bobs.processor_media.list_categories())
    bobs.processor_media.delete_review(processor_id=app["processorId"], review_id=str(review.id))
    assert client.processor_media.list_reviews("alpha").reviews == []
