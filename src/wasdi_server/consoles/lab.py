"""One JupyterLab of one user on one workspace, run in the box like an app.

The lab is the server's own interpreter running ``jupyterlab`` (the ``[notebook]`` extra), confined by
``Box.run``: it may read the system and the interpreter's environment, write its workspace folder and a
private scratch folder (its HOME, Jupyter's runtime and data folders), and connect to the server's API and
the operator's outbound ports.  It listens on no TCP port: only on a Unix socket in its scratch folder
(``socket_path``), which the server's proxy (``proxy.py``) connects to from outside its world, under the
lab's base path ``/notebook/<workspaceId>/`` of the server's own address.  Its kernels are its children, so
the same rules hold for every cell; they talk to the lab over Unix sockets in the scratch folder too
(Jupyter's ``ipc`` transport).

Its environment is the box's minimum plus what the official library reads (``WASDI_WEBSERVER_URL``,
``WASDI_USER``, ``WASDI_SESSION_ID`` of a session scoped to the workspace, ``WASDI_WORKSPACE_ID``,
``WASDI_BASE_PATH``) and the lab's token (``JUPYTER_TOKEN``: never on a command line, where other
processes of the machine could read it).  An IPython startup file calls ``wasdi.init()`` in each kernel,
so the first cell can use the library at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from ..dates import parse_epoch_ms
from ..launcher.box import Box, BoxUnavailable, Job
from ..launcher.box.doors import RunIdentity
from ..launcher.box.system import interpreter_paths
from ..process_ids import process_alive

log = logging.getLogger("wasdi_server.notebooks")

STARTING = "starting"
READY = "ready"
ENDED = "ended"
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"
POLL_SECONDS = 0.25
"""Between two looks at a starting lab."""
SCRATCH_PREFIX = "wasdi-lab-"
OWNER_FILE = "server.pid"
KEPT_LINES = 40
"""Lines of a lab's output kept to explain why it ended."""
STARTUP = '''\
# Written by the WASDI server: the official library, set up for this workspace in every kernel.
import contextlib as _contextlib
import io as _io

import wasdi

with _contextlib.redirect_stdout(_io.StringIO()) as _said:
    _ok = wasdi.init()
if not _ok:
    print("wasdi.init() failed:\\n" + _said.getvalue()[-2000:])
del _contextlib, _io, _said, _ok
'''


def remove_leftovers() -> int:
    """Remove the scratch folders of labs whose server is gone (it was killed: a lab stopped normally removes
    its own); how many were removed."""
    removed = 0
    for folder in Path(tempfile.gettempdir()).glob(f"{SCRATCH_PREFIX}*"):
        try:
            if folder.owner() != _me() or folder.is_symlink():
                continue
            pid = int((folder / OWNER_FILE).read_text(encoding="utf-8").strip())
        except (OSError, ValueError, KeyError):
            continue
        if pid != os.getpid() and not process_alive(pid):
            shutil.rmtree(folder, ignore_errors=True)
            removed += 1
    return removed


def _me() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


LAB_SOCKET = "lab.sock"
"""The lab's Unix socket, in its scratch folder."""
LAB_PATH = "/notebook/{workspace_id}/"
"""A lab's base path under the server's own address (the labs of every user on one workspace share it: the
proxy tells them apart by who asks)."""


def lab_path(workspace_id: str) -> str:
    """The base path of the labs of ``workspace_id`` under the server's address."""
    return LAB_PATH.format(workspace_id=workspace_id)


@dataclass(frozen=True)
class LabPlan:
    """Where a lab listens and what it is given."""

    user_id: str
    workspace_id: str
    workspace_folder: Path
    server_url: str
    api_ports: tuple[int, ...]
    session: str = field(repr=False)
    """The lab's session (a secret: never in a repr, hence never in a log line that prints the plan)."""
    files_root: Path
    idle_seconds: float
    start_seconds: float


class Lab:
    """A running (or starting, or ended) JupyterLab.  ``start`` runs it in the box in a thread of its own;
    a second thread waits for it to answer, calls ``on_ready``, then stops it once idle."""

    def __init__(self, plan: LabPlan, box: Box, *, on_ready: Callable[[Lab], None],
                 on_end: Callable[[Lab], None]) -> None:
        self.plan = plan
        self.box = box
        self.on_ready = on_ready
        self.on_end = on_end
        self.token = secrets.token_urlsafe(32)
        self.state = STARTING
        self.failure = ""
        """Why the lab ended, when it ended otherwise than stopped (for ``/console/ready`` and the log)."""
        self.started = time.monotonic()
        self.ready_after: float | None = None
        """Seconds from start to the first answer."""
        self._stop = threading.Event()
        self._ended = threading.Event()
        self._lines: deque[str] = deque(maxlen=KEPT_LINES)
        # In the temporary folder, not the data directory: the kernels' socket paths must stay short (a UNIX
        # socket's path has at most 107 bytes).  The server's pid is kept there, for remove_leftovers.
        self._scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        (self._scratch / OWNER_FILE).write_text(str(os.getpid()), encoding="utf-8")
        self.socket_path = self._scratch / LAB_SOCKET
        """Where the lab listens (its only listener)."""
        self.path = lab_path(plan.workspace_id)
        """The lab's base path under the server's own address."""
        self._threads: list[threading.Thread] = []

    # -- what clients see ------------------------------------------------------------------------------
    def address(self, origin: str) -> str:
        """The address a browser opens, under the server's ``origin`` (``scheme://host[:port]``), with the
        token (only for the lab's user)."""
        return f"{origin.rstrip('/')}{self.path}lab?token={self.token}"

    @property
    def running(self) -> bool:
        """Starting or up, and not asked to stop (a lab being stopped is not handed out any more)."""
        return self.state != ENDED and not self._stop.is_set()

    @property
    def up(self) -> bool:
        """Answering, and not asked to stop."""
        return self.state == READY and not self._stop.is_set()

    def client(self, timeout: float) -> httpx.Client:
        """An HTTP client of the lab's own API, over its socket, with its token."""
        transport = httpx.HTTPTransport(uds=str(self.socket_path))
        return httpx.Client(transport=transport, base_url=f"http://lab{self.path.rstrip('/')}",
                            headers={"Authorization": f"token {self.token}"}, timeout=timeout, trust_env=False)

    # -- the job ---------------------------------------------------------------------------------------
    def job(self) -> Job:
        plan, scratch = self.plan, self._scratch
        folders = {name: scratch / name for name in ("runtime", "data", "config", "ipython", "tmp")}
        for folder in folders.values():
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        startup = folders["ipython"] / "profile_default" / "startup"
        startup.mkdir(parents=True, exist_ok=True)
        (startup / "00-wasdi.py").write_text(STARTUP, encoding="utf-8")
        python = sys.executable
        env = {
            "PATH": f"{Path(python).parent}:{SYSTEM_PATH}", "HOME": str(scratch), "TMPDIR": str(folders["tmp"]),
            "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
            "JUPYTER_TOKEN": self.token, "JUPYTER_RUNTIME_DIR": str(folders["runtime"]),
            "JUPYTER_DATA_DIR": str(folders["data"]), "JUPYTER_CONFIG_DIR": str(folders["config"]),
            "IPYTHONDIR": str(folders["ipython"]),
            "WASDI_WEBSERVER_URL": plan.server_url, "WASDI_USER": plan.user_id, "WASDI_SESSION_ID": plan.session,
            "WASDI_WORKSPACE_ID": plan.workspace_id, "WASDI_BASE_PATH": str(plan.files_root) + "/",
        }
        # A Unix socket in the scratch folder, not a port: the server reaches it from outside the lab's network
        # namespace (a path is seen the same in both worlds), and no one else can.  Reached under the server's
        # host names, hence allow_remote_access (the proxy has checked the caller already).
        argv = [python, "-m", "jupyterlab", "--no-browser", f"--ServerApp.sock={self.socket_path}",
                f"--ServerApp.base_url={self.path}", "--ServerApp.allow_remote_access=True",
                f"--ServerApp.root_dir={plan.workspace_folder}", "--ServerApp.terminals_enabled=False",
                "--KernelManager.transport=ipc", "--LabApp.news_url=None",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LabApp.extension_manager=readonly"]
        if os.geteuid() == 0:
            # Jupyter refuses root by its uid; in the box root keeps no capability, so nothing of root's powers.
            argv.append("--allow-root")
        return Job(argv, env, plan.workspace_folder, read=interpreter_paths(python),
                   write=[plan.workspace_folder, scratch], connect_ports=plan.api_ports, bind_ports=[],
                   name=f"lab-{secrets.token_hex(6)}",
                   identity=RunIdentity(plan.user_id, plan.workspace_id, "", self._line))

    # -- lifecycle -------------------------------------------------------------------------------------
    def start(self) -> None:
        job = self.job()
        runner = threading.Thread(target=self._run, args=(job,), daemon=True, name=f"lab-{self.plan.workspace_id}")
        watcher = threading.Thread(target=self._watch, daemon=True, name=f"lab-watch-{self.plan.workspace_id}")
        self._threads = [runner, watcher]
        runner.start()
        watcher.start()

    def stop(self, why: str = "") -> None:
        """Ask the lab to end (the box ends its kernels with it)."""
        if why and not self._stop.is_set():
            log.info("notebook of %s on workspace %s: %s", self.plan.user_id, self.plan.workspace_id, why)
        self._stop.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait for the lab to have ended; whether it has."""
        return self._ended.wait(timeout)

    def _line(self, text: str) -> None:
        text = text.replace(self.token, "<token>")
        self._lines.append(text)
        log.debug("lab of %s on %s: %s", self.plan.user_id, self.plan.workspace_id, text)

    def _run(self, job: Job) -> None:
        try:
            outcome = self.box.run(job, on_output=self._line, stop=self._stop)
            if not self._stop.is_set():
                tail = " / ".join(list(self._lines)[-5:])
                self.failure = (f"the notebook ended by itself (exit code {outcome.code}"
                                + (f": {outcome.error}" if outcome.error else "") + ")" + (f": {tail}" if tail else ""))
        except BoxUnavailable as e:
            self.failure = str(e)
        except Exception as e:  # a thread's failure must still end the lab's record
            log.exception("the notebook of %s on workspace %s could not run", self.plan.user_id, self.plan.workspace_id)
            self.failure = f"the notebook could not start: {e}"
        finally:
            if self.failure:
                log.warning("notebook of %s on workspace %s: %s", self.plan.user_id, self.plan.workspace_id,
                            self.failure)
            self.state = ENDED
            self._stop.set()
            shutil.rmtree(self._scratch, ignore_errors=True)
            try:
                self.on_end(self)
            finally:
                # Last: whoever waits for the end finds it whole (the session closed, the failure published).
                self._ended.set()

    def _watch(self) -> None:
        with self.client(timeout=5.0) as http:
            if not self._wait_ready(http):
                return
            self.state = READY
            self.ready_after = time.monotonic() - self.started
            log.info("notebook of %s on workspace %s ready after %.1f s", self.plan.user_id,
                     self.plan.workspace_id, self.ready_after)
            self.on_ready(self)
            self._watch_idle(http)

    def _wait_ready(self, http: httpx.Client) -> bool:
        deadline = self.started + self.plan.start_seconds
        while not self._stop.is_set():
            with contextlib.suppress(httpx.HTTPError):
                if http.get("/api/status").status_code == 200:
                    return True
            if time.monotonic() >= deadline:
                self.failure = f"the notebook did not answer within {self.plan.start_seconds:g} s"
                self.stop()
                return False
            self._stop.wait(POLL_SECONDS)
        return False

    def _watch_idle(self, http: httpx.Client) -> None:
        interval = min(30.0, max(0.2, self.plan.idle_seconds / 4))
        since = time.time()
        while not self._stop.wait(interval):
            last = self._last_activity(http)
            if last is not None:
                since = max(since, last)
            idle = time.time() - since
            if idle >= self.plan.idle_seconds:
                self.stop(f"stopped after {idle / 60:.1f} minutes without use")
                return

    def _last_activity(self, http: httpx.Client) -> float | None:
        """When the lab was last used (a request, a kernel's message); now while a cell runs."""
        try:
            # no_track_activity: these looks must not count as use themselves.
            status = http.get("/api/status", params={"no_track_activity": "1"}).json()
            kernels = http.get("/api/kernels", params={"no_track_activity": "1"}).json()
        except (httpx.HTTPError, ValueError):
            return None
        if any(isinstance(k, dict) and k.get("execution_state") == "busy" for k in kernels or []):
            return time.time()
        return _epoch(status.get("last_activity") if isinstance(status, dict) else None)


def _epoch(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return parse_epoch_ms(stamp) / 1000.0
    except ValueError:
        return None
