"""App-store reviews and their comments (/processormedia).

``reviews`` (key ``reviewId``): ``{reviewId, processorId, userId, vote, date, title, comment}``;
``review_comments`` (key ``commentId``): ``{commentId, reviewId, userId, date, text}``; dates epoch ms.

Rules (contract /processormedia; where it is silent the choice is written here):
- a review needs read access to its app (public, owner, sharing, admin: 403 otherwise); one review
  per user per app (a second is 400); the vote is a number from 0.0 to 5.0 (400 otherwise);
- only the author updates (400, the contract's "failed update") or deletes (401, as the contract
  says) a review; deleting it deletes its comments after it;
- the list of an app's reviews is newest first, paged by ``page``/``itemsperpage`` (defaults 0 and 4;
  negative values are 400); the average and the per-star counts cover every review before paging;
  a vote counts for the star it rounds to (half up), and a vote under 0.5 for none; ``alreadyVoted``
  says whether the caller has a review; without reviews the model is empty (average 0);
- a comment's access goes through its review's app (403); only its author updates (400) or deletes
  (401) it; comments are listed oldest first;
- ``score_of`` gives the market list and detail their average (-1 without votes) and vote count.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from typing import Any

from ...dates import now_ms
from ...errors import MSG_NO_ACCESS_RIGHTS, BadRequest, Forbidden, Unauthorized
from ...store import Collection
from ..accounts.identity import User
from .app_records import AppRecords

MAX_TITLE_LENGTH = 200
MAX_TEXT_LENGTH = 4000
MAX_PAGE_SIZE = 1000
STAR_FIELDS = ("numberOfOneStarVotes", "numberOfTwoStarVotes", "numberOfThreeStarVotes", "numberOfFourStarVotes",
               "numberOfFiveStarVotes")


def check_vote(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise BadRequest("the vote is required: a number from 0.0 to 5.0")
    vote = float(value)
    if not math.isfinite(vote) or vote < 0.0 or vote > 5.0:
        raise BadRequest("the vote must be from 0.0 to 5.0")
    return vote


def _text(value: Any, what: str, limit: int, *, required: bool = False) -> str:
    text = value.strip() if isinstance(value, str) else ""
    if required and not text:
        raise BadRequest(f"the {what} is required")
    if len(text) > limit:
        raise BadRequest(f"the {what} is too long (at most {limit} characters)")
    return text


def star_of(vote: float) -> int:
    """1..5 for a vote of 0.5 or more (rounded half up); 0 for none."""
    return min(5, math.floor(vote + 0.5))


def review_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": doc["reviewId"], "processorId": doc.get("processorId"), "userId": doc.get("userId"),
            "vote": float(doc.get("vote") or 0.0), "date": int(doc.get("date") or 0), "title": doc.get("title") or "",
            "comment": doc.get("comment") or ""}


def comment_view(doc: Mapping[str, Any]) -> dict[str, Any]:
    return {"commentId": doc["commentId"], "reviewId": doc.get("reviewId"), "userId": doc.get("userId"),
            "date": int(doc.get("date") or 0), "text": doc.get("text") or ""}


class ReviewService:
    def __init__(self, reviews: Collection, comments: Collection, apps: AppRecords, *,
                 atomic: Callable[[], AbstractContextManager[None]]) -> None:
        self.reviews = reviews
        self.atomic = atomic
        """``Store.atomic``: a review and its comments go as one (a crash never leaves comments of no review)."""
        self.comments = comments
        self.apps = apps

    # -- helpers ---------------------------------------------------------------------------------
    def _readable_app(self, caller: User, processor_id: Any) -> dict[str, Any]:
        app = self.apps.get(processor_id) if isinstance(processor_id, str) else None
        if app is None:
            raise BadRequest("Invalid processor.")
        if not self.apps.can_read(caller, app):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        return app

    def _review(self, review_id: Any) -> dict[str, Any]:
        doc = self.reviews.get(review_id) if isinstance(review_id, str) and review_id else None
        if doc is None:
            raise BadRequest("Invalid review.")
        return doc

    def score_of(self, processor_id: str) -> tuple[float, int]:
        """(average vote or -1 without votes, number of votes) of an app."""
        votes = [float(d.get("vote") or 0.0) for d in self.reviews.find(processorId=processor_id)]
        return ((sum(votes) / len(votes)) if votes else -1.0), len(votes)

    def scores(self) -> dict[str, tuple[float, int]]:
        """``score_of`` for every app with reviews, in one pass."""
        sums: dict[str, list[float]] = {}
        for d in self.reviews.all():
            sums.setdefault(str(d.get("processorId")), []).append(float(d.get("vote") or 0.0))
        return {pid: (sum(v) / len(v), len(v)) for pid, v in sums.items()}

    # -- reviews ---------------------------------------------------------------------------------
    def add_review(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        app = self._readable_app(caller, data.get("processorId"))
        vote = check_vote(data.get("vote"))
        title = _text(data.get("title"), "title", MAX_TITLE_LENGTH)
        comment = _text(data.get("comment"), "comment", MAX_TEXT_LENGTH)
        with self.reviews.transaction():
            if self.reviews.find_one(processorId=app["processorId"], userId=caller.user_id) is not None:
                raise BadRequest("You already reviewed this app.")
            return self.reviews.insert({
                "reviewId": str(uuid.uuid4()), "processorId": app["processorId"], "userId": caller.user_id,
                "vote": vote, "date": now_ms(), "title": title, "comment": comment,
            })

    def update_review(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        review = self._review(data.get("id"))
        if data.get("processorId") != review.get("processorId"):
            raise BadRequest("Invalid processor.")
        vote = check_vote(data.get("vote"))
        title = _text(data.get("title"), "title", MAX_TITLE_LENGTH)
        comment = _text(data.get("comment"), "comment", MAX_TEXT_LENGTH)
        if review.get("userId") != caller.user_id:
            raise BadRequest("Only the author can change a review.")
        updated = self.reviews.update(review["reviewId"], {"vote": vote, "title": title, "comment": comment,
                                                           "date": now_ms()})
        if updated is None:
            raise BadRequest("Invalid review.")
        return updated

    def delete_review(self, caller: User, processor_id: str, review_id: str) -> None:
        review = self._review(review_id)
        if review.get("processorId") != processor_id:
            raise BadRequest("Invalid review.")
        if review.get("userId") != caller.user_id:
            raise Unauthorized("Only the author can delete a review.")
        with self.atomic():
            if not self.reviews.delete(review_id):
                raise BadRequest("Invalid review.")
            self.comments.delete_where(reviewId=review_id)

    def list_reviews(self, caller: User, processor_name: str, page: int, per_page: int) -> dict[str, Any]:
        app = self.apps.by_name(processor_name)
        if app is None:
            raise BadRequest("Invalid processor.")
        if not self.apps.can_read(caller, app):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        if page < 0 or per_page < 0 or per_page > MAX_PAGE_SIZE:
            raise BadRequest(f"page must be 0 or more and itemsperpage from 0 to {MAX_PAGE_SIZE}")
        docs = self.reviews.find(processorId=app["processorId"])
        out: dict[str, Any] = {"reviews": [], "avgVote": 0.0, **dict.fromkeys(STAR_FIELDS, 0),
                               "alreadyVoted": any(d.get("userId") == caller.user_id for d in docs)}
        if not docs:
            return out
        votes = [float(d.get("vote") or 0.0) for d in docs]
        out["avgVote"] = sum(votes) / len(votes)
        for vote in votes:
            star = star_of(vote)
            if star:
                out[STAR_FIELDS[star - 1]] += 1
        docs.sort(key=lambda d: (-float(d.get("date") or 0.0), d["reviewId"]))
        out["reviews"] = [review_view(d) for d in docs[page * per_page:(page + 1) * per_page]]
        return out

    # -- comments --------------------------------------------------------------------------------
    def add_comment(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        review = self._review(data.get("reviewId"))
        text = _text(data.get("text"), "text", MAX_TEXT_LENGTH, required=True)
        self._readable_app(caller, review.get("processorId"))
        return self.comments.insert({"commentId": str(uuid.uuid4()), "reviewId": review["reviewId"],
                                     "userId": caller.user_id, "date": now_ms(), "text": text})

    def update_comment(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        comment_id = data.get("commentId")
        doc = self.comments.get(comment_id) if isinstance(comment_id, str) and comment_id else None
        if doc is None or doc.get("reviewId") != data.get("reviewId"):
            raise BadRequest("Invalid comment.")
        text = _text(data.get("text"), "text", MAX_TEXT_LENGTH, required=True)
        if doc.get("userId") != caller.user_id:
            raise BadRequest("Only the author can change a comment.")
        updated = self.comments.update(doc["commentId"], {"text": text, "userId": caller.user_id, "date": now_ms()})
        if updated is None:
            raise BadRequest("Invalid comment.")
        return updated

    def delete_comment(self, caller: User, review_id: str, comment_id: str) -> None:
        doc = self.comments.get(comment_id)
        if doc is None or doc.get("reviewId") != review_id:
            raise BadRequest("Invalid comment.")
        if doc.get("userId") != caller.user_id:
            raise Unauthorized("Only the author can delete a comment.")
        if not self.comments.delete(comment_id):
            raise BadRequest("Invalid comment.")

    def list_comments(self, caller: User, review_id: str) -> list[dict[str, Any]]:
        review = self._review(review_id)
        self._readable_app(caller, review.get("processorId"))
        docs = self.comments.find(reviewId=review_id)
        docs.sort(key=lambda d: (float(d.get("date") or 0.0), d["commentId"]))
        return [comment_view(d) for d in docs]

    # -- cascades --------------------------------------------------------------------------------
    def on_app_delete(self, processor_doc: Mapping[str, Any]) -> None:
        """Remove the reviews of a deleted app and their comments (idempotent)."""
        for doc in self.reviews.find(processorId=processor_doc.get("processorId")):
            self.comments.delete_where(reviewId=doc["reviewId"])
            self.reviews.delete(doc["reviewId"])

    def delete_all_of_user(self, user_id: str) -> None:
        """Remove the user's reviews (with every comment on them) and the user's comments."""
        for doc in self.reviews.find(userId=user_id):
            self.comments.delete_where(reviewId=doc["reviewId"])
            self.reviews.delete(doc["reviewId"])
        self.comments.delete_where(userId=user_id)
