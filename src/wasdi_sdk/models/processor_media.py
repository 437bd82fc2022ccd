"""Models of /processormedia: app-store categories, publishers, reviews and comments."""

from __future__ import annotations

from ._base import WasdiModel


class AppCategoryViewModel(WasdiModel):
    """An app-store category with the number of apps in it."""

    id: str | None = None
    category: str | None = None
    count: int | None = None


class ReviewViewModel(WasdiModel):
    """A user's review of a processor."""

    id: str | None = None
    processor_id: str | None = None
    user_id: str | None = None
    vote: float | None = None
    """0.0 to 5.0."""
    date: int | None = None
    """Epoch milliseconds."""
    title: str | None = None
    comment: str | None = None


class ListReviewsViewModel(WasdiModel):
    """A page of reviews with the vote statistics of all of them."""

    reviews: list[ReviewViewModel] | None = None
    avg_vote: float | None = None
    number_of_one_star_votes: int | None = None
    number_of_two_star_votes: int | None = None
    number_of_three_star_votes: int | None = None
    number_of_four_star_votes: int | None = None
    number_of_five_star_votes: int | None = None
    already_voted: bool | None = None


class CommentDetailViewModel(WasdiModel):
    """A comment on a review, as written."""

    comment_id: str | None = None
    review_id: str | None = None
    user_id: str | None = None
    date: int | None = None
    """Epoch milliseconds."""
    text: str | None = None


class CommentListViewModel(WasdiModel):
    """A comment on a review, as listed."""

    comment_id: str | None = None
    review_id: str | None = None
    user_id: str | None = None
    date: int | None = None
    """Epoch milliseconds."""
    text: str | None = None


class PublisherFilterViewModel(WasdiModel):
    """A publisher of store apps, with their app count."""

    publisher: str | None = None
    nick_name: str | None = None
    app_count: int | None = None
