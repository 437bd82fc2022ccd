"""What the service's failure codes mean, in sentences: the one place the CLI turns a code into words.

The service answers failures with message codes (the contract's ``ClientMessageCodes``, gaps.md §7, and
``wasdi_server.errors``) or bare HTTP reason phrases.  People see the sentence; the code, the status and
the endpoint are added only with ``--verbose`` or ``--json`` (for scripts and bug reports).
"""

from __future__ import annotations

from typing import Any

CODES: dict[str, str] = {
    "MSG_ERROR_INVALID_SESSION": "the session is not valid any more (expired or logged out): run 'wasdi login'",
    "MSG_ERROR_INVALID_WORKSPACE": "there is no such workspace (run 'wasdi ws list' to see yours)",
    "MSG_ERROR_INVALID_NODE": "there is no such node (run 'wasdi nodes list' to see them)",
    "MSG_ERROR_INVALID_ORGANIZATION": "there is no such organization (run 'wasdi orgs list' to see yours)",
    "MSG_ERROR_INVALID_SUBSCRIPTION": "there is no such subscription (run 'wasdi subscriptions list' to see yours)",
    "MSG_ERROR_INVALID_PROCESS": "there is no such process (run 'wasdi processes list' to see yours)",
    "MSG_ERROR_INVALID_PROCESSOR": "there is no such app",
    "MSG_ERROR_INVALID_DESTINATION_USER": "there is no user with that id: check the e-mail address",
    "MSG_ERROR_SHARING_WITH_ONESELF": "you cannot share something with yourself",
    "MSG_ERROR_SHARING_WITH_OWNER": "that user owns it already: there is nothing to share",
    "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER": "there is no user with that id on this server: check the e-mail "
                                                "address, or ask the server's admin to add the user "
                                                "('wasdi-server user add EMAIL')",
    "MSG_ERROR_SHARING_NOT_FOUND": "it is not shared with that user",
    "MSG_ERROR_IN_INSERT_PROCESS": "the server could not save the change; try again, or tell its admin",
    "MSG_ERROR_IN_DELETE_PROCESS": "the server could not delete it; try again, or tell its admin",
    "MSG_ERROR_CANNOT_ACCESS": "you cannot access it: ask its owner to share it with you",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT": "you may not change it: ask its owner for write access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_WORKSPACE": "you may not change this workspace: ask its owner for write "
                                                   "access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_NODE": "you may not change this node: ask its owner or an admin",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_ORGANIZATION": "you may not change this organization: ask its owner for "
                                                      "write access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSWORKSPACE": "you may not change this process: it runs in a "
                                                          "workspace you cannot write",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_SUBSCRIPTION": "you may not change this subscription: ask its owner for "
                                                      "write access",
    "MSG_ERROR_NO_ACCESS_RIGHTS_ADMIN_DASHBOARD": "only an admin may do this",
    "MSG_ERROR_NO_ACCESS_RIGHTS_OBJECT_PROCESSOR": "you may not change this app: ask its owner for write access",
    "MSG_ERROR_INVALID_USER": "there is no such user (run 'wasdi admin users find TEXT' to look one up)",
    "MSG_ERROR_INVALID_PARTIAL_NAME": "give at least 3 characters of the name to look for",
    "MSG_ERROR_INSUFFICIENT_SEARCH_CRITERIA": "say what to look for: a resource type, a resource id or a user",
    "MSG_SUCCESS_METRICS_ENTRY_INSERT": "the metrics entry was recorded",
    "PRODUCT_ALREADY_PRESENT": "the product is already in the destination workspace",
}
"""Every failure code of the contract's message catalogue, as the sentence a person reads."""

BY_STATUS: dict[int, str] = {
    400: "the server refused the request as invalid: check the arguments ('--help' lists them)",
    401: "not logged in, or the session expired: run 'wasdi login'",
    403: "you are not allowed to do this: ask the owner for access",
    404: "not found: check the id or name",
    409: "it conflicts with something that exists already",
    500: "the server failed; try again, or tell its admin (its log says why)",
}
"""When the server says only a status (or a bare reason phrase such as ``Bad Request``)."""

REASON_PHRASES = frozenset({"bad request", "unauthorized", "forbidden", "not found", "conflict",
                            "internal server error", "request failed", "the service refused the request",
                            "invalid session.", "forbidden."})


def sentence(error: Any) -> str:
    """The sentence for an SDK ``APIError`` (its message is a code, a phrase or already a sentence)."""
    text = str(getattr(error, "message", "") or "").strip()
    if text in CODES:
        return CODES[text]
    status = getattr(error, "status", None)
    if (not text or text.lower() in REASON_PHRASES) and status in BY_STATUS:
        return BY_STATUS[status]
    return text or BY_STATUS.get(status or 0, "the server refused the request")


def details(error: Any) -> str:
    """`` (MSG_..., status N, endpoint)``: what ``--verbose`` and ``--json`` add."""
    parts = [str(getattr(error, "message", "") or "").strip()]
    status = getattr(error, "status", None)
    if status is not None:
        parts.append(f"status {status}")
    endpoint = getattr(error, "endpoint", None)
    if endpoint:
        parts.append(str(endpoint))
    shown = [p for p in parts if p]
    return f" ({', '.join(shown)})" if shown else ""
