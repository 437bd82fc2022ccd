"""Map drawing in worker processes, each draw with a deadline, so that no request for a map can slow the others.

Drawing (GDAL's warper, numpy) runs in ``workers`` processes of its own (``draw_worker``), started when the
first map is asked for and kept: the server's threads only send a job and wait for the PNG, so a draw
neither holds the server's interpreter lock nor its memory.  At most ``admitted`` draws run or wait (for at
most ``seconds``) at once: twice ``workers``, and less than half the server's threads; a request beyond
that is refused at once (busy), so map requests can never occupy every thread of the server.  A draw not
done ``seconds`` after it started is refused and its process killed (a thread stuck in GDAL cannot be
stopped; a process can), and a new process takes its place at the next draw.  The processes run at a lower
priority than the server (``draw_worker``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import subprocess
import sys
import threading
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

log = logging.getLogger(__name__)
WORKER_MODULE = "wasdi_server.providers.wms.draw_worker"
STARTUP_SECONDS = 60.0


class DrawRefused(Exception):
    """A draw that was not done: the server is busy drawing, the deadline passed, or the draw failed."""

    def __init__(self, message: str, busy: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.busy = busy
        """Busy or out of time (try again later, or ask for less), not a fault of the layer."""


@dataclass(frozen=True)
class DrawJob:
    """What a worker draws: ``render.draw_map``'s arguments (layers as ``(render.Layer, RasterStyle)``)."""

    layers: tuple[tuple[Any, Any], ...]
    crs: str
    bbox: tuple[float, float, float, float]
    width: int
    height: int
    background: tuple[int, int, int] | None = None


class _Worker:
    """One drawing process and the two pipes to it."""

    def __init__(self) -> None:
        self.process = subprocess.Popen([sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, close_fds=True)
        assert self.process.stdin is not None and self.process.stdout is not None
        self.jobs = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self.results = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()
        # A draw's deadline starts when drawing can: not while the process imports GDAL and numpy.
        if not self.results.poll(STARTUP_SECONDS) or self.results.recv()[0] != "ready":
            self.kill()
            raise OSError("the map drawing process did not start")

    def run(self, job: DrawJob, seconds: float) -> bytes:
        """The PNG; ``TimeoutError`` after ``seconds``, ``EOFError`` or ``OSError`` if the process died."""
        self.jobs.send(job)
        if not self.results.poll(max(0.0, seconds)):
            raise TimeoutError
        status, value = self.results.recv()
        if status != "ok":
            raise DrawRefused(str(value))
        return bytes(value)

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(OSError, subprocess.TimeoutExpired):
            self.process.wait(5)
        for connection in (self.jobs, self.results):
            with contextlib.suppress(OSError):
                connection.close()


class DrawPool:
    """``workers`` drawing processes; ``draw`` sends a job to an idle one and waits at most ``seconds``."""

    def __init__(self, workers: int = 2, seconds: float = 30.0, admitted: int | None = None) -> None:
        self.workers = max(1, workers)
        self.seconds = seconds
        self.admitted = max(1, admitted if admitted is not None else 2 * self.workers)
        """Draws running or waiting at once (fewer than the server's threads, so others always get one)."""
        self._idle: queue.LifoQueue[_Worker | None] = queue.LifoQueue()
        for _ in range(self.workers):
            self._idle.put(None)  # a slot whose process starts with the first draw it takes
        self._admitted = threading.BoundedSemaphore(self.admitted)
        self._started: set[_Worker] = set()
        self._lock = threading.Lock()
        self._closed = False

    def draw(self, job: DrawJob) -> bytes:
        """The PNG of ``job``; ``DrawRefused`` when busy, out of time or failed."""
        if self._closed:
            raise DrawRefused("the map server is stopping", busy=True)
        if not self._admitted.acquire(blocking=False):
            raise DrawRefused("the map server is busy drawing other maps: try again in a moment", busy=True)
        try:
            try:
                worker = self._idle.get(timeout=self.seconds)
            except queue.Empty:
                raise DrawRefused("the map server is busy drawing other maps: try again in a moment",
                                  busy=True) from None
            try:
                if worker is None:
                    worker = self._start()
                png = worker.run(job, self.seconds)
            except TimeoutError:
                self._discard(worker)
                worker = None
                raise DrawRefused(f"the map took longer than {self.seconds:g} seconds to draw: ask for a "
                                  "smaller map or fewer layers", busy=True) from None
            except (EOFError, OSError) as e:
                self._discard(worker)
                worker = None
                log.warning("a map drawing process ended unexpectedly: %s", e)
                raise DrawRefused("the map could not be drawn") from e
            finally:
                self._idle.put(worker)
            return png
        finally:
            self._admitted.release()

    def _start(self) -> _Worker:
        worker = _Worker()
        with self._lock:
            self._started.add(worker)
            closed = self._closed
        if closed:
            self._discard(worker)
            raise DrawRefused("the map server is stopping", busy=True)
        return worker

    def _discard(self, worker: _Worker | None) -> None:
        if worker is None:
            return
        with self._lock:
            self._started.discard(worker)
        worker.kill()

    def close(self) -> None:
        """Stop every drawing process (a draw in progress is refused)."""
        with self._lock:
            self._closed = True
            workers = list(self._started)
            self._started.clear()
        for worker in workers:
            worker.kill()

    def process_ids(self) -> list[int]:
        """The drawing processes running now."""
        with self._lock:
            return [w.process.pid for w in self._started]
