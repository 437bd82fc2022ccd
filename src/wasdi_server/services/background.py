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
