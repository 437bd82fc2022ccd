"""Models of /wasdi."""

from __future__ import annotations

from ._base import WasdiModel


class FeedbackViewModel(WasdiModel):
    title: str | None = None
    message: str | None = None
