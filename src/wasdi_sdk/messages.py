"""What the service's failure codes mean, in sentences: the one table of code → sentence.

The service answers failures with message codes (the contract's ``ClientMessageCodes``, gaps.md §7, and
``wasdi_server.errors``) or with bare HTTP reason phrases.  The SDK's exceptions carry the sentence in
``message`` and keep the code in ``code``; the ``wasdi`` command prints the same sentence (adding, for some
codes, the command that helps next).
"""

from __future__ import annotations

import re

SENTENCES: dict[str, str] = {
    "MSG_ERROR_INVALID_SESSION": "the session is not valid any more (expired or logged out): log in again",
    "MSG_ERROR_INVALID_WORKSPACE": "there is no such workspace",
    "MSG_ERROR_INVALID_NODE": "there is no such node",
    "MSG_ERROR_INVALID_ORGANIZATION": "there is no such organization",
    "MSG_ERROR_INVALID_SUBSCRIPTION": "there is no such subscription",
    "MSG_ERROR_INVALID_PROCESS": "there is no such process",
    "MSG_ERROR_INVALID_PROCESSOR": "there is no such app",
    "MSG_ERROR_INVALID_DESTINATION_USER": "there is no user with that id: check the e-mail address",
    "MSG_ERROR_SHARING_WITH_ONESELF": "you cannot share something with yourself",
    "MSG_ERROR_SHARING_WITH_OWNER": "that user owns it already: there is nothing to share",
    "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER": "there is no user with that id on this server: check the e-mail "
                                                "address, or ask the server's admin to add the user",
    "MSG_ERROR_SHARING_NOT_FOUND": "it is not shared with that user",
    "MSG_ERROR_IN_INSERT_PROCESS": "the server could not save the change; try again, or tell its admin",
    "MSG_ERROR_IN_DELETE_PROCESS": "the server could not delete it; try again, or tell its admin",
    "MSG_ERROR_CANNOT_ACCESS": "you cannot access it: ask its owner to share it with you",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT": "you may not change it: ask its owner for write access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_WORKSPACE": "you have no access to this workspace: ask its owner to share "
                                                   "it with you (write access to change it)",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_NODE": "you may not change this node: ask its owner or an admin",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_ORGANIZATION": "you may not change this organization: ask its owner for "
                                                      "write access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSWORKSPACE": "you may not change this process: it runs in a "
                                                          "workspace you cannot write",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_SUBSCRIPTION": "you may not change this subscription: ask its owner for "
                                                      "write access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD": "only an admin may do this",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR": "you may not change this app: ask its owner for write access",
    "MSG_ERROR_INVALID_USER": "there is no such user",
    "MSG_ERROR_INVALID_PARTIAL_NAME": "give at least 3 characters of the name to look for",
    "MSG_ERROR_INSUFFICIENT_SEARCH_CRITERIA": "say what to look for: a resource type, a resource id or a user",
    "MSG_SUCCESS_METRICS_ENTRY_INSERT": "the metrics entry was recorded",
    "PRODUCT_ALREADY_PRESENT": "the product is already in the destination workspace",
}
"""Every code of the contract's message catalogue, as the sentence a person reads."""

BY_STATUS: dict[int, str] = {
    400: "the server refused the request as invalid: check the arguments",
    401: "not logged in, or the session expired: log in again",
    403: "you are not allowed to do this: ask the owner for access",
    404: "not found: check the id or name",
    409: "it conflicts with something that exists already",
    500: "the server failed; try again, or tell its admin (its log says why)",
}
"""When the server says only a status (or a bare reason phrase such as ``Bad Request``)."""

WRONG_CREDENTIALS = "wrong user or password"
"""What a refused login means (the service answers it with an empty user, no code)."""

REASON_PHRASES = frozenset({"bad request", "unauthorized", "forbidden", "not found", "conflict",
                            "internal server error", "request failed", "the service refused the request",
                            "invalid session.", "forbidden."})

_CODE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")


def is_code(text: str) -> bool:
    """Whether ``text`` is a message code (``MSG_ERROR_...``) rather than words."""
    return text in SENTENCES or _CODE.fullmatch(text) is not None


def for_status(status: int | None) -> str:
    """The sentence for a failure that says only its status."""
    if status is not None and status >= 500:
        return BY_STATUS[500]
    return BY_STATUS.get(status or 0, "the server refused the request")


def explain(text: str, status: int | None = None) -> tuple[str, str | None]:
    """``(sentence, code)`` for what the service answered: a code, a bare reason phrase or already words."""
    text = text.strip()
    if is_code(text):
        return SENTENCES.get(text) or for_status(status), text
    if not text or text.lower() in REASON_PHRASES:
        return for_status(status), None
    return text, None
