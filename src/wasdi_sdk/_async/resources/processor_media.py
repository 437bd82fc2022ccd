"""Generated from ``wasdi_sdk.resources.processor_media`` by ``make async``: do not edit.

``client.processor_media``: app-store categories, publishers, reviews and comments (/processormedia)."""

from __future__ import annotations

import builtins
from typing import Unpack, cast

from ..._resource import RequestOptions
from ...models import (
    AppCategoryViewModel,
    CommentDetailViewModel,
    CommentListViewModel,
    ListReviewsViewModel,
    PublisherFilterViewModel,
    ReviewViewModel,
)
from .._resource import AsyncAPIResource


class AsyncProcessorMediaResource(AsyncAPIResource):
    """Async twin of ``ProcessorMediaResource``: the same methods, awaited.

    /processormedia.  One review per user per app (vote 0.0 to 5.0); comments hang on reviews."""

    async def list_categories(self, **options: Unpack[RequestOptions]) -> builtins.list[AppCategoryViewModel]:
        """The store categories, with how many store apps the user can see in each."""
        return cast(builtins.list[AppCategoryViewModel], await self._call("processor_media.list_categories", **options))

    async def list_publishers(self, **options: Unpack[RequestOptions]) -> builtins.list[PublisherFilterViewModel]:
        """Publishers of the store apps the user can see, with their app counts."""
        return cast(
            builtins.list[PublisherFilterViewModel], await self._call("processor_media.list_publishers", **options)
        )

    async def add_review(
        self,
        review: ReviewViewModel | None = None,
        *,
        processor_id: str | None = None,
        vote: float | None = None,
        title: str | None = None,
        comment: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Review an app.  ``BadRequestError`` for a vote out of range or a second review."""
        if review is None:
            review = ReviewViewModel(processor_id=processor_id, vote=vote, title=title, comment=comment)
        await self._call("processor_media.add_review", body=review, **options)

    async def update_review(
        self,
        review: ReviewViewModel | None = None,
        *,
        id: str | None = None,
        processor_id: str | None = None,
        vote: float | None = None,
        title: str | None = None,
        comment: str | None = None,
        **options: Unpack[RequestOptions],
    ) -> None:
        """Change one's own review (``id`` and ``processor_id`` name it)."""
        if review is None:
            review = ReviewViewModel(id=id, processor_id=processor_id, vote=vote, title=title, comment=comment)
        await self._call("processor_media.update_review", body=review, **options)

    async def delete_review(self, *, processor_id: str, review_id: str, **options: Unpack[RequestOptions]) -> None:
        """Delete one's own review and its comments (another's is ``AuthenticationError``, as the contract says)."""
        await self._call(
            "processor_media.delete_review", query={"processorId": processor_id, "reviewId": review_id}, **options
        )

    async def list_reviews(
        self,
        processor_name: str,
        *,
        page: int | None = None,
        itemsperpage: int | None = None,
        **options: Unpack[RequestOptions],
    ) -> ListReviewsViewModel:
        """A page of an app's reviews (newest first) with the vote statistics of all of them."""
        return cast(
            ListReviewsViewModel,
            await self._call(
                "processor_media.list_reviews",
                query={"processorName": processor_name, "page": page, "itemsperpage": itemsperpage},
                **options,
            ),
        )

    async def add_comment(self, *, review_id: str, text: str, **options: Unpack[RequestOptions]) -> None:
        """Comment on a review of an app the user can read."""
        await self._call(
            "processor_media.add_comment", body=CommentDetailViewModel(review_id=review_id, text=text), **options
        )

    async def update_comment(
        self, *, comment_id: str, review_id: str, text: str, **options: Unpack[RequestOptions]
    ) -> None:
        """Change the text of one's own comment."""
        body = CommentDetailViewModel(comment_id=comment_id, review_id=review_id, text=text)
        await self._call("processor_media.update_comment", body=body, **options)

    async def delete_comment(self, *, review_id: str, comment_id: str, **options: Unpack[RequestOptions]) -> None:
        """Delete one's own comment."""
        await self._call(
            "processor_media.delete_comment", query={"reviewId": review_id, "commentId": comment_id}, **options
        )

    async def list_comments(
        self, review_id: str, **options: Unpack[RequestOptions]
    ) -> builtins.list[CommentListViewModel]:
        """The comments on a review, oldest first."""
        return cast(
            builtins.list[CommentListViewModel],
            await self._call("processor_media.list_comments", query={"reviewId": review_id}, **options),
        )
