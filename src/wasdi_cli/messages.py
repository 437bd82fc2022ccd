"""The failure sentences people read: the SDK's (``wasdi_sdk.messages``, the one table of code → sentence),
plus, for some codes, the ``wasdi`` command that helps next.

People see the sentence; the code, the status and the endpoint are added only with ``--verbose`` or ``--json``
(for scripts and bug reports).
"""

from __future__ import annotations

from typing import Any

NEXT_COMMAND: dict[str, str] = {
    "MSG_ERROR_INVALID_SESSION": "run 'wasdi login'",
    "MSG_ERROR_INVALID_WORKSPACE": "run 'wasdi ws list' to see yours",
    "MSG_ERROR_INVALID_NODE": "run 'wasdi nodes list' to see them",
    "MSG_ERROR_INVALID_ORGANIZATION": "run 'wasdi orgs list' to see yours",
    "MSG_ERROR_INVALID_SUBSCRIPTION": "run 'wasdi subscriptions list' to see yours",
    "MSG_ERROR_INVALID_PROCESS": "run 'wasdi processes list' to see yours",
    "MSG_ERROR_INVALID_PROCESSOR": "run 'wasdi apps list' to see them",
    "MSG_ERROR_SHARING_WITH_NON_EXISTENT_USER": "the admin adds one with 'wasdi-server user add EMAIL'",
    "MSG_ERROR_INVALID_USER": "run 'wasdi admin users find TEXT' to look one up",
}
"""Codes whose sentence the command line completes with the command to run next."""

NEXT_BY_STATUS: dict[int, str] = {400: "'--help' lists them", 401: "run 'wasdi login'"}
"""The same for a failure that says only its status."""


def sentence(error: Any) -> str:
    """The sentence for an SDK ``APIError`` (its ``message``), with the command that helps next."""
    from wasdi_sdk.messages import BY_STATUS

    text = str(getattr(error, "message", "") or "").strip()
    code = getattr(error, "code", None)
    status = getattr(error, "status", None)
    hint = NEXT_COMMAND.get(code or "")
    if hint is None and code is None and status in NEXT_BY_STATUS and text == BY_STATUS.get(status):
        hint = NEXT_BY_STATUS[status]
    if not text:
        text = "the server refused the request"
    return f"{text} ({hint})" if hint else text


def details(error: Any) -> str:
    """`` (MSG_..., status N, endpoint)``: what ``--verbose`` and ``--json`` add."""
    parts = [str(getattr(error, "code", "") or "").strip()]
    status = getattr(error, "status", None)
    if status is not None:
        parts.append(f"status {status}")
    endpoint = getattr(error, "endpoint", None)
    if endpoint:
        parts.append(str(endpoint))
    shown = [p for p in parts if p]
    return f" ({', '.join(shown)})" if shown else ""
