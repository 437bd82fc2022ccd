"""Waiting for a process from the CLI: the bar follows the progress, and a failure is a sentence."""

from __future__ import annotations

from typing import Any

import pytest

from wasdi_cli.errors import CliError
from wasdi_cli.waiting import follow, wait_for
from wasdi_sdk import ProcessFailedError
from wasdi_sdk.models import ProcessWorkspaceViewModel


class Waits:
    def __init__(self, outcome: Any) -> None:
        self.outcome = outcome
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def wait_for_process(self, process_id: str, **kwargs: Any) -> Any:
        self.calls.append((process_id, kwargs))
        for perc in (10, 60, 100):
            kwargs["on_update"](ProcessWorkspaceViewModel(process_id="p-1", status="RUNNING", progress_perc=perc))
        if isinstance(self.outcome, Exception):
            raise self.outcome
        return self.outcome


def test_the_final_state_is_returned_and_the_timeout_passed_on() -> None:
    done = ProcessWorkspaceViewModel(process_id="p-1", status="DONE", product_name="scene.tif")
    client = Waits(done)
    assert wait_for(client, "p-1", "Importing", 30.0, "the import failed") is done  # type: ignore[arg-type]
    assert client.calls[0][0] == "p-1" and client.calls[0][1]["timeout"] == 30.0


def test_a_failed_process_is_a_sentence_naming_what_failed() -> None:
    state = ProcessWorkspaceViewModel(process_id="p-2", status="ERROR")
    client = Waits(ProcessFailedError(state))
    with pytest.raises(CliError, match=r"^the import failed: "):
        wait_for(client, "p-2", "Importing", None, "the import failed")  # type: ignore[arg-type]


def test_the_bar_moves_by_the_progress_gained_never_back() -> None:
    moved: list[float] = []
    update = follow(moved.append)
    for perc in (10, 60, 40, 100):
        update(ProcessWorkspaceViewModel(process_id="p-1", status="RUNNING", progress_perc=perc))
    assert moved == [10, 50, 0, 40]
