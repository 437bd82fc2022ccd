"""How fast a status change reaches a subscriber, and what 1,000 subscribers cost the server.

Starts ``python -m wasdi_server serve`` on 127.0.0.1 (free ports, a fresh temporary data directory, one
user) and prints:

1. **Latency, built-in broker**: ``--changes`` status changes, one at a time, each made with
   ``GET /process/updatebyid?...&sendrabbit=1`` (what the official library's ``updateProgressPerc`` sends);
   the time from sending the request to the UPDATEPROCESSES message at a subscriber (the SDK's
   ``client.events.listen``) over the broker's WebSocket.  p50 and p99 (target: p99 < 50 ms), with the
   request's own round trip beside them for scale.
2. **Latency, RabbitMQ**: the same with a second server publishing to RabbitMQ on 127.0.0.1:5672
   (``broker_url``), the subscriber on RabbitMQ's Web-STOMP (enabled with ``rabbitmq-plugins`` when it
   is not; skipped with the reason when RabbitMQ is not there).
3. **1,000 subscribers**: ``--subscribers`` WebSocket connections (from a child process) subscribed to
   one workspace while messages flow (``--rate`` status changes a second, each delivered to every
   subscriber), against the same flow with no subscriber: the server's memory (RSS) and ``GET
   /wasdi/hello`` requests per second (target: >= 0.9x), rounds interleaved none/many/none.

The load (this process, the subscribers' process) is pinned to the first CPU, the server to the others.

    python bench/events.py [--changes 300] [--subscribers 1000] [--rate 5] [--seconds 5] [--rounds 2]

Figures, not a test.  See README.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))
USER = "bench@example.org"
PASSWORD = "bench-password-1"
RABBIT_URL = "amqp://guest:guest@127.0.0.1:5672/"
WEB_STOMP_PORT = 15674


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
    env["WASDI_SERVER_SFTP_PORT"] = "0"  # a free port: the SFTP service is not what is measured
    return env


def _raise_file_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(max(soft, 8192), hard), hard))


CPUS = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
CLIENT_CPUS = set(CPUS[:1])
SERVER_CPUS = set(CPUS[1:]) or set(CPUS)
"""The load (this process and the subscribers' process) on the first CPU, the server on the others: on a
small machine a client sharing CPUs with the server measures mostly itself."""


def _server_process() -> None:
    _raise_file_limit()
    if SERVER_CPUS:
        os.sched_setaffinity(0, SERVER_CPUS)


def _client_process() -> None:
    if CLIENT_CPUS and len(CPUS) > 1:
        os.sched_setaffinity(0, CLIENT_CPUS)


class Server:
    """``wasdi-server serve`` in a subprocess, with one user and a session."""

    def __init__(self, workdir: Path, *extra: str) -> None:
        self.data = workdir / f"data-{len(list(workdir.iterdir()))}"
        added = subprocess.run([sys.executable, "-m", "wasdi_server", "user", "add", USER, "--password-stdin",
                                "--data-dir", str(self.data)], input=PASSWORD + "\n", text=True,
                               capture_output=True, env=environment(), check=False)
        if added.returncode != 0:
            raise SystemExit(f"cannot add the user: {added.stderr}")
        self.port, self.broker_port = free_port(), free_port()
        self.log = open(workdir / f"server-{self.port}.log", "wb")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(self.data), "--host", "127.0.0.1",
             "--port", str(self.port), "--broker-port", str(self.broker_port), *extra],
            env=environment(), stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=_server_process)
        deadline = time.monotonic() + 30
        while True:
            try:
                if self.call("GET", "/wasdi/hello")[0] == 200:
                    break
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start: {(workdir / f'server-{self.port}.log').read_text()}")
            time.sleep(0.1)
        _, body = self.call("POST", "/auth/login", {"userId": USER, "userPassword": PASSWORD})
        self.token = str(json.loads(body)["sessionId"])
        self.workspace = str(json.loads(self.call("GET", "/ws/create?name=bench")[1])["stringValue"])
        # A process to move: an import this server refuses to fetch (loopback) ends in ERROR at once.
        _, body = self.call("POST", "/filebuffer/download",
                                 {"fileUrl": "http://127.0.0.1:9/x.tif", "workspace": self.workspace})
        self.process = str(json.loads(body)["stringValue"])

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            headers = {"x-session-token": self.token} if hasattr(self, "token") else {}
            data = None
            if body is not None:
                data = json.dumps(body).encode()
                headers["Content-Type"] = "application/json"
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()

    def rss(self) -> int:
        import psutil

        return int(psutil.Process(self.proc.pid).memory_info().rss)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
        self.log.close()


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# -- 1 and 2: latency -------------------------------------------------------------------------------------
def latency(server: Server, changes: int) -> dict[str, float]:
    from wasdi_sdk import WasdiClient

    client = WasdiClient(base_url=f"http://127.0.0.1:{server.port}", session_token=server.token, max_retries=0)
    arrivals: list[float] = []
    trips: list[float] = []
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    with client.events.listen(server.workspace, codes={"UPDATEPROCESSES"}) as events:
        for number in range(changes + 20):  # the first 20 warm up
            perc = number % 101
            status = "RUNNING" if number % 2 else "WAITING"
            wanted = f"{server.process};{status};{perc}"
            started = time.perf_counter()
            connection.request("GET", f"/process/updatebyid?procws={server.process}&status={status}&perc={perc}"
                                      "&sendrabbit=1", headers={"x-session-token": server.token})
            response = connection.getresponse()
            response.read()
            answered = time.perf_counter()
            while True:
                message = events.get(10)
                if message is None:
                    raise SystemExit(f"no message for change {number}")
                if message.payload == wanted:
                    break
            heard = time.perf_counter()
            if number >= 20:
                arrivals.append((heard - started) * 1000)
                trips.append((answered - started) * 1000)
    connection.close()
    client.close()
    return {"p50": statistics.median(arrivals), "p99": percentile(arrivals, 0.99),
            "max": max(arrivals), "request_p50": statistics.median(trips)}


def web_stomp_ready() -> str | None:
    """Why RabbitMQ cannot be measured here (None when it can)."""
    def open_port(port: int) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    if not open_port(5672):
        return "no RabbitMQ on 127.0.0.1:5672"
    if not open_port(WEB_STOMP_PORT):
        plugins = shutil.which("rabbitmq-plugins") or "/usr/sbin/rabbitmq-plugins"
        subprocess.run([plugins, "enable", "rabbitmq_web_stomp"], capture_output=True, timeout=120, check=False)
        deadline = time.monotonic() + 30
        while not open_port(WEB_STOMP_PORT) and time.monotonic() < deadline:
            time.sleep(0.2)
        if not open_port(WEB_STOMP_PORT):
            return "RabbitMQ's Web-STOMP plugin could not be enabled"
    return None


# -- 3: many subscribers ----------------------------------------------------------------------------------
def _ws_text_frame(text: str) -> bytes:
    """One masked WebSocket text frame, as a client must send it (RFC 6455)."""
    payload = text.encode("utf-8")
    mask = os.urandom(4)
    length = len(payload)
    head = bytes([0x81]) + (bytes([0x80 | length]) if length < 126 else bytes([0x80 | 126]) + length.to_bytes(2, "big"))
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


def _subscriber_socket(port: int, token: str, workspace: str, index: int) -> socket.socket:
    """A WebSocket connection that logged in and subscribed; from then on only read and dropped."""
    import base64

    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    key = base64.b64encode(os.urandom(16)).decode()
    sock.sendall((f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                  f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(4096)
    if not answer.startswith(b"HTTP/1.1 101"):
        raise SystemExit(f"the broker refused the WebSocket: {answer[:100]!r}")
    sock.sendall(_ws_text_frame(f"CONNECT\naccept-version:1.2\nhost:/\npasscode:{token}\n\n\x00"))
    sock.sendall(_ws_text_frame(f"SUBSCRIBE\nid:sub-0\ndestination:/exchange/amq.topic/{workspace}\n"
                                f"receipt:r{index}\n\n\x00"))
    seen = answer.split(b"\r\n\r\n", 1)[1]
    while f"receipt-id:r{index}".encode() not in seen:
        seen += sock.recv(4096)
    sock.setblocking(False)
    return sock


def subscribers_child(argv: list[str]) -> None:
    """Opens the subscribers, says ``ready``, then reads what arrives (and drops it) until ``stop_after``.

    Plain sockets and one ``selectors`` loop, so the subscribers' own cost, on the load's CPU, stays small
    next to the server's."""
    import selectors

    url, token, workspace, count, stop_after = argv[0], argv[1], argv[2], int(argv[3]), float(argv[4])
    _raise_file_limit()
    _client_process()
    port = int(url.rsplit(":", 1)[1].strip("/"))
    selector = selectors.DefaultSelector()
    for index in range(count):
        selector.register(_subscriber_socket(port, token, workspace, index), selectors.EVENT_READ)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    received = 0
    deadline = time.monotonic() + stop_after
    while time.monotonic() < deadline:
        for key, _ in selector.select(timeout=1):
            try:
                data = key.fileobj.recv(1 << 16)  # type: ignore[union-attr]
            except BlockingIOError:
                continue
            if not data:
                selector.unregister(key.fileobj)
            received += len(data)
    sys.stderr.write(f"{received} bytes received by {count} subscribers\n")


def hello_rate(server: Server, seconds: float, threads: int) -> float:
    done = [0] * threads
    stop = time.monotonic() + seconds

    def load(index: int) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        while time.monotonic() < stop:
            connection.request("GET", "/wasdi/hello")
            response = connection.getresponse()
            response.read()
            if response.status != 200:
                raise SystemExit(f"hello answered {response.status}")
            done[index] += 1
        connection.close()

    workers = [threading.Thread(target=load, args=(i,)) for i in range(threads)]
    started = time.monotonic()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return sum(done) / (time.monotonic() - started)


class Flow:
    """Status changes at ``rate`` a second, each published to the workspace's subscribers."""

    def __init__(self, server: Server, rate: float) -> None:
        self.server, self.rate = server, rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        number = 0
        while not self._stop.wait(1 / self.rate):
            number += 1
            connection.request("GET", f"/process/updatebyid?procws={self.server.process}&status=RUNNING"
                                      f"&perc={number % 101}&sendrabbit=1",
                               headers={"x-session-token": self.server.token})
            connection.getresponse().read()
        connection.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def many_subscribers(server: Server, count: int, rate: float, seconds: float, rounds: int,
                     threads: int) -> dict[str, Any]:
    flow = Flow(server, rate)
    time.sleep(1)
    baseline_rates, crowd_rates, baseline_rss, crowd_rss = [], [], [], []
    url = f"ws://127.0.0.1:{server.broker_port}/"
    try:
        for _ in range(rounds):
            baseline_rss.append(server.rss())
            baseline_rates.append(hello_rate(server, seconds, threads))
            child = subprocess.Popen([sys.executable, __file__, "--subscribers-child", url, server.token,
                                      server.workspace, str(count), str(seconds + 60)], env=environment(),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            assert child.stdout is not None
            if child.stdout.readline().strip() != "ready":
                raise SystemExit(f"the subscribers did not connect: {child.stderr.read() if child.stderr else ''}")
            time.sleep(1)
            crowd_rss.append(server.rss())
            crowd_rates.append(hello_rate(server, seconds, threads))
            child.terminate()
            child.wait(30)
            time.sleep(1)
        baseline_rates.append(hello_rate(server, seconds, threads))
    finally:
        flow.stop()
    ratios = [crowd / ((baseline_rates[i] + baseline_rates[i + 1]) / 2) for i, crowd in enumerate(crowd_rates)]
    return {"baseline_rps": statistics.median(baseline_rates), "crowd_rps": statistics.median(crowd_rates),
            "ratio": statistics.median(ratios), "baseline_rss": statistics.median(baseline_rss),
            "crowd_rss": statistics.median(crowd_rss)}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--subscribers-child":
        subscribers_child(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--changes", type=int, default=300, help="status changes timed per broker")
    parser.add_argument("--subscribers", type=int, default=1000)
    parser.add_argument("--rate", type=float, default=5.0, help="status changes a second while measuring")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of one hello measurement")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4, help="client threads asking /wasdi/hello")
    args = parser.parse_args()
    _raise_file_limit()
    _client_process()
    workdir = Path(tempfile.mkdtemp(prefix="wasdi-bench-events-"))
    servers: list[Server] = []
    try:
        built_in = Server(workdir)
        servers.append(built_in)
        figures = latency(built_in, args.changes)
        print(f"latency, built-in broker ({args.changes} changes): p50 {figures['p50']:.1f} ms, "
              f"p99 {figures['p99']:.1f} ms, max {figures['max']:.1f} ms "
              f"(the request alone: p50 {figures['request_p50']:.1f} ms)", flush=True)
        why_not = web_stomp_ready()
        if why_not is None:
            rabbit = Server(workdir, "--config", str(_rabbit_config(workdir)))
            servers.append(rabbit)
            figures = latency(rabbit, args.changes)
            print(f"latency, RabbitMQ + Web-STOMP ({args.changes} changes): p50 {figures['p50']:.1f} ms, "
                  f"p99 {figures['p99']:.1f} ms, max {figures['max']:.1f} ms "
                  f"(the request alone: p50 {figures['request_p50']:.1f} ms)", flush=True)
            rabbit.stop()
            servers.remove(rabbit)
        else:
            print(f"latency, RabbitMQ: not measured ({why_not})", flush=True)
        crowd = many_subscribers(built_in, args.subscribers, args.rate, args.seconds, args.rounds, args.threads)
        mib = 1024 * 1024
        print(f"{args.subscribers} subscribers, {args.rate:g} messages/s to each: server memory "
              f"{crowd['baseline_rss'] / mib:.0f} MiB -> {crowd['crowd_rss'] / mib:.0f} MiB "
              f"(+{(crowd['crowd_rss'] - crowd['baseline_rss']) / args.subscribers / 1024:.0f} KiB each); "
              f"GET /wasdi/hello {crowd['baseline_rps']:.0f} -> {crowd['crowd_rps']:.0f} req/s, "
              f"ratio {crowd['ratio']:.2f}x (target >= 0.9x)", flush=True)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


def _rabbit_config(workdir: Path) -> Path:
    path = workdir / "rabbit.toml"
    path.write_text(f'broker_url = "{RABBIT_URL}"\nwebstomp_login = "guest"\nwebstomp_passcode = "guest"\n'
                    f'webstomp_url = "ws://127.0.0.1:{WEB_STOMP_PORT}/ws"\n')
    return path


if __name__ == "__main__":
    main()
