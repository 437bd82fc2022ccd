"""A map drawing process (``python -m wasdi_server.providers.wms.draw_worker``), started by ``draw_pool``.

Reads ``DrawJob``s from standard input and answers each with ``("ok", png)`` or ``("error", message)`` on
what was standard output (anything a library prints goes to standard error instead), after a first
``("ready", pid)`` once its imports are done; ends when its input closes, so it never outlives the
server.  It runs at a lower priority than the server, and GDAL's block cache is kept small: a draw's memory
is its image and one band of rows (``render.draw_map``).
"""

from __future__ import annotations

import os
import sys
import traceback
from multiprocessing.connection import Connection

GDAL_CACHE_MB = "128"
NICENESS = 10
"""Drawing yields the processor to the server's own threads: a busy map server never slows its API."""


def main() -> int:
    results = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # stray prints must not break the answers
    jobs = Connection(0, writable=False)
    os.environ.setdefault("GDAL_CACHEMAX", GDAL_CACHE_MB)
    os.environ.setdefault("CPL_LOG", os.devnull)
    os.nice(NICENESS)
    from wasdi_server.providers.wms import render  # after the environment is set, which GDAL reads

    results.send(("ready", os.getpid()))
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return 0
        answer: tuple[str, bytes | str]  # ("ok", the PNG) or ("error", what to tell the client)
        try:
            answer = ("ok", render.draw_map(job.layers, job.crs, job.bbox, job.width, job.height, job.background))
        except Exception as e:  # the layer's files, GDAL: the server answers the request, this goes on
            traceback.print_exc(file=sys.stderr)
            answer = ("error", f"the map could not be drawn ({type(e).__name__})")
        results.send(answer)


if __name__ == "__main__":
    raise SystemExit(main())
