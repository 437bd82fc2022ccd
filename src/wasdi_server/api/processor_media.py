"""/processormedia: app-store categories and publishers, reviews and review comments."""

from __future__ import annotations

from wasdi_sdk.models import (
    AppCategoryViewModel,
    CommentListViewModel,
    ListReviewsViewModel,
    PublisherFilterViewModel,
)

from .framework import Call, handles


@handles("processor_media.list_categories")
def list_categories(call: Call) -> list[AppCategoryViewModel]:
    return [AppCategoryViewModel.model_validate(c) for c in call.services.app_store.category_counts(call.caller)]


@handles("processor_media.list_publishers")
def list_publishers(call: Call) -> list[PublisherFilterViewModel]:
    return [PublisherFilterViewModel.model_validate(p) for p in call.services.app_store.publishers(call.caller)]


@handles("processor_media.add_review")
def add_review(call: Call) -> None:
    call.services.reviews.add_review(call.caller, call.body.to_wire())


@handles("processor_media.update_review")
def update_review(call: Call) -> None:
    call.services.reviews.update_review(call.caller, call.body.to_wire())


@handles("processor_media.delete_review")
def delete_review(call: Call) -> None:
    call.services.reviews.delete_review(call.caller, call.params["processorId"], call.params["reviewId"])


@handles("processor_media.list_reviews")
def list_reviews(call: Call) -> ListReviewsViewModel:
    p = call.params
    view = call.services.reviews.list_reviews(call.caller, p["processorName"], p["page"], p["itemsperpage"])
    return ListReviewsViewModel.model_validate(view)


@handles("processor_media.add_comment")
def add_comment(call: Call) -> None:
    call.services.reviews.add_comment(call.caller, call.body.to_wire())


@handles("processor_media.update_comment")
def update_comment(call: Call) -> None:
    call.services.reviews.update_comment(call.caller, call.body.to_wire())


@handles("processor_media.delete_comment")
def delete_comment(call: Call) -> None:
    call.services.reviews.delete_comment(call.caller, call.params["reviewId"], call.params["commentId"])


@handles("processor_media.list_comments")
def list_comments(call: Call) -> list[CommentListViewModel]:
    return [CommentListViewModel.model_validate(c)
            for c in call.services.reviews.list_comments(call.caller, call.params["reviewId"])]
