"""What the server's ``/notebook/<workspaceId>/`` path costs a lab's user: the same lab asked through the
server (waitress, the check of the caller, the copy to the lab's Unix socket) and directly on its socket, in
the same run, alternated.

Starts ``python -m wasdi_server serve`` (as ``bench/notebook.py`` does), opens one lab, then measures:

1. a small REST call (``GET /api/contents``: the workspace's listing), ``--requests`` times, p50;
2. a 4 MiB file written (``PUT /api/contents``) and read back (``GET /files/``), ``--rounds`` times, MB/s;
3. a cell's round trip on a kernel (``execute_request`` -> idle) over the kernel's WebSocket, ``--cells``
   times, p50.

Prints each pair and the ratio through the server / direct.

    PYTHONPATH=src python bench/notebook_proxy.py [--requests 300] [--rounds 5] [--cells 50]

Needs the ``[notebook]`` extra and the box.  Figures, not a test.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from notebook import PASSWORD, USER, start_server, stop

FILE_BYTES = 4 * 1024 * 1024


def lab_socket(server_pid: int) -> Path:
    for folder in Path(tempfile.gettempdir()).glob("wasdi-lab-*"):
        with_pid = folder / "server.pid"
        if with_pid.is_file() and with_pid.read_text().strip() == str(server_pid) and (folder / "lab.sock").exists():
            return folder / "lab.sock"
    raise SystemExit("the lab's socket was not found")


def timed(action: Callable[[], object], count: int) -> list[float]:
    found = []
    for _ in range(count):
        started = time.perf_counter()
        action()
        found.append(time.perf_counter() - started)
    return found


def cell_round_trips(connect: Callable[[], object], count: int) -> list[float]:
    from jupyter_client.session import Session

    connection = connect()
    session = Session()
    found = []
    try:
        for _ in range(count):
            request = session.msg("execute_request", content={"code": "1", "silent": False, "store_history": False,
                                                              "user_expressions": {}, "allow_stdin": False})
            request["channel"] = "shell"
            started = time.perf_counter()
            connection.send(json.dumps(request, default=str))  # type: ignore[attr-defined]
            while True:
                message = json.loads(connection.recv())  # type: ignore[attr-defined]
                if (message.get("parent_header", {}).get("msg_id") == request["header"]["msg_id"]
                        and message["msg_type"] == "status" and message["content"]["execution_state"] == "idle"):
                    break
            found.append(time.perf_counter() - started)
    finally:
        connection.close()  # type: ignore[attr-defined]
    return found


def main() -> int:
    import websocket

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cells", type=int, default=50)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-notebook-proxy-"))
    server, base_url = start_server(work / "data", work / "server.log", idle_minutes="30")
    try:
        token = httpx.post(base_url + "/auth/login", json={"userId": USER, "userPassword": PASSWORD},
                           timeout=30).json()["sessionId"]
        with httpx.Client(base_url=base_url, headers={"x-session-token": token}, timeout=30) as http:
            ws = http.get("/ws/create", params={"name": "proxy-bench"}).json()["stringValue"]
            http.post("/console/create", params={"workspaceId": ws})
            deadline = time.monotonic() + 180
            address = ""
            while not address and time.monotonic() < deadline:
                answer = http.get("/console/ready", params={"workspaceId": ws}).json()
                address = answer["stringValue"] if answer["boolValue"] else ""
                time.sleep(0.1)
        if not address:
            raise SystemExit("the lab did not start")
        lab_token = parse_qs(urlsplit(address).query)["token"][0]
        path = urlsplit(address).path.removesuffix("lab")
        auth = {"Authorization": f"token {lab_token}"}
        socket_path = lab_socket(server.pid)
        through = httpx.Client(base_url=base_url + path.rstrip("/"), headers=auth, timeout=60)
        direct = httpx.Client(transport=httpx.HTTPTransport(uds=str(socket_path)),
                              base_url="http://lab" + path.rstrip("/"), headers=auth, timeout=60)
        body = {"type": "file", "format": "text", "content": "x" * FILE_BYTES}
        results: dict[str, dict[str, list[float]]] = {"rest": {}, "file": {}, "cell": {}}
        kernel = through.post("/api/kernels", json={"name": "python3"}).json()["id"]
        channels = f"{path}api/kernels/{kernel}/channels"

        def over_server() -> object:
            return websocket.create_connection(base_url.replace("http", "ws", 1) + channels,
                                               header=[f"Authorization: token {lab_token}"], timeout=60)

        def over_socket() -> object:
            raw = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            raw.connect(str(socket_path))
            return websocket.create_connection("ws://lab" + channels, socket=raw,
                                               header=[f"Authorization: token {lab_token}"], timeout=60)

        for name, client, connect in (("through the server", through, over_server),
                                      ("directly on its socket", direct, over_socket),
                                      ("through the server", through, over_server),
                                      ("directly on its socket", direct, over_socket)):
            rest = timed(lambda c=client: c.get("/api/contents").raise_for_status(), args.requests // 2)
            results["rest"].setdefault(name, []).extend(rest)

            def file_round(c: httpx.Client = client) -> None:
                c.put("/api/contents/bench.txt", json=body).raise_for_status()
                if len(c.get("/files/bench.txt").content) != FILE_BYTES:
                    raise SystemExit("the file read back is not the one written")

            results["file"].setdefault(name, []).extend(timed(file_round, max(1, args.rounds // 2)))
            results["cell"].setdefault(name, []).extend(cell_round_trips(connect, max(1, args.cells // 2)))
        through.close()
        direct.close()
        a, b = "through the server", "directly on its socket"
        rest_a, rest_b = statistics.median(results["rest"][a]), statistics.median(results["rest"][b])
        mb = 2 * FILE_BYTES / 1e6
        file_a, file_b = mb / statistics.median(results["file"][a]), mb / statistics.median(results["file"][b])
        cell_a, cell_b = statistics.median(results["cell"][a]), statistics.median(results["cell"][b])
        print("a lab through the server's /notebook/ path vs directly on its Unix socket (same lab, same run):")
        print(f"  GET /api/contents p50 ({args.requests} each)  {rest_a * 1000:7.2f} ms vs {rest_b * 1000:7.2f} ms"
              f"  ratio {rest_a / rest_b:5.2f}x")
        print(f"  4 MiB written + read ({args.rounds} each)   {file_a:7.1f} MB/s vs {file_b:7.1f} MB/s"
              f"  ratio {file_b / file_a:5.2f}x (time)")
        print(f"  cell round trip p50 ({args.cells} each)      {cell_a * 1000:7.2f} ms vs {cell_b * 1000:7.2f} ms"
              f"  ratio {cell_a / cell_b:5.2f}x")
        return 0
    finally:
        stop(server)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
