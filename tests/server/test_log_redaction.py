"""Secrets in URLs never reach a log line, whoever logs them."""

from __future__ import annotations

import io
import logging

from wasdi_server.log_redaction import RedactingFilter, install, redact_text


def test_redact_text_drops_queries_and_credentials() -> None:
    text = "fetch https://user:pw@example.org/a/b.tif?X-Amz-Signature=abc123 failed; see http://h/x"
    shown = redact_text(text)
    assert "abc123" not in shown and "pw@" not in shown
    assert "https://example.org/a/b.tif?…" in shown and "http://h/x" in shown


def test_the_filter_redacts_messages_arguments_and_tracebacks() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("test.redaction")
    logger.propagate = False
    logger.addHandler(handler)
    install(logger)
    install(logger)
    assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    try:
        logger.warning("provider failed: %s", "Client error for url https://stac.example/search?token=s3cret")
        try:
            raise ValueError("GET https://bucket.example/o?sig=tracebacksecret")
        except ValueError:
            logger.exception("import failed")
    finally:
        logger.removeHandler(handler)
    out = stream.getvalue()
    assert "s3cret" not in out and "tracebacksecret" not in out
    assert "https://stac.example/search?…" in out and "import failed" in out
