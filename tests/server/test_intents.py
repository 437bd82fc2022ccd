"""The durable intent mechanism on its own: recorded first, removed last, finished at the next start."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wasdi_server import load_settings
from wasdi_server.composition import build_services
from wasdi_server.store import open_store
from wasdi_server.store.intents import IntentLog


@pytest.fixture
def intents(tmp_path: Path) -> Any:
    store = open_store(tmp_path)
    store.declare("intents", "intentId")
    yield IntentLog(store.collection("intents"))
    store.close()


def test_an_intent_is_recorded_before_its_steps_and_removed_after(intents: IntentLog) -> None:
    seen: list[tuple[str, dict[str, Any], bool]] = []
    intents.register("tidy", lambda subject, details: seen.append(
        (subject, details, intents.is_pending("tidy", subject))))
    intents.run("tidy", "room-1", {"how": "well"})
    assert seen == [("room-1", {"how": "well"}, True)]
    assert intents.pending() == []


def test_a_failed_intent_stays_and_is_finished_later(intents: IntentLog) -> None:
    attempts: list[str] = []

    def flaky(subject: str, details: dict[str, Any]) -> None:
        attempts.append(subject)
        if len(attempts) == 1:
            raise OSError("disk went away")

    intents.register("flaky", flaky)
    with pytest.raises(OSError):
        intents.run("flaky", "s")
    assert [i["attempts"] for i in intents.pending()] == [1]
    assert intents.resume_pending() == 1
    assert intents.pending() == [] and attempts == ["s", "s"]


def test_resume_keeps_an_intent_that_fails_again(intents: IntentLog) -> None:
    def broken(subject: str, details: dict[str, Any]) -> None:
        raise RuntimeError("still broken")

    intents.register("broken", broken)
    intents.record("broken", "x")
    assert intents.resume_pending() == 0
    assert [i["subject"] for i in intents.pending()] == ["x"]


def test_the_same_change_is_one_intent(intents: IntentLog) -> None:
    intents.register("noop", lambda subject, details: None)
    first = intents.record("noop", "a")
    assert intents.record("noop", "a") == first
    assert len(intents.pending()) == 1


def test_unknown_and_twice_registered_kinds_are_refused(intents: IntentLog) -> None:
    intents.register("once", lambda subject, details: None)
    with pytest.raises(ValueError):
        intents.register("once", lambda subject, details: None)
    with pytest.raises(ValueError):
        intents.record("never-registered", "a")


def test_the_server_finishes_pending_intents_when_it_starts(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data", environ={}, metrics_interval_seconds=0)
    services = build_services(settings)
    services.users.add("gone@example.org", "password-123")
    services.intents.record("delete_user", "gone@example.org")  # as a crash right after recording leaves it
    services.close()

    services = build_services(settings)
    try:
        assert services.users.get("gone@example.org") is not None
        services.start()
        assert services.users.get("gone@example.org") is None
        assert services.intents.pending() == []
        # metrics_interval_seconds=0: no recorder thread, so no entry of this node
        assert services.metrics.latest(settings.node_code) is None
    finally:
        services.close()
