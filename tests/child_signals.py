"""Children that a test signals start with that signal's default disposition.

A shell script runs a background job (``make test &``) with SIGINT and SIGQUIT ignored, and an ignored
disposition is inherited across ``exec``; Python then keeps SIGINT ignored (it installs its KeyboardInterrupt
handler only over the default).  ``wasdi-server serve`` and ``wasdi`` set their SIGINT handlers themselves
(``tests/e2e/test_serve_start.py`` and ``tests/e2e/test_cli_interrupt.py`` start them with SIGINT ignored); the
other tests that send a child SIGINT, or type Ctrl-C at it, reset the child's disposition first
(``default_dispositions`` as the child's first step), so what they test does not hang on how the suite started.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager

SIGNALS_TESTS_SEND = (signal.SIGINT, signal.SIGTERM, signal.SIGQUIT)


def default_dispositions() -> None:
    """In a child, before it runs its program (``preexec_fn``, or after ``fork``): each signal the tests send
    has its default disposition again."""
    for number in SIGNALS_TESTS_SEND:
        signal.signal(number, signal.SIG_DFL)


@contextmanager
def started_as_a_background_job() -> Iterator[None]:
    """This process ignores SIGINT and SIGQUIT, as a script's background job does, for what starts inside."""
    before = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGQUIT)}
    try:
        for number in before:
            signal.signal(number, signal.SIG_IGN)
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
