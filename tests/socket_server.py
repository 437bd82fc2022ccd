"""A test server's app served by waitress on a real socket (127.0.0.1, a free port), for clients that speak
HTTP themselves (OWSLib, other processes)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import waitress


@contextmanager
def on_a_socket(app: Any, threads: int = 4, port: int = 0, **options: Any) -> Iterator[str]:
    """The base URL of ``app`` served until the block ends (on ``port``; 0: a free one)."""
    # poll() instead of select(): closing the socket from this thread must not break the loop's wait. The loop
    # notices the close when its wait ends: a 1 s wait (waitress's default) made every test's teardown last 1 s.
    options.setdefault("asyncore_loop_timeout", 0.05)
    httpd = waitress.create_server(app, host="127.0.0.1", port=port, threads=threads, asyncore_use_poll=True,
                                   **options)
    thread = threading.Thread(target=httpd.run, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.effective_port}"
    finally:
        httpd.close()
        thread.join(5)
