"""The one date helper: every form the contract uses, always UTC (a zone-less time is UTC, not local)."""

from __future__ import annotations

import os
import time
from datetime import UTC, datetime

import pytest

from wasdi_server.dates import from_epoch_ms, iso_z, parse_epoch_ms, parse_utc
from wasdi_server.domains.commerce.subscription_terms import parse_date as subscription_date
from wasdi_server.domains.processes.process_stats import parse_instant as stats_instant
from wasdi_server.search_grammar import parse_instant as search_instant

JAN_5 = datetime(2024, 1, 5, 10, 14, 11, tzinfo=UTC)


@pytest.mark.parametrize("text", ["2024-01-05T10:14:11Z", "2024-01-05T10:14:11.000Z", "2024-01-05 10:14:11",
                                  "2024-01-05T10:14:11+00:00", "2024-01-05T12:14:11+02:00",
                                  "2024-01-05T10:14:11z", "2024-01-05T10:14:11.000000000Z"])
def test_every_form_reads_as_the_same_utc_instant(text: str) -> None:
    assert parse_utc(text) == JAN_5 and parse_utc(text).tzinfo is UTC


@pytest.mark.parametrize("text", ["", "yesterday", "2024-13-01", "x" * 100])
def test_unreadable_dates_are_value_errors(text: str) -> None:
    with pytest.raises(ValueError):
        parse_utc(text)


@pytest.fixture
def far_from_utc() -> object:
    # The bug this guards against only shows where the server's local time is not UTC.
    old = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    yield
    if old is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = old
    time.tzset()


def test_statistics_subscriptions_and_search_agree_on_a_zone_less_date(far_from_utc: object) -> None:
    text = "2024-01-05T10:14:11"
    expected = JAN_5.timestamp() * 1000
    assert stats_instant(text) == expected
    assert subscription_date(text, "startDate") == expected
    assert search_instant(text) == JAN_5
    assert parse_epoch_ms(text) == expected


def test_formatting_is_utc_milliseconds() -> None:
    assert iso_z(JAN_5) == "2024-01-05T10:14:11.000Z"
    assert from_epoch_ms(JAN_5.timestamp() * 1000) == JAN_5
    with pytest.raises(ValueError):
        from_epoch_ms(float("inf"))
