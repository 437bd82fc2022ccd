"""The ``wasdi`` script and ``python -m wasdi_cli``: says which extra to install when the CLI's libraries are
missing, then runs the CLI with Ctrl-C heard however it was started."""

from __future__ import annotations

import importlib.util
import signal
import sys
import threading

NEEDED = ("typer", "rich", "tomli_w")


def hear_interrupts() -> None:
    """Ctrl-C (SIGINT) ends a wait with exit 130 however ``wasdi`` was started.  A script's background job
    (``wasdi ... --wait &``) inherits SIGINT ignored, and Python then leaves it ignored: set the handler Python
    sets for an interactive start."""
    if threading.current_thread() is not threading.main_thread():
        return  # called in a test's thread: signals are the main thread's
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> int:
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        print(f"wasdi needs the cli extra ({', '.join(missing)} missing): pip install 'wasdi-toolkit[cli]'",
              file=sys.stderr)
        return 1
    hear_interrupts()
    from .main import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
