"""Boxed readers: every read of a user's raster by GDAL runs in a process that sees that workspace's folder and
nothing else, with no network (``RasterReads`` of ``providers/raster_reads.py``).

A reader is ``reader_worker`` started in a world of its own (``world.py``: bubblewrap with new mount, PID,
network, IPC, UTS, cgroup and user namespaces): the system's libraries, this server's interpreter and code
read-only, the job's folders (read-only, or read-write for the layer folder being prepared), a private
``/tmp``, and only loopback.  Inside, GDAL's network options are off and every path is checked against the
folders before it is opened (``raster_references``).

At most ``workers`` readers live at once, each for one world (a set of folders).  A read waits in a queue
(first come, first served; at most ``queue`` waiting) for an idle reader of its world, a free slot, or the
least recently used idle reader of another world (stopped, and a reader of the new world started in its
place); a read still waiting ``wait_seconds`` after it was asked is refused (busy: the caller answers 503
with Retry-After), as is one past a full queue.  A read not answered ``seconds`` after it was sent is refused
and its reader killed (a thread stuck in GDAL cannot be stopped; a process can).  Readers are kept between
reads: the tiles of one layer go to the reader that has its dataset open.  ``warm`` starts a reader before
the first read of a world.

Spare readers (``spares``, from the pool's first read or warm on) are started ahead with an empty folder of their
own as their only one, so a file of a workspace no reader sees yet is read without waiting for a world to start
(an import's ingestion into a new workspace): ``read_one_file`` hard-links the file into a spare's folder, the
spare reads it, and is then stopped (it has seen a user's file) and replaced in the background.  A spare's
folder is on the data disk beside the workspaces (a hard link cannot cross disks: there the read goes to a reader
of the file's folder, as does a read when no spare is ready).

With ``boxed`` false (``app_isolation = off``, an operator's choice for a one-user laptop) readers are plain
processes (the reference checks still apply).  With ``boxed`` true where worlds cannot be built, every read
is refused with the sentence naming what to install.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ...process_ids import process_alive
from ...providers.raster_reads import ReadAnswer, ReadJob, ReadRefused
from . import world as worlds
from .reader_worker import gdal_environment

log = logging.getLogger("wasdi_server.readers")
WORKER_MODULE = "wasdi_server.launcher.box.reader_worker"
STARTUP_SECONDS = 60.0
MAX_HEADER_BYTES = 64 * 1024 * 1024
"""A reader's JSON answer (a metadata tree) larger than this is a broken reader."""
MAX_PAYLOAD_BYTES = 2 * 4096 * 4096 * 4 + 1024
"""The largest pixels a reader sends back: a 4096 x 4096 RGBA map, twice (a PNG cannot be larger)."""
TMP_MB = 256
BUSY = "the server is busy reading other files: try again in a moment"
WorldKey = tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
"""Read-only folders, read-write folders, and the identities (device:inode) of both."""


def _runtime_folders() -> tuple[Path, ...]:
    """This server's interpreter, its packages and its own code: read-only in every reader's world."""
    code = Path(__file__).resolve().parents[3]  # the folder holding wasdi_server (launcher/box/readers.py)
    folders = {Path(sys.prefix), Path(sys.base_prefix), code}
    return tuple(sorted(folders))


def world_key(read_only: Sequence[Path], read_write: Sequence[Path]) -> WorldKey:
    """The folders of a world, resolved, and which folders they are now (a folder removed and made again is
    another world: a reader's bind still holds the old one)."""
    folders = (tuple(sorted({os.path.realpath(p) for p in read_only})),
               tuple(sorted({os.path.realpath(p) for p in read_write})))
    identities = []
    for folder in (*folders[0], *folders[1]):
        try:
            stat = os.stat(folder)
            identities.append(f"{stat.st_dev}:{stat.st_ino}")
        except OSError:
            identities.append("")
    return (*folders, tuple(identities))


class _Reader:
    """One reader process of one world, and the two pipes to it."""

    def __init__(self, key: WorldKey, boxed: bool, spawner: ThreadPoolExecutor) -> None:
        self.key = key
        folders = [*key[0], *key[1]]
        command = [sys.executable, "-m", WORKER_MODULE, json.dumps(folders)]
        env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1",
               **gdal_environment()}
        if boxed:
            box = worlds.World(read_only=(*_runtime_folders(), *(Path(p) for p in key[0])),
                               read_write=tuple(Path(p) for p in key[1]),
                               tmpfs=(worlds.Tmpfs("/tmp", TMP_MB), worlds.Tmpfs("/dev/shm", 16)), env=env,
                               hostname="reader")
            command = worlds.bwrap_argv(box, command)
        # bwrap ends its program when the thread that started it ends (--die-with-parent is the parent *thread*'s
        # death signal): readers are started by the pool's one long-lived thread, not by a request's
        self.process = spawner.submit(subprocess.Popen, command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      close_fds=True, env=env, cwd="/").result()
        assert self.process.stdin is not None and self.process.stdout is not None
        self.jobs = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.results = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()
        # a read's deadline starts when reading can: not while the process imports GDAL and numpy
        try:
            if not self.results.poll(STARTUP_SECONDS) or self._header()["status"] != "ready":
                raise OSError("the reader did not start")
            self.results.recv_bytes(MAX_PAYLOAD_BYTES)
        except (EOFError, OSError, ValueError) as e:
            self.kill()
            raise OSError(f"a file reader did not start: {e}") from e

    def _header(self) -> dict[str, Any]:
        header = json.loads(self.results.recv_bytes(MAX_HEADER_BYTES))
        if not isinstance(header, dict) or not isinstance(header.get("status"), str):
            raise ValueError("a reader's answer is not a header")
        return header

    def run(self, job: ReadJob, seconds: float) -> ReadAnswer:
        """The answer; ``TimeoutError`` after ``seconds``; ``EOFError``/``OSError``/``ValueError`` if the
        reader died or sent what no reader sends; ``ReadRefused`` when it refused or failed the read."""
        self.jobs.send(job)
        if not self.results.poll(max(0.0, seconds)):
            raise TimeoutError
        header = self._header()
        payload = self.results.recv_bytes(MAX_PAYLOAD_BYTES)
        if header["status"] == "ok":
            return ReadAnswer(header.get("value"), payload)
        message = str(header.get("message") or "the file could not be read")[:500]
        raise ReadRefused(message, refused=header["status"] == "refused")

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(5)
        for connection in (self.jobs, self.results):
            with contextlib.suppress(OSError):
                connection.close()


@dataclass(eq=False)
class _Ticket:
    """A read waiting for a reader: given one of its world, a free slot (``reader`` None), or another
    world's idle reader to replace."""

    key: WorldKey
    assigned: bool = False
    reader: _Reader | None = None


class ReaderPool:
    """``workers`` boxed readers; ``read`` queues a job for one that sees its folders (``RasterReads``)."""

    def __init__(self, workers: int = 2, seconds: float = 30.0, wait_seconds: float = 10.0, queue: int = 64,
                 boxed: bool = True, spares: int = 0, spare_root: Path | None = None) -> None:
        self.workers = max(1, workers)
        self.seconds = seconds
        """How long a reader may take over one read."""
        self.wait_seconds = wait_seconds
        """How long a read may wait for a reader."""
        self.queue = max(1, queue)
        """Reads that may wait at once."""
        self.boxed = boxed
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._waiting: deque[_Ticket] = deque()
        self._idle: list[_Reader] = []
        """Idle readers, least recently used first."""
        self._live = 0
        """Slots taken: readers idle, busy or starting."""
        self._started: set[_Reader] = set()
        self._closed = False
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix="reader-spawner")
        self._warming: set[WorldKey] = set()
        self.spares = max(0, spares) if spare_root is not None else 0
        """Spare readers kept ready (beyond ``workers``) for ``read_one_file``."""
        self.spare_root = spare_root
        self._spare_ready: list[_Reader] = []
        self._spare_starting = 0
        if spare_root is not None and self.spares:
            _remove_dead_spare_folders(spare_root)

    # -- the queue ------------------------------------------------------------------------------
    def _assign(self) -> None:
        """Give the waiting reads, oldest first, what is free (called with the lock held).  A read of a world whose
        reader is being started ahead (``warm``) waits for that one rather than starting a second."""
        for ticket in list(self._waiting):
            same = next((r for r in self._idle if r.key == ticket.key), None)
            if same is not None:
                self._idle.remove(same)
                ticket.reader = same
            elif ticket.key in self._warming:
                continue
            elif self._live < self.workers:
                self._live += 1
            elif self._idle:
                ticket.reader = self._idle.pop(0)  # another world's: replaced by the taker
            else:
                return
            ticket.assigned = True
            self._waiting.remove(ticket)
            self._changed.notify_all()

    def _take(self, key: WorldKey) -> _Reader | None:
        """A reader of ``key``'s world, another world's idle reader, or ``None`` (a free slot)."""
        with self._lock:
            if self._closed:
                raise ReadRefused("the server is stopping", busy=True)
            if len(self._waiting) >= self.queue:
                raise ReadRefused(BUSY, busy=True)
            ticket = _Ticket(key)
            self._waiting.append(ticket)
            self._assign()
            deadline = time.monotonic() + self.wait_seconds
            while not ticket.assigned:
                if key in self._warming:  # its reader is starting (bounded by STARTUP_SECONDS): not busy
                    deadline = max(deadline, time.monotonic() + self.wait_seconds)
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self._closed:
                    self._waiting.remove(ticket)
                    raise ReadRefused(BUSY, busy=True)
                self._changed.wait(remaining)
            return ticket.reader

    def _give_back(self, reader: _Reader | None, warmed: WorldKey | None = None) -> None:
        """A slot done with: its reader idle again, or (``None``: it was stopped) the slot free; ``warmed``: the
        world whose reader was being started ahead (the reads waiting for it take it now, or a slot)."""
        with self._lock:
            if warmed is not None:
                self._warming.discard(warmed)
            if reader is not None and not self._closed:
                self._idle.append(reader)
            else:
                self._live -= 1
                if reader is not None:
                    self._started.discard(reader)
            self._assign()
            self._changed.notify_all()
        if reader is not None and self._closed:
            reader.kill()

    def _start(self, key: WorldKey) -> _Reader:
        if self.boxed:
            support = worlds.probe()
            if not support.works:
                raise ReadRefused("files cannot be read here: " + "; ".join(support.missing()))
        reader = _Reader(key, self.boxed, self._spawner)
        with self._lock:
            self._started.add(reader)
        return reader

    def _stop(self, reader: _Reader) -> None:
        with self._lock:
            self._started.discard(reader)
        reader.kill()

    # -- reading --------------------------------------------------------------------------------
    def read(self, job: ReadJob, *, read_only: Sequence[Path], read_write: Sequence[Path] = ()) -> ReadAnswer:
        """The answer of ``job`` from a reader that sees ``read_only`` and ``read_write`` only."""
        self._keep_spares()
        key = world_key(read_only, read_write)
        reader = self._take(key)
        try:
            if reader is None or reader.key != key:
                if reader is not None:
                    self._stop(reader)
                    reader = None
                try:
                    reader = self._start(key)
                except OSError as e:
                    log.warning("%s", e)
                    raise ReadRefused("the file could not be read") from e
            try:
                return self._run(reader, job)
            except _ReaderStopped:
                reader = None
                raise
        finally:
            self._give_back(reader)

    def _run(self, reader: _Reader, job: ReadJob) -> ReadAnswer:
        """``reader``'s answer to ``job``; a reader that timed out or broke is stopped (``_ReaderStopped``)."""
        try:
            return reader.run(job, self.seconds)
        except TimeoutError:
            self._stop(reader)
            raise _ReaderStopped(f"the file took longer than {self.seconds:g} seconds to read: ask for a smaller "
                                 "map or fewer layers", busy=True) from None
        except (EOFError, OSError, ValueError) as e:
            self._stop(reader)
            log.warning("a file reader ended unexpectedly: %s", e)
            raise _ReaderStopped("the file could not be read") from e

    def read_one_file(self, kind: str, file: Path) -> ReadAnswer:
        """The answer of a ``kind`` job about ``file`` alone (a product file that names no other file): from a
        reader of the file's folder when one is running or starting, else from a spare reader that sees that
        file and nothing else when one is ready, else from a reader of the folder started for it.  The spare's
        answer names the file by its own path, as the folder's reader's would."""
        self._keep_spares()
        key = world_key((file.parent,), ())
        with self._lock:
            folder_reader = key in self._warming or any(r.key == key for r in self._started)
            spare = self._spare_ready.pop(0) if self._spare_ready and not folder_reader and not self._closed \
                else None
        if spare is not None:
            folder = Path(spare.key[0][0])
            seen = folder / file.name
            try:
                os.link(file, seen, follow_symlinks=False)
            except OSError as e:  # another disk (or no such file): the spare saw nothing, it stays a spare
                log.debug("a spare reader cannot see %s: %s", file.name, e)
                with self._lock:
                    self._spare_ready.append(spare)
                spare = None
        if spare is None:
            return self.read(ReadJob(kind, (str(file),)), read_only=(file.parent,))
        try:
            answer = self._run(spare, ReadJob(kind, (str(seen),)))
            return ReadAnswer(_renamed(answer.value, str(seen), str(file)), answer.payload)
        finally:
            self._stop(spare)
            shutil.rmtree(folder, ignore_errors=True)
            self._keep_spares()

    # -- spares ---------------------------------------------------------------------------------
    def _keep_spares(self) -> None:
        """Start spare readers until ``spares`` are ready or starting."""
        with self._lock:
            missing = 0 if self._closed else self.spares - len(self._spare_ready) - self._spare_starting
            if missing <= 0:
                return
            self._spare_starting += missing
        for _ in range(missing):
            threading.Thread(target=self._start_spare, name="reader-spare", daemon=True).start()

    def _start_spare(self) -> None:
        assert self.spare_root is not None
        folder: Path | None = None
        reader: _Reader | None = None
        try:
            self.spare_root.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix=_spare_prefix(), dir=self.spare_root))
            reader = self._start(world_key((folder,), ()))
        except (OSError, ReadRefused) as e:  # the next read tries again; reads go to folders' readers meanwhile
            log.warning("a spare file reader could not be started: %s", e)
        with self._lock:
            self._spare_starting -= 1
            keep = reader is not None and not self._closed
            if keep:
                assert reader is not None
                self._spare_ready.append(reader)
        if not keep:
            if reader is not None:
                self._stop(reader)
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)

    @property
    def spares_ready(self) -> int:
        """Spare readers ready now."""
        with self._lock:
            return len(self._spare_ready)

    def warm(self, read_only: Sequence[Path], read_write: Sequence[Path] = ()) -> bool:
        """Start a reader of this world now, in the background, if a slot is free (True: one is starting)."""
        self._keep_spares()
        key = world_key(read_only, read_write)
        with self._lock:
            if self._closed or self._live >= self.workers or key in self._warming \
                    or any(r.key == key for r in self._started):
                return False
            self._live += 1
            self._warming.add(key)

        def start() -> None:
            reader: _Reader | None = None
            try:
                reader = self._start(key)
            except (OSError, ReadRefused) as e:
                log.warning("a file reader could not be started ahead: %s", e)
            self._give_back(reader, warmed=key)

        threading.Thread(target=start, name="reader-warm", daemon=True).start()
        return True

    def close(self) -> None:
        """Stop every reader (a read in progress is refused)."""
        with self._lock:
            self._closed = True
            readers = list(self._started)
            self._started.clear()
            self._idle.clear()
            spare_folders = [Path(r.key[0][0]) for r in self._spare_ready]
            self._spare_ready.clear()
            self._changed.notify_all()
        for reader in readers:
            reader.kill()
        for folder in spare_folders:
            shutil.rmtree(folder, ignore_errors=True)
        self._spawner.shutdown(wait=False)

    def process_ids(self) -> list[int]:
        """The readers running now (the ``bwrap`` processes of boxed ones)."""
        with self._lock:
            return [r.process.pid for r in self._started]

    @property
    def waiting(self) -> int:
        """Reads waiting for a reader now."""
        with self._lock:
            return len(self._waiting)


class _ReaderStopped(ReadRefused):
    """A read refused because its reader timed out or broke: the reader was stopped."""


def _renamed(value: Any, seen: str, own: str) -> Any:
    """``value`` (a reader's JSON answer) with the path a spare saw a file under replaced by the file's own."""
    if isinstance(value, str):
        return value.replace(seen, own)
    if isinstance(value, list):
        return [_renamed(v, seen, own) for v in value]
    if isinstance(value, dict):
        return {k: _renamed(v, seen, own) for k, v in value.items()}
    return value


def _spare_prefix() -> str:
    """A spare folder's name begins with its server's process and machine (``<pid>@<host>-``)."""
    return f"{os.getpid()}@{socket.gethostname()}-"


def _remove_dead_spare_folders(root: Path) -> None:
    """Spare folders left by a server of this machine that ended without closing its pool: they may hold a link
    to a user's file.  Another machine's (a data folder shared by nodes) are left to that machine."""
    host = socket.gethostname()
    with contextlib.suppress(OSError):
        for entry in os.scandir(root):
            pid, at, rest = entry.name.partition("@")
            if at and rest.rsplit("-", 1)[0] != host:
                continue
            alive = bool(at) and pid.isdigit() and (int(pid) == os.getpid() or process_alive(int(pid)))
            if not alive:
                shutil.rmtree(entry.path, ignore_errors=True)
