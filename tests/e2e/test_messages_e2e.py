"""``wasdi-server serve`` runs the built-in broker beside the API and stops it with the API; the SDK and
``wasdi ws watch`` hear a workspace over real sockets while the official library reports progress."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

from tests.e2e.conftest import ALICE, PASSWORD, SRC, RunningServer
from tests.messages_support import port_open

from wasdi_sdk.models.events import ProcessUpdateMessage


def broker_port(server: RunningServer) -> int:
    found = re.search(r"the built-in broker on ws://127\.0\.0\.1:(\d+)", server.output())
    assert found, server.output()
    return int(found.group(1))


def test_serve_runs_the_broker_and_clients_hear_the_official_librarys_progress(
        server: RunningServer, waspy: ModuleType, tmp_path: Path) -> None:
    port = broker_port(server)
    assert port_open(port)
    sdk = server.sdk(ALICE)
    ws = str(sdk.workspaces.create(name="live").string_value)
    process = sdk.processes.get(str(sdk.file_buffer.import_product(file_url="http://127.0.0.1:9/x.tif", workspace=ws,
                                                              name="x.tif").string_value))
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_")}
    env.update(WASDI_CONFIG_DIR=str(tmp_path / "config"), PYTHONPATH=str(SRC), NO_COLOR="1")
    login = subprocess.run([sys.executable, "-m", "wasdi_cli", "login", "--base-url", server.base_url, "--user", ALICE,
                            "--password-stdin"], input=PASSWORD + "\n", env=env, capture_output=True, text=True,
                           timeout=60, check=False)
    assert login.returncode == 0, login.stderr
    watch = subprocess.Popen([sys.executable, "-m", "wasdi_cli", "ws", "watch", "live", "--json", "--code",
                              "UPDATEPROCESSES"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watch.stderr is not None
        started = watch.stderr.readline()  # said once it is subscribed
        assert "Watching workspace 'live'" in started, started
        with sdk.events.listen(ws, codes={"UPDATEPROCESSES"}, timeout=30) as events:
            # The official library, as an app reports its progress: updateProgressPerc sends sendrabbit=1.
            assert waspy.init(str(_config(tmp_path, server, ws))) is True
            waspy.setIsOnExternalServer(True)
            waspy.setProcId(process.process_id)
            assert waspy.updateProgressPerc(35) == "RUNNING"
            message = events.get(20)
        assert isinstance(message, ProcessUpdateMessage)
        assert (message.process_id, message.progress_perc) == (process.process_id, 35)
        time.sleep(0.5)
        watch.send_signal(signal.SIGINT)  # the watcher runs until interrupted
        out, err = watch.communicate(timeout=30)
    finally:
        watch.kill()
    assert watch.returncode == 130, err
    payloads = [json.loads(line)["payload"] for line in out.splitlines() if line.strip()]
    assert payloads == [f"{process.process_id};RUNNING;35"]
    # The broker stops with the server.
    server.stop()
    assert not port_open(port)


def _config(tmp_path: Path, server: RunningServer, ws: str) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"USER": ALICE, "PASSWORD": PASSWORD, "BASEURL": server.base_url, "WORKSPACEID": ws,
                                "BASEPATH": str(tmp_path / "wasdi-data") + "/"}))
    return path
