"""Secrets never reach a log: URLs lose their query and credentials, whoever logs them.

Signed URLs carry their secret in the query string and basic-auth URLs before the host; an error
message from an HTTP library quotes the URL it failed on.  A filter on the handlers redacts every URL
in every record, so no call site has to remember to.
"""

from __future__ import annotations

import logging
import re

from .providers.outbound import redact

URL_PATTERN = re.compile(r"\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s'\"<>]+")


def redact_text(text: str) -> str:
    """``text`` with each URL in it redacted."""
    return URL_PATTERN.sub(lambda m: redact(m.group(0)), text)


class RedactingFilter(logging.Filter):
    """Formats the record's message once, redacted, and drops the arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):
            return True
        redacted = redact_text(message)
        if redacted != message:
            record.msg, record.args = redacted, None
        if record.exc_info and record.exc_info[1] is not None and not record.exc_text:
            record.exc_text = redact_text(logging.Formatter().formatException(record.exc_info))
        return True


def install(logger: logging.Logger | None = None) -> None:
    """Add the filter to every handler of ``logger`` (the root logger by default), once."""
    for handler in (logger or logging.getLogger()).handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
