"""A deployment of several nodes on this machine: a main node and compute nodes, each a real ``python -m
wasdi_server serve`` process with a data directory of its own, all on one PostgreSQL database, talking to
each other over HTTP on 127.0.0.1 only.  Used by tests/e2e/test_nodes_e2e.py and bench/nodes.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

SRC = Path(__file__).resolve().parents[2] / "src"
SECRET = "deployment-test-secret-0123456789"
PASSWORD = "nodes-password-1"
ADMIN = "root@example.org"
ALICE = "alice@example.org"
BOB = "bob@example.org"


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Node:
    """One node: its code, process, port and data directory."""

    code: str
    data_dir: Path
    port: int
    log_path: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None


@dataclass
class Deployment:
    """A main node and compute nodes on one database (``store_url``)."""

    root: Path
    store_url: str
    settings: dict[str, object] = field(default_factory=dict)
    nodes: dict[str, Node] = field(default_factory=dict)
    tokens: dict[tuple[str, str], str] = field(default_factory=dict)

    def env(self, node: Node | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(SRC), env.get("PYTHONPATH", "")) if p)
        env["PYTHONUNBUFFERED"] = "1"
        env["WASDI_SERVER_STORE_URL"] = self.store_url
        env["WASDI_SERVER_NODE_SECRET"] = SECRET
        env["WASDI_SERVER_METRICS_INTERVAL_SECONDS"] = "1"
        env["WASDI_SERVER_LAUNCHER_POLL_SECONDS"] = "0.2"
        env["WASDI_SERVER_NODE_CALL_TIMEOUT_SECONDS"] = "5"
        env["WASDI_SERVER_SFTP_PORT"] = "0"  # nodes and parallel test servers never contend for 2222
        env["WASDI_SERVER_NODE_URLS"] = ",".join(n.url for n in self.nodes.values())  # all added before a start
        for name, value in self.settings.items():
            env["WASDI_SERVER_" + name.upper()] = value if isinstance(value, str) else __import__("json").dumps(value)
        if node is not None:
            env["WASDI_SERVER_NODE_CODE"] = node.code
            env["WASDI_SERVER_PUBLIC_URL"] = node.url
        return env

    def cli(self, node: Node, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "wasdi_server", *args, "--data-dir", str(node.data_dir)],
                              input=stdin, env=self.env(node), capture_output=True, text=True, timeout=120,
                              check=False)

    def add_node(self, code: str) -> Node:
        node = Node(code, self.root / code / "data", free_port(), self.root / code / "server.log")
        node.data_dir.mkdir(parents=True, exist_ok=True)
        self.nodes[code] = node
        return node

    def start(self, code: str, timeout: float = 30.0) -> Node:
        node = self.nodes[code]
        log = open(node.log_path, "ab")  # noqa: SIM115 (the child writes it; closed right after the fork)
        try:
            node.proc = subprocess.Popen(
                [sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(node.data_dir), "--host",
                 "127.0.0.1", "--port", str(node.port), "--broker-port", str(free_port()), "--node-code", code],
                env=self.env(node), stdout=log,
                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while True:
            if node.proc.poll() is not None:
                raise RuntimeError(f"node {code} exited with {node.proc.returncode}:\n{node.output()[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(node.url + "/wasdi/hello", timeout=2).status_code == 200:
                    return node
            if time.monotonic() > deadline:
                raise RuntimeError(f"node {code} did not answer within {timeout:.0f} s:\n{node.output()[-3000:]}")
            time.sleep(0.1)

    def kill(self, code: str) -> None:
        node = self.nodes[code]
        if node.alive and node.proc is not None:
            os.kill(node.proc.pid, signal.SIGKILL)
            node.proc.wait(10)

    def stop(self, code: str) -> None:
        node = self.nodes[code]
        if node.alive and node.proc is not None:
            node.proc.terminate()
            try:
                node.proc.wait(20)
            except subprocess.TimeoutExpired:
                node.proc.kill()
                node.proc.wait(10)

    def close(self) -> None:
        """Stop every node (a clean stop also stops the apps it runs), killing one that lingers."""
        for code in list(self.nodes):
            with contextlib.suppress(Exception):
                self.stop(code)

    # -- people -------------------------------------------------------------------------------------------
    def add_users(self, users: dict[str, bool], data_dir: Path | None = None) -> None:
        """The users (id -> admin) added to the shared database in one process, as ``wasdi-server user add``
        does it, with a cheap password hash (the hash records its own cost: speed changes, not behaviour);
        ``data_dir``: a data directory of its own, while the main node runs on its one."""
        code = ("import sys\nfrom wasdi_server.composition import build_services\n"
                "from wasdi_server.domains.accounts import passwords\n"
                "from wasdi_server.settings import load_settings\nfrom wasdi_server.management import accounts\n"
                "passwords.SCRYPT_N = 2 ** 8\nservices = build_services(load_settings(data_dir=sys.argv[1]))\n"
                "try:\n    for spec in sys.argv[2:]:\n        user, admin = spec.split('=')\n"
                f"        accounts.add(services, user, {PASSWORD!r}, admin=admin == '1', name='N', surname='S')\n"
                "finally:\n    services.close()\n")
        main = self.nodes["wasdi"]
        done = subprocess.run([sys.executable, "-c", code, str(data_dir or main.data_dir),
                               *(f"{u}={int(a)}" for u, a in users.items())], env=self.env(main),
                              capture_output=True, text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr

    def token(self, user_id: str, code: str = "wasdi") -> str:
        key = (user_id, code)
        if key not in self.tokens:
            r = httpx.post(self.nodes[code].url + "/auth/login", json={"userId": user_id, "userPassword": PASSWORD},
                           timeout=30)
            self.tokens[key] = str(r.json()["sessionId"])
        return self.tokens[key]

    def http(self, user_id: str, code: str = "wasdi", timeout: float = 60) -> httpx.Client:
        return httpx.Client(base_url=self.nodes[code].url, headers={"x-session-token": self.token(user_id)},
                            timeout=timeout)

    def register(self, code: str, *, shared: bool = True) -> None:
        """An admin registers a compute node on the main node (``POST /node``)."""
        with self.http(ADMIN) as admin:
            r = admin.post("/node", json={"nodeCode": code, "apiUrl": self.nodes[code].url, "cloudProvider": "local",
                                          "active": True, "shared": shared})
            assert r.status_code == 200, r.text


def start_deployment(root: Path, store_url: str, compute: tuple[str, ...] = ("node1", "node2"),
                     settings: dict[str, object] | None = None) -> Deployment:
    """A main node and ``compute`` nodes, running, registered, with an admin, alice and bob."""
    deployment = Deployment(root, store_url, dict(settings or {}))
    try:
        deployment.add_node("wasdi")
        for code in compute:
            deployment.add_node(code)
        deployment.add_users({ADMIN: True, ALICE: False, BOB: False})
        deployment.start("wasdi")
        for code in compute:
            deployment.register(code)
            deployment.start(code)
    except BaseException:
        deployment.close()
        raise
    return deployment
