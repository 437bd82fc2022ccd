"""``wasdi ws watch`` and the waits that wake on messages, against a server whose built-in broker listens."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import ALICE, ALICE_PASSWORD, BOB, BOB_PASSWORD, Cli
from tests.messages_support import foreign_process, free_port
from wasdi_server import create_app, load_settings
from wasdi_server.app import WasdiApp
from wasdi_server.messages import start_listener


@pytest.fixture
def wasdi_app(tmp_path: Path) -> Iterator[WasdiApp]:
    port = free_port()
    app = create_app(load_settings(data_dir=tmp_path / "data", environ={}, broker_port=port,
                                   webstomp_url=f"ws://127.0.0.1:{port}/ws"))
    app.services.users.add(ALICE, ALICE_PASSWORD, name="Alice", surname="Liddell")
    app.services.users.add(BOB, BOB_PASSWORD, name="Bob", surname="Builder")
    broker = start_listener(app.services, host="127.0.0.1")
    assert broker is not None
    app.broker = broker  # type: ignore[attr-defined]
    yield app
    broker.stop()
    app.services.close()


def workspace(cli: Cli, name: str = "floods") -> str:
    result = cli("ws", "create", name)
    assert result.exit_code == 0, result.output
    return result.stdout.strip()


def later(seconds: float, action: object) -> threading.Thread:
    def run() -> None:
        time.sleep(seconds)
        action()  # type: ignore[operator]

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_watch_prints_each_message_as_a_line(cli: Cli) -> None:
    cli.login()
    ws = workspace(cli)
    send = cli.app.services.messages.send
    thread = later(0.7, lambda: (send("UPDATEPROCESSES", "p-1;RUNNING;30", ws, result=None),
                                 send("INFO", "Deploy Done<br>hello is now available", ws)))
    result = cli("ws", "watch", "floods", "--timeout", "2.5")
    thread.join()
    assert result.exit_code == 0, result.output
    assert f"Watching workspace 'floods' ({ws}); Ctrl-C stops" in result.stderr
    first, second = result.stdout.strip().splitlines()
    assert first.split()[1:] == ["UPDATEPROCESSES", "p-1", "RUNNING", "30%"]
    assert second.split(None, 1)[1] == "INFO              OK  Deploy Done - hello is now available"


def test_watch_json_prints_the_messages_as_sent_and_filters_codes(cli: Cli) -> None:
    cli.login()
    ws = workspace(cli)
    send = cli.app.services.messages.send
    thread = later(0.7, lambda: (send("UPDATEPROCESSES", "p-1;DONE;100", ws, result=None),
                                 send("DELETE", None, ws)))
    result = cli("ws", "watch", ws, "--json", "--code", "delete", "--timeout", "2.5")
    thread.join()
    assert result.exit_code == 0, result.output
    (line,) = result.stdout.strip().splitlines()
    assert json.loads(line) == {"messageCode": "DELETE", "messageResult": "OK", "payload": None, "workspaceId": ws}


def test_watch_says_why_it_cannot(cli: Cli, wasdi_app: WasdiApp) -> None:
    cli.login()
    ws = workspace(cli)
    cli.login(BOB, BOB_PASSWORD)
    refused = cli("ws", "watch", ws, "--timeout", "1")
    assert refused.exit_code == 4 and "you may not read workspace" in refused.stderr
    wasdi_app.broker.stop()  # type: ignore[attr-defined]
    cli.login()
    down = cli("ws", "watch", ws, "--timeout", "1")
    assert down.exit_code == 3 and "cannot listen to" in down.stderr and "message broker" in down.stderr


def test_a_wait_ends_when_the_message_comes_not_at_the_next_poll(cli: Cli) -> None:
    cli.login()
    ws = workspace(cli)
    pid = foreign_process(cli.app, ALICE, ws, "RUNNING")  # type: ignore[arg-type]
    thread = later(0.7, lambda: cli.app.services.processes.set_status(pid, "DONE", 100, notify=True))
    started = time.monotonic()
    result = cli("processes", "wait", pid, "--interval", "20", "--json")
    thread.join()
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "DONE"
    assert time.monotonic() - started < 8  # polling alone would read it again after 20 s
