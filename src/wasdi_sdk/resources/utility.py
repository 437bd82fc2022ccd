"""``client.utility``: the /wasdi health check and feedback."""

from __future__ import annotations

from typing import Unpack, cast

from .._resource import APIResource, RequestOptions
from ..models import FeedbackViewModel, PrimitiveResult, StringResult


class UtilityResource(APIResource):
    """/wasdi."""

    def hello(self, **options: Unpack[RequestOptions]) -> StringResult:
        """Health check; ``string_value`` holds the server's greeting."""
        return cast(StringResult, self._call("utility.hello", **options))

    def feedback(self, *, title: str, message: str, **options: Unpack[RequestOptions]) -> PrimitiveResult:
        """Send feedback to the operators by e-mail."""
        return cast(PrimitiveResult, self._call("utility.feedback",
                                                body=FeedbackViewModel(title=title, message=message), **options))
