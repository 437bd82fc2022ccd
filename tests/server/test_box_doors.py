"""The world's description and the doors: the ``bwrap`` command line a world becomes, the refusal where no world
can be built, and a boxed program calling the proxy door, answered by a ``DoorService`` with the run's identity."""

from __future__ import annotations

import json
import socket
import threading
from dataclasses import replace
from pathlib import Path

import pytest
from tests import environment
from tests.box_jobs import python_job

from wasdi_server.launcher.box import Box, BoxUnavailable, kernel_support
from wasdi_server.launcher.box.doors import PROXY_PORT, ApiRelay, DoorPlan, RunIdentity, proxy_env
from wasdi_server.launcher.box.world import NAMESPACES, World, WorldSupport, bwrap_argv, probe


def test_a_world_binds_parents_first_and_keeps_its_folders_below_its_private_tmp(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    argv = bwrap_argv(World(read_only=(tmp_path,), read_write=(workspace,), cwd=workspace), ["/bin/true"])
    for option in ("--unshare-user", "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts",
                   "--unshare-cgroup", "--die-with-parent", "--new-session"):
        assert option in argv
    tmpfs = argv.index("/tmp", argv.index("--tmpfs"))
    read_only = argv.index(str(tmp_path.resolve()))
    read_write = argv.index(str(workspace.resolve()))
    assert tmpfs < read_only < read_write
    assert argv[read_write - 1] == "--bind" and argv[read_only - 1] == "--ro-bind"
    assert "/etc/shadow" not in argv and "/run" not in argv and "/var/run" not in argv
    assert argv[argv.index("--chdir") + 1] == str(workspace) and argv[-2:] == ["--", "/bin/true"]


def test_a_read_only_folder_inside_a_read_only_one_is_not_bound_again(tmp_path: Path) -> None:
    inner = tmp_path / "app" / "venv"
    (inner / "bin").mkdir(parents=True)
    workspace = tmp_path / "app" / "ws"
    workspace.mkdir()
    (workspace / "ref").mkdir()
    argv = bwrap_argv(World(read_only=(tmp_path / "app", inner, inner / "bin", workspace / "ref"),
                            read_write=(workspace,)), ["/bin/true"])
    binds = [argv[i + 1] for i, word in enumerate(argv) if word in ("--ro-bind", "--bind")]
    assert str(tmp_path / "app") in binds and str(workspace) in binds
    assert str(inner) not in binds and str(inner / "bin") not in binds  # shown already, read-only alike
    assert str(workspace / "ref") in binds  # read-only inside a writable folder: bound, or it would be writable
    assert argv.index(str(workspace / "ref")) > argv.index(str(workspace))


def test_a_working_folder_outside_every_bind_exists_empty(tmp_path: Path) -> None:
    hidden = tmp_path / "data" / "app"
    argv = bwrap_argv(World(cwd=hidden), ["/bin/true"])
    assert argv[argv.index(str(hidden)) - 1] == "--dir"


def test_without_bubblewrap_or_namespaces_a_required_box_refuses_naming_what_to_do(tmp_path: Path) -> None:
    support = kernel_support()
    no_bwrap = replace(support, world=WorldSupport(None))
    with pytest.raises(BoxUnavailable, match="apt-get install bubblewrap"):
        Box(support=no_bwrap).run(python_job("print('ran')"))
    refused = WorldSupport("/usr/bin/bwrap", {**dict.fromkeys(NAMESPACES, True), "user": False},
                           "setting up uid map: Permission denied")
    message = str(Box(support=replace(support, world=refused)).refusal())
    assert "user namespaces" in message and "unprivileged_userns_clone" in message
    assert Box(isolation="off", support=no_bwrap).refusal() is None


class RecordingProxy:
    """A stand-in for the outbound proxy service: answers each connection and notes whose run made it."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str, str]] = []
        self.threads: set[str] = set()

    def serve(self, connection: socket.socket, run: RunIdentity) -> None:
        with connection:
            request = connection.recv(1000).split(b"\r\n", 1)[0].decode()
            self.seen.append((run.user_id, run.workspace_id, run.process_id, request))
            self.threads.add(threading.current_thread().name)
            run.log(f"proxy: {request}")
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nproxied")


def test_a_run_reaches_the_web_only_through_the_proxy_door_answered_with_its_identity(tmp_path: Path) -> None:
    environment.require(probe().works, "bubblewrap cannot build worlds here")
    api = socket.create_server(("127.0.0.1", 0))
    proxy = RecordingProxy()
    box = Box(doors=DoorPlan(api.getsockname()[1], ApiRelay("127.0.0.1", api.getsockname()[1]), proxy))
    code = ("import json, os, urllib.request\n"
            "body = urllib.request.urlopen('http://example.org/simple/', timeout=10).read().decode()\n"
            "print(json.dumps({'body': body, 'proxy': os.environ['HTTP_PROXY'], 'no': os.environ['NO_PROXY']}))\n")
    lines: list[str] = []
    job = replace(python_job(code), identity=RunIdentity("alice", "ws-1", "p-1", lines.append))
    try:
        outcome = box.run(job, on_output=lines.append, timeout=60)
    finally:
        api.close()
    assert outcome.exit_code == 0, lines
    answer = json.loads(lines[-1])
    assert answer == {"body": "proxied", "proxy": f"http://127.0.0.1:{PROXY_PORT}", "no": "127.0.0.1,localhost,::1"}
    assert proxy.seen == [("alice", "ws-1", "p-1", "GET http://example.org/simple/ HTTP/1.1")]
    assert "proxy: GET http://example.org/simple/ HTTP/1.1" in lines
    assert proxy.threads and threading.current_thread().name not in proxy.threads


def test_without_a_proxy_service_there_is_no_proxy_door_and_no_proxy_variable() -> None:
    plan = DoorPlan(8080, ApiRelay("127.0.0.1", 8080))
    assert [door.name for door in plan.doors()] == ["api"] and plan.env() == {}
    with_proxy = DoorPlan(3128, ApiRelay("127.0.0.1", 3128), RecordingProxy())
    assert [door.port for door in with_proxy.doors()] == [3128, 3129]
    assert with_proxy.env() == proxy_env(3129)


def test_the_runs_cgroups_of_two_servers_are_in_folders_of_their_own(tmp_path: Path) -> None:
    from wasdi_server.launcher.box.cgroups import RUNS_FOLDER, CgroupPlace
    from wasdi_server.settings import load_settings

    shared = CgroupPlace("pids", Path("/sys/fs/cgroup/pids") / RUNS_FOLDER, 1)
    support = replace(kernel_support(), cgroups={"pids": shared})
    places = []
    for name in ("one", "two"):
        box = replace(Box.from_settings(load_settings(data_dir=tmp_path / name, environ={})), support=support)
        places.append(Path(str(box.spec(python_job("pass"), "run-1")["cgroups"]["pids"]["path"])))
    assert places[0].name == places[1].name == "run-1"
    assert places[0].parent != places[1].parent
    assert all(p.parent.parent == Path("/sys/fs/cgroup/pids") and p.parent.name.startswith(RUNS_FOLDER + "-")
               for p in places)
