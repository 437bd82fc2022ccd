"""/wasdi: health check and feedback."""

from __future__ import annotations

from wasdi_sdk.models import FeedbackViewModel, PrimitiveResult

from ..errors import NotFound, ServerFailure
from ..providers.mail import send_quietly
from .framework import Call, handles

GREETING = "Hello Wasdi!!"


@handles("utility.hello")
def hello(call: Call) -> PrimitiveResult:
    return PrimitiveResult(string_value=GREETING)


@handles("utility.feedback")
def feedback(call: Call) -> PrimitiveResult:
    body: FeedbackViewModel | None = call.body
    if body is None or not (body.title or "").strip() or not (body.message or "").strip():
        raise NotFound("title and message are required")
    if len(body.title or "") > 500 or len(body.message or "") > 20000:
        raise NotFound("title or message too long")
    user = call.caller
    settings = call.services.settings
    if not send_quietly(call.services.mailer, settings.admin_email, f"WASDI feedback: {body.title}",
                        f"From: {user.user_id}\n\n{body.message}\n"):
        raise ServerFailure("the feedback could not be sent")
    return PrimitiveResult(int_value=201, bool_value=True)
