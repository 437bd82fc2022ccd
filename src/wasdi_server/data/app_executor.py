"""One-shot executor of a WASDI Python app, run by the app's own interpreter in the app's folder.

It puts the official library in server mode with the run's ``WASDI_*`` variables, loads the parameters
file, calls ``myProcessor.run()``, and makes sure the run ends: when ``run()`` returns and the app left its
process RUNNING the status becomes DONE; when ``run()`` raised, it exits 1 and the server writes ERROR once the
run has ended (and all it printed is in the log).  Everything the app prints, and any traceback, goes to
stdout/stderr, which the server copies to the run log line by line.

This file is package data of the server, not part of its import graph: it imports only the standard
library and ``wasdi``.
"""

import contextlib
import errno
import importlib
import io
import os
import stat
import sys
import time
import traceback
from types import ModuleType

UP = time.monotonic()
"""When this interpreter was up, with its first modules (a traced run's first mark of the app: see ``mark``)."""

FINAL = {"DONE", "ERROR", "STOPPED"}
POLLING_SECONDS = 0.5
LIMITS = {
    errno.EFBIG: "the app passed the limit on the size of a file written (app_max_file_mb)",
    errno.EMFILE: "the app passed the limit on open files (app_max_open_files)",
    errno.EAGAIN: "the app could not start a process or thread: it passed the limit on processes and threads "
                  "(app_max_processes)",
}
"""What a failure caused by a limit of the server's box says (the server names the limits it sees itself)."""


def _marks_pipe() -> int | None:
    """The box's marks descriptor of a traced run (``WASDI_BOX_MARKS_FD``; absent for every other run), checked
    now, before this process opens anything that could take its number."""
    try:
        fd = int(os.environ.get("WASDI_BOX_MARKS_FD") or "")
        return fd if stat.S_ISFIFO(os.fstat(fd).st_mode) else None
    except (OSError, ValueError):
        return None


MARKS = _marks_pipe()


def mark(name: str, when: float | None = None) -> None:
    """Note, for a traced run (the box's launch bench), that the app reached ``name``: a line on the box's marks
    descriptor (nothing for a run not traced)."""
    if MARKS is not None:
        with contextlib.suppress(OSError):
            os.write(MARKS, f"{name}\t{time.monotonic() if when is None else when!r}\n".encode())


def limit_passed(error: BaseException) -> str | None:
    """The sentence naming the box limit behind ``error``, if one is."""
    seen = 0
    current: BaseException | None = error
    while current is not None and seen < 20:
        if isinstance(current, MemoryError):
            return "the app ran out of memory: it passed the memory limit of its run (app_memory_mb)"
        if isinstance(current, OSError) and current.errno in LIMITS:
            return LIMITS[current.errno]
        current = current.__cause__ or current.__context__
        seen += 1
    return None


def _start_library() -> ModuleType:
    # the official library ships no types: as a module, its functions are what the library says they are
    wasdi = importlib.import_module("wasdi")
    mark("library imported")

    wasdi.setIsOnServer(True)
    # The library's own tracing ("[INFO] waspy.updateProgressPerc( 50 )") is not the app's output: the run
    # log keeps what the app prints and logs.
    wasdi.setVerbose(False)
    # The library polls its server (imports, children, resumes) every 3 s by default; this server is
    # local to the app, so a shorter wait costs little and makes apps finish sooner.
    wasdi.setPollingSleepSeconds(POLLING_SECONDS)
    wasdi.setDownloadActive(False)
    wasdi.setUploadActive(False)
    wasdi.setBaseUrl(os.environ["WASDI_WEBSERVER_URL"].rstrip("/"))
    wasdi.setUser(os.environ["WASDI_USER"])
    wasdi.setSessionId(os.environ["WASDI_SESSION_ID"])
    wasdi.setProcId(os.environ["WASDI_PROCESS_WORKSPACE_ID"])
    wasdi.setBasePath(os.path.join(os.environ["WASDI_BASE_PATH"], ""))
    # init() prints its settings (the session among them): keep them out of the run log unless it fails.
    chatter = io.StringIO()
    with contextlib.redirect_stdout(chatter):
        ready = wasdi.init()
    if not ready:
        session = os.environ["WASDI_SESSION_ID"]
        print(chatter.getvalue().replace(session, "***"), file=sys.stderr)
        raise RuntimeError("the wasdi library could not start (session or workspace refused)")
    parameters = os.environ.get("WASDI_PARAMETERS_FILE", "")
    if parameters:
        wasdi.setParametersFilePath(parameters)
        wasdi.refreshParameters()
    return wasdi


def main() -> int:
    mark("app interpreter up", UP)
    sys.path.insert(0, os.getcwd())
    try:
        wasdi = _start_library()
    except Exception:
        traceback.print_exc()
        return 2
    mark("library ready")
    outcome = "DONE"
    try:
        app = importlib.import_module("myProcessor")
        app.run()
    except SystemExit as e:
        if e.code not in (None, 0):
            print(f"the app exited with code {e.code}", file=sys.stderr)
            outcome = "ERROR"
    except BaseException as e:
        traceback.print_exc()
        limit = limit_passed(e)
        if limit:
            print(limit, file=sys.stderr)
        outcome = "ERROR"
    sys.stdout.flush()
    sys.stderr.flush()
    mark("app returned")
    # A failed run's ERROR is the server's to write, once the run has ended and all it printed (the traceback's
    # last line names the error) is in the log: written from here, it could be read before the log was whole.
    if outcome == "DONE":
        try:
            status = wasdi.getProcessStatus(wasdi.getProcId())
            if status not in FINAL:
                wasdi.updateStatus(outcome, 100)
            else:
                outcome = status
        except Exception:
            traceback.print_exc()
    mark("status written")
    return 0 if outcome == "DONE" else 1


if __name__ == "__main__":
    sys.exit(main())
