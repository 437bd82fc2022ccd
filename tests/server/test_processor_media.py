"""/processormedia: categories, publishers, reviews and comments, with every status the contract lists."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app, share_app

BASE = "/processormedia"


@pytest.fixture
def app(server: Server, alice: Person) -> dict[str, Any]:
    return make_app(server, alice, "ndvi", isPublic=1, showInStore=True, categories=["agriculture"])


def review(server: Server, who: Person, app: dict[str, Any], vote: Any = 4.0, **extra: Any) -> Any:
    return server.post(f"{BASE}/reviews/add", who, json={"processorId": app["processorId"], "vote": vote,
                                                          "title": "t", "comment": "c", **extra})


def reviews_of(server: Server, who: Person, name: str = "ndvi", **params: Any) -> Any:
    return server.get(f"{BASE}/reviews/getlist", who, processorName=name, **params)


def test_one_review_per_user_and_statistics_over_all(server: Server, alice: Person, bob: Person,
                                                     app: dict[str, Any]) -> None:
    empty = reviews_of(server, bob).json
    assert empty == {"reviews": [], "avgVote": 0.0, "numberOfOneStarVotes": 0, "numberOfTwoStarVotes": 0,
                     "numberOfThreeStarVotes": 0, "numberOfFourStarVotes": 0, "numberOfFiveStarVotes": 0,
                     "alreadyVoted": False}
    voters = [server.add_user(f"u{i}@example.org") for i in range(5)]
    for who, vote in zip(voters, (1, 2, 2.5, 4.4, 5), strict=True):
        assert review(server, who, app, vote).status_code == 200
    assert review(server, voters[0], app, 3).status_code == 400  # already voted
    page = reviews_of(server, voters[0], page=0, itemsperpage=2).json
    assert len(page["reviews"]) == 2 and page["alreadyVoted"] is True
    assert page["avgVote"] == pytest.approx((1 + 2 + 2.5 + 4.4 + 5) / 5)
    assert [page[f"number{s}StarVotes"] for s in ("OfOne", "OfTwo", "OfThree", "OfFour", "OfFive")] == [1, 1, 1, 1, 1]
    assert reviews_of(server, bob).json["alreadyVoted"] is False
    default = reviews_of(server, bob).json
    assert len(default["reviews"]) == 4  # default page size
    last = reviews_of(server, bob, page=2, itemsperpage=2).json
    assert len(last["reviews"]) == 1 and last["avgVote"] == page["avgVote"]
    first = default["reviews"][0]
    assert set(first) == {"id", "processorId", "userId", "vote", "date", "title", "comment"}
    assert isinstance(first["date"], int)


@pytest.mark.parametrize("vote", [-0.1, 5.01, "high", None, "NaN"])
def test_vote_out_of_range_is_400(server: Server, bob: Person, app: dict[str, Any], vote: Any) -> None:
    assert review(server, bob, app, vote).status_code == 400


def test_review_failures(server: Server, alice: Person, bob: Person, stranger: Person) -> None:
    private = make_app(server, alice, "secret")
    assert review(server, stranger, private).status_code == 403
    assert reviews_of(server, stranger, "secret").status_code == 403
    assert reviews_of(server, stranger, "nothing").status_code == 400
    assert reviews_of(server, None, "secret").status_code == 401
    assert reviews_of(server, alice, "secret", page=-1).status_code == 400
    assert reviews_of(server, alice, "secret", page="x").status_code == 400
    assert server.post(f"{BASE}/reviews/add", bob, json={"vote": 3}).status_code == 400
    assert server.post(f"{BASE}/reviews/add", bob, json={"processorId": "nope", "vote": 3}).status_code == 400
    assert server.post(f"{BASE}/reviews/add", bob, body="[]", content_type="application/json").status_code == 400
    assert server.post(f"{BASE}/reviews/add", None, json={"processorId": "x", "vote": 3}).status_code == 401
    share_app(server, alice, private, bob)
    assert review(server, bob, private).status_code == 200


def test_only_the_author_updates_or_deletes_and_comments_go_with_the_review(
        server: Server, alice: Person, bob: Person, carol: Person, app: dict[str, Any]) -> None:
    review(server, bob, app, 2)
    rid = reviews_of(server, bob).json["reviews"][0]["id"]
    pid = app["processorId"]
    update = {"id": rid, "processorId": pid, "vote": 5, "title": "better", "comment": "now"}
    assert server.post(f"{BASE}/reviews/update", carol, json=update).status_code == 400
    assert server.post(f"{BASE}/reviews/update", bob, json={**update, "vote": 7}).status_code == 400
    assert server.post(f"{BASE}/reviews/update", bob, json={**update, "id": "nope"}).status_code == 400
    assert server.post(f"{BASE}/reviews/update", None, json=update).status_code == 401
    assert server.post(f"{BASE}/reviews/update", bob, json=update).status_code == 200
    assert reviews_of(server, alice).json["reviews"][0]["title"] == "better"
    assert reviews_of(server, alice).json["avgVote"] == 5.0

    # Comments: access through the review's app; only the author updates or deletes.
    assert server.post(f"{BASE}/comments/add", carol, json={"reviewId": rid, "text": "agree"}).status_code == 200
    assert server.post(f"{BASE}/comments/add", alice, json={"reviewId": rid, "text": "thanks"}).status_code == 200
    assert server.post(f"{BASE}/comments/add", alice, json={"reviewId": rid, "text": ""}).status_code == 400
    assert server.post(f"{BASE}/comments/add", alice, json={"reviewId": "nope", "text": "x"}).status_code == 400
    comments = server.get(f"{BASE}/comments/getlist", bob, reviewId=rid).json
    assert [c["text"] for c in comments] == ["agree", "thanks"]
    assert set(comments[0]) == {"commentId", "reviewId", "userId", "date", "text"}
    cid = comments[0]["commentId"]
    change = {"commentId": cid, "reviewId": rid, "text": "strongly agree"}
    assert server.post(f"{BASE}/comments/update", alice, json=change).status_code == 400
    assert server.post(f"{BASE}/comments/update", carol, json={**change, "reviewId": "x"}).status_code == 400
    assert server.post(f"{BASE}/comments/update", carol, json=change).status_code == 200
    texts = {c["commentId"]: c["text"] for c in server.get(f"{BASE}/comments/getlist", bob, reviewId=rid).json}
    assert texts[cid] == "strongly agree"
    assert server.delete(f"{BASE}/comments/delete", alice, reviewId=rid, commentId=cid).status_code == 401
    assert server.delete(f"{BASE}/comments/delete", carol, reviewId=rid, commentId="nope").status_code == 400
    assert server.delete(f"{BASE}/comments/delete", carol, reviewId=rid).status_code == 400
    assert server.delete(f"{BASE}/comments/delete", carol, reviewId=rid, commentId=cid).status_code == 200
    assert len(server.get(f"{BASE}/comments/getlist", bob, reviewId=rid).json) == 1

    assert server.delete(f"{BASE}/reviews/delete", alice, processorId=pid, reviewId=rid).status_code == 401
    assert server.delete(f"{BASE}/reviews/delete", bob, processorId="other", reviewId=rid).status_code == 400
    assert server.delete(f"{BASE}/reviews/delete", bob, processorId=pid).status_code == 400
    assert server.delete(f"{BASE}/reviews/delete", bob, processorId=pid, reviewId=rid).status_code == 200
    assert server.delete(f"{BASE}/reviews/delete", bob, processorId=pid, reviewId=rid).status_code == 400
    assert server.services.store.collection("review_comments").all() == []
    assert server.get(f"{BASE}/comments/getlist", bob, reviewId=rid).status_code == 400


def test_comments_need_access_to_the_app(server: Server, alice: Person, bob: Person, stranger: Person) -> None:
    private = make_app(server, alice, "secret")
    share_app(server, alice, private, bob)
    review(server, bob, private)
    rid = server.services.store.collection("reviews").all()[0]["reviewId"]
    assert server.post(f"{BASE}/comments/add", stranger, json={"reviewId": rid, "text": "x"}).status_code == 403
    assert server.get(f"{BASE}/comments/getlist", stranger, reviewId=rid).status_code == 403
    assert server.get(f"{BASE}/comments/getlist", None, reviewId=rid).status_code == 401


def test_categories_builtin_and_from_a_file(server: Server, alice: Person, app: dict[str, Any],
                                            tmp_path: Path) -> None:
    got = server.get(f"{BASE}/categories/get", alice).json
    assert {"id": "agriculture", "category": "Agriculture", "count": 1} in got
    assert all(c["count"] == 0 for c in got if c["id"] != "agriculture")
    assert server.get(f"{BASE}/categories/get").status_code == 401
    path = tmp_path / "cats.json"
    path.write_text(json.dumps([{"id": "agriculture", "category": "Farming"}, {"id": "sea", "category": "Sea"}]))
    server.services.app_store.categories_file = str(path)
    assert server.get(f"{BASE}/categories/get", alice).json == [
        {"id": "agriculture", "category": "Farming", "count": 1}, {"id": "sea", "category": "Sea", "count": 0}]
    path.write_text("{broken")
    r = server.get(f"{BASE}/categories/get", alice)
    assert r.status_code == 500 and "cats.json" in r.json["message"]


def test_publishers_follow_the_visibility_rule(server: Server, alice: Person, bob: Person, carol: Person,
                                               admin: Person, app: dict[str, Any]) -> None:
    server.services.users.users.update(alice.user_id, {"publicNickName": "Ali"})
    hidden = make_app(server, bob, "hidden", showInStore=True)          # private, in the store
    make_app(server, bob, "draft", isPublic=1, showInStore=False)       # not in the store
    make_app(server, bob, "open", isPublic=1, showInStore=True)
    as_carol = server.get(f"{BASE}/publisher/getlist", carol).json
    assert as_carol == [{"publisher": alice.user_id, "nickName": "Ali", "appCount": 1},
                        {"publisher": bob.user_id, "nickName": "Bob", "appCount": 1}]
    assert {p["publisher"]: p["appCount"] for p in server.get(f"{BASE}/publisher/getlist", bob).json} == \
        {alice.user_id: 1, bob.user_id: 2}
    share_app(server, bob, hidden, carol)
    assert {p["publisher"]: p["appCount"] for p in server.get(f"{BASE}/publisher/getlist", carol).json} == \
        {alice.user_id: 1, bob.user_id: 2}
    assert server.get(f"{BASE}/publisher/getlist", admin).json[1]["appCount"] == 2
    assert server.get(f"{BASE}/publisher/getlist").status_code == 401
    # Nickname falls back to the user id when there is no name either.
    server.services.users.users.update(alice.user_id, {"publicNickName": "", "name": ""})
    assert server.get(f"{BASE}/publisher/getlist", carol).json[0]["nickName"] == alice.user_id


def test_cascades(server: Server, alice: Person, bob: Person, app: dict[str, Any]) -> None:
    reviews = server.services.reviews
    review(server, bob, app)
    review(server, alice, app)
    rid = {d["userId"]: d["reviewId"] for d in server.services.store.collection("reviews").all()}
    server.post(f"{BASE}/comments/add", bob, json={"reviewId": rid[alice.user_id], "text": "by bob"})
    server.post(f"{BASE}/comments/add", alice, json={"reviewId": rid[bob.user_id], "text": "on bob's"})
    reviews.delete_all_of_user(bob.user_id)
    reviews.delete_all_of_user(bob.user_id)
    assert [d["userId"] for d in server.services.store.collection("reviews").all()] == [alice.user_id]
    assert server.services.store.collection("review_comments").all() == []
    reviews.on_app_delete(app)
    reviews.on_app_delete(app)
    assert server.services.store.collection("reviews").all() == []
