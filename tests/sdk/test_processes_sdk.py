"""client.processes and wait_for_process against the real app, plus backoff with respx."""

from __future__ import annotations

import threading

import httpx
import pytest
import respx
from tests.conftest import Person, Server

from wasdi_sdk import EmptyResultError, ProcessFailedError, ProcessTimeoutError, WasdiClient, wait_for_process
from wasdi_server.launcher import OPERATIONS, OperationContext, OperationFailed


def queue(server: Server, who: Person, op: str) -> tuple[str, str]:
    user = server.services.users.active_user(who.user_id)
    ws = server.services.workspaces.create(user, "w")["workspaceId"]
    return ws, server.services.processes.create(user, ws, op, "product.tif")["processObjId"]


def test_wait_until_done_reports_progress(server: Server, alice: Person, monkeypatch) -> None:
    release = threading.Event()

    def work(ctx: OperationContext) -> bool:
        ctx.progress(50)
        release.wait(5)
        return True

    monkeypatch.setitem(OPERATIONS, "SDKOP", work)
    ws, pid = queue(server, alice, "SDKOP")
    client = server.sdk(alice)
    seen: list[int] = []

    def update(process) -> None:
        seen.append(process.progress_perc)
        if process.progress_perc == 50:
            release.set()

    final = client.wait_for_process(pid, poll_interval=0.05, on_update=update, timeout=10)
    assert final.status == "DONE" and final.progress_perc == 100 and 50 in seen
    assert client.processes.get_status(pid) == "DONE"
    assert client.processes.get_statuses([pid, "nope"]) == ["DONE", "ERROR"]
    assert [p.process_id for p in client.processes.list_by_workspace(ws)] == [pid]
    assert client.processes.last_by_user()[0].process_id == pid


def test_wait_raises_on_error(server: Server, alice: Person, monkeypatch) -> None:
    def broken(ctx: OperationContext) -> bool:
        raise OperationFailed("input missing")

    monkeypatch.setitem(OPERATIONS, "BROKEN", broken)
    _, pid = queue(server, alice, "BROKEN")
    client = server.sdk(alice)
    with pytest.raises(ProcessFailedError) as info:
        client.wait_for_process(pid, poll_interval=0.05, timeout=10)
    assert info.value.process.status == "ERROR" and "input missing" in str(info.value)
    final = wait_for_process(client, pid, raise_on_failure=False, poll_interval=0.05)
    assert final.status == "ERROR"


def test_payload_round_trip_and_stop(server: Server, alice: Person, monkeypatch) -> None:
    monkeypatch.setitem(OPERATIONS, "HOLD", lambda ctx: ctx.stop_event.wait(10) and False)
    _, pid = queue(server, alice, "HOLD")
    client = server.sdk(alice)
    assert client.processes.set_payload(pid, '{"a": 1}').payload == '{"a": 1}'
    assert client.processes.get_payload(pid) == '{"a": 1}'
    client.processes.stop(pid)
    assert client.wait_for_process(pid, raise_on_failure=False, poll_interval=0.05).status == "STOPPED"
    with pytest.raises(EmptyResultError):
        server.sdk(token="not-a-session").processes.get_payload(pid)


BASE = "http://wasdi.test"


@respx.mock
def test_backoff_grows_to_the_cap() -> None:
    states = iter(["CREATED", "RUNNING", "RUNNING", "RUNNING", "DONE"])
    respx.get(f"{BASE}/process/byid").mock(side_effect=lambda request: httpx.Response(
        200, json={"processObjId": "p", "status": next(states)}))
    naps: list[float] = []
    final = wait_for_process(WasdiClient(base_url=BASE, session_token="t"), "p", poll_interval=1.0,
                             max_interval=2.0, sleep=naps.append)
    assert final.status == "DONE" and naps == [1.0, 1.5, 2.0, 2.0]


@respx.mock
def test_timeout() -> None:
    respx.get(f"{BASE}/process/byid").mock(return_value=httpx.Response(
        200, json={"processObjId": "p", "status": "RUNNING"}))
    with pytest.raises(ProcessTimeoutError) as info:
        wait_for_process(WasdiClient(base_url=BASE, session_token="t"), "p", poll_interval=1.0, timeout=0.5,
                         sleep=lambda s: None)
    assert info.value.process.status == "RUNNING"
