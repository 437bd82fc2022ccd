"""/wasdi: health check and feedback."""

from ._types import B_PRIMITIVE, PRIMITIVE, STRING_RESULT, A, Auth, Endpoint, Style, json_body

ENDPOINTS = (
    Endpoint("utility.hello", "GET", "/wasdi/hello", Style.STATUS, A, auth=Auth.PUBLIC, response=STRING_RESULT,
             summary="Health check: a fixed greeting in stringValue."),
    Endpoint("utility.feedback", "POST", "/wasdi/feedback", Style.MARKER, B_PRIMITIVE,
             body=json_body("FeedbackViewModel", required=False), response=PRIMITIVE, mutates=True,
             statuses=(201, 401, 404),
             summary="Send feedback to the operators by e-mail."),
)
