"""Small jobs done after the request that asked for them has been answered."""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger("wasdi_server.background")


class BackgroundJobs:
    """One worker thread doing small jobs after the request that asked for them has been answered: work whose
    duration must not show in the answer's time (a lost-password mail to an existing account and not to an
    unknown one).  Jobs run one at a time, in order; a failing job is logged.  ``drain`` waits for the jobs
    queued so far; ``close`` for all of them, then stops the thread."""

    def __init__(self, name: str, max_queued: int = 10_000) -> None:
        self.name = name
        self._jobs: queue.Queue[Callable[[], None] | None] = queue.Queue(max_queued)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        """Queue ``job`` (the thread starts with the first one); when the queue is full the caller waits."""
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self.name, daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def drain(self) -> None:
        """Wait until every job queued so far is done."""
        self._jobs.join()

    def close(self) -> None:
        """Finish the queued jobs and stop the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None and thread.is_alive():
            self._jobs.put(None)
            thread.join()

    def _work(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                if job is None:
                    return
                job()
            except Exception:
                log.exception("a background job failed")
            finally:
                self._jobs.task_done()


class Periodic:
    """``step`` called in a daemon thread every ``interval`` seconds (at once after ``wake``) until ``stop``; a
    failing step is logged with ``failure`` and the next one runs as planned.  A non-positive interval: never."""

    def __init__(self, name: str, step: Callable[[], object], interval: float, failure: str) -> None:
        self.name = name
        self.step = step
        self.interval = interval
        self.failure = failure
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def started(self) -> bool:
        return self._thread is not None

    @property
    def stopping(self) -> bool:
        """Whether ``stop`` was called: a long step checks it to end early."""
        return self._stop.is_set()

    def start(self) -> None:
        if self._thread is not None or self.interval <= 0:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Run the next step now rather than at the end of the interval."""
        self._wake.set()

    def stop(self, timeout: float = 10.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        self._thread = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except Exception:
                log.exception(self.failure)
            self._wake.wait(self.interval)
            self._wake.clear()
