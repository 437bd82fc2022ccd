"""Search and import through the server against a real STAC API, in one run, with the figures of a user of the field
asking the same API directly as the baseline.

Starts the tests' real STAC server (stac-fastapi-pgstac over pgstac on this machine's PostgreSQL with PostGIS,
``tests/stac_server.py``) holding ``--items`` Sentinel-2 items, its asset server with one big asset of ``--size``
bytes, and ``python -m wasdi_server serve`` whose ``stac`` provider is that API.  Then:

1. a search page of 100 items: ``GET /search/query`` through our server ÷ pystac-client's ``search`` of the same
   page asked of the STAC API directly (median of ``--rounds``; target <= 1.3x);
2. a count: ``/search/query/count`` ÷ pystac-client counting the items of the same search (pgstac sends no
   ``numberMatched``, so both walk the pages; target <= 1.3x);
3. ``/search/querylist`` of 1,000 items ÷ pystac-client's ``items()`` of the same 1,000;
4. an import of the big asset (``/filebuffer/download``, waited for; the asset served by ``python -m http.server``
   in a process of its own) ÷ ``curl -o`` of the same URL followed by an
   ``fsync`` of the file (the server makes an import durable before it says DONE), as MB/s (target >= 0.8x), into a
   workspace in use (a small import into it first: the server's first import loads what later ones reuse, and a
   workspace's first read starts its reader), then into a new workspace (a spare reader reads it), and
   the server's peak resident memory during the import (``VmHWM``, reset before it), and where the import's time
   went: the phases the server's log line of the import names (``launcher/phases.py``: pick-up from the queue,
   connect, receive, write, checksum, fsync, place, the ingestion read in a boxed reader, the records), the
   operation's other work, and the time outside the operation (the request, the DONE status, this script's polls
   every 20 ms).

Bounded: every call has a timeout.  Figures, not a test: exits 0 unless ``--check`` is given and a target is missed.

    python bench/search.py [--items 1200] [--size 200M] [--rounds 15] [--import-only] [--check]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "src"), str(ROOT), str(ROOT / "bench")]

from transfer import PASSWORD, USER, free_port, parse_size, reset_hwm, start_server, stop, vm_hwm  # noqa: E402

from wasdi_server.launcher.phases import parse_phases  # noqa: E402

QUERY = ('( footprint:"intersects(POLYGON(( 6.0 44.0,6.0 47.0,9.5 47.0,9.5 44.0,6.0 44.0)))") AND '
         "( platformname:Sentinel-2 ) AND ( beginPosition:[2024-01-01T00:00:00.000Z TO 2025-12-31T23:59:59.999Z]"
         "AND endPosition:[2024-01-01T00:00:00.000Z TO 2025-12-31T23:59:59.999Z]) ")
BBOX = [6.0, 44.0, 9.5, 47.0]
DATETIME = "2024-01-01T00:00:00Z/2025-12-31T23:59:59Z"
PAGE = 100
LIST = 1000
MB = 1_000_000


def median_seconds(action, rounds: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def wait_for_url(url: str) -> None:
    """Until ``url`` answers (a server just started)."""
    import httpx

    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.head(url, timeout=2)
            return
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise SystemExit(f"{url} did not answer") from None
            time.sleep(0.05)


def wait_for_import(http, url: str, workspace: str) -> tuple[str, float]:  # type: ignore[no-untyped-def]
    """``/filebuffer/download`` of ``url`` into ``workspace``, waited for: its final status and the seconds it took
    (the status asked every 20 ms)."""
    started = time.perf_counter()
    pid = http.post("/filebuffer/download", json={"fileUrl": url, "workspace": workspace}).json()["stringValue"]
    while True:
        status = http.get("/process/getstatusbyid", params={"procws": pid}).text.strip('"')
        if status in ("DONE", "ERROR", "STOPPED"):
            return status, time.perf_counter() - started
        if time.perf_counter() - started > 300:
            raise SystemExit("the import did not end in 300 s")
        time.sleep(0.02)


def print_phases(log: Path, file_name: str, seconds: float) -> None:
    """The phases of the import of ``file_name`` from the server's log line, and what they leave of ``seconds``:
    the operation's other work, and the time outside it (the request, the DONE status, this script's polls)."""
    lines = [line for line in log.read_text(errors="replace").splitlines() if f"import of {file_name}," in line]
    phases = parse_phases(lines[-1]) if lines else {}
    total = re.search(r"bytes: ([0-9.]+) s; ", lines[-1]) if lines else None
    if not phases or total is None:
        print("    (the server logged no phases of the import)")
        return
    operation = float(total.group(1))
    phases["other work in the operation"] = max(0.0, operation - sum(v for k, v in phases.items() if k != "pick-up"))
    phases["outside the operation"] = max(0.0, seconds - operation - phases.get("pick-up", 0.0))
    print("    where its time went: " + ", ".join(
        f"{name} {value * 1000:.0f} ms" for name, value in phases.items()), flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=1200)
    parser.add_argument("--size", default="200M")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--import-only", action="store_true", help="only the import figure (4.)")
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()

    import httpx
    from pystac_client import Client
    from tests.stac_server import running_stac

    size = parse_size(args.size)
    work = Path(tempfile.mkdtemp(prefix="wasdi-bench-search-"))
    misses: list[str] = []
    server = file_server = None
    try:
        with running_stac(work, s2_count=args.items, s1_count=0) as stac:
            big = work / "big" / "S2A_BIG_ASSET.tif"
            big.parent.mkdir()
            block = os.urandom(1 << 20)
            with open(big, "wb") as out:
                for _ in range(size // len(block)):
                    out.write(block)
                out.write(block[: size % len(block)])
            # served by a process of its own (Python's file server), for curl and for the server alike: the test
            # asset server runs in this process, whose polls during the import would slow its sending
            big_port = free_port()
            file_server = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory",
                                            str(big.parent), str(big_port)], stdout=subprocess.DEVNULL,
                                           stderr=subprocess.DEVNULL)
            big_url = f"http://127.0.0.1:{big_port}/S2A_BIG_ASSET.tif"
            wait_for_url(big_url)

            config = work / "server.toml"
            config.write_text(f'import_allowed_hosts = ["127.0.0.1"]\nimport_timeout_seconds = 120\n'
                              f'[[search_providers]]\ncode = "EARTH"\ntype = "stac"\nurl = "{stac.url}"\n'
                              f'[search_catalogues]\n"Sentinel-2" = ["EARTH"]\n')
            server, base = start_server(work / "data", work / "server.log", "--config", str(config))
            print(f"STAC API {stac.url} with {args.items} items; our server {base}; load average "
                  f"{os.getloadavg()[0]:.1f}", flush=True)
            with httpx.Client(base_url=base, timeout=120) as http:
                login = http.post("/auth/login", json={"userId": USER, "userPassword": PASSWORD}).json()
                http.headers["x-session-token"] = login["sessionId"]
                direct = Client.open(stac.url)

                def ours_page() -> None:
                    found = http.get("/search/query", params={"query": QUERY, "offset": 0, "limit": PAGE}).json()
                    assert len(found) == PAGE, len(found)

                def direct_page() -> None:
                    found = direct.search(collections=["sentinel-2-l2a"], bbox=BBOX, datetime=DATETIME, limit=PAGE,
                                          max_items=PAGE).item_collection()
                    assert len(found) == PAGE

                def ours_count() -> None:
                    assert http.get("/search/query/count", params={"query": QUERY}).json() == args.items

                def direct_count() -> None:
                    found = direct.search(collections=["sentinel-2-l2a"], bbox=BBOX, datetime=DATETIME, limit=1000)
                    assert sum(1 for _ in found.items()) == args.items

                def ours_list() -> None:
                    found = http.post("/search/querylist", json=[QUERY]).json()
                    assert len(found) == args.items

                def direct_list() -> None:
                    found = direct.search(collections=["sentinel-2-l2a"], bbox=BBOX, datetime=DATETIME, limit=1000,
                                          max_items=args.items)
                    assert sum(1 for _ in found.items()) == args.items

                searches = () if args.import_only else (
                    (f"a page of {PAGE}", ours_page, direct_page, 1.3),
                    (f"a count of {args.items}", ours_count, direct_count, 1.3),
                    (f"querylist of {args.items}", ours_list, direct_list, None))
                for label, ours, theirs, target in searches:
                    ours(), theirs()  # warm both
                    mine = median_seconds(ours, args.rounds)
                    baseline = median_seconds(theirs, args.rounds)
                    ratio = mine / baseline
                    note = f" (target <= {target}x)" if target else ""
                    print(f"  {label:<22} ours {mine * 1000:8.1f} ms   pystac-client {baseline * 1000:8.1f} ms   "
                          f"{ratio:5.2f}x{note}", flush=True)
                    if target and ratio > target:
                        misses.append(label)

                # the import ÷ curl
                curl = shutil.which("curl")
                os.sync()
                started = time.perf_counter()
                if curl:
                    subprocess.run([curl, "-s", "-o", str(work / "curl.tif"), big_url], check=True, timeout=300)
                else:
                    with httpx.stream("GET", big_url, timeout=120) as r, open(work / "curl.tif", "wb") as out:
                        for chunk in r.iter_bytes(1 << 20):
                            out.write(chunk)
                with open(work / "curl.tif", "rb") as copy:
                    os.fsync(copy.fileno())
                curl_seconds = time.perf_counter() - started
                # the server's first import loads what every later one reuses (its TLS context, its modules), and
                # a workspace's first read starts its reader: a small import first, into the workspace of the figure
                ws = http.get("/ws/create", params={"name": "bench"}).json()["stringValue"]
                small = stac.s2_items[0]["assets"]["visual"]["href"]
                assert wait_for_import(http, small, ws)[0] == "DONE"
                for label, workspace in (("into a workspace in use", ws),
                                         ("into a new workspace", http.get("/ws/create", params={"name": "new"}).json()
                                          ["stringValue"])):
                    reset_hwm(server.pid)
                    before = vm_hwm(server.pid)
                    os.sync()
                    status, import_seconds = wait_for_import(http, big_url, workspace)
                    assert status == "DONE", status
                    stored = work / "data" / "files" / USER / workspace / "S2A_BIG_ASSET.tif"
                    assert stored.stat().st_size == size
                    ratio = (size / import_seconds) / (size / curl_seconds)
                    print(f"  import of {size / MB:.0f} MB {label}: ours {size / MB / import_seconds:.1f} MB/s, "
                          f"curl+fsync {size / MB / curl_seconds:.1f} MB/s, {ratio:.2f}x (target >= 0.8x)", flush=True)
                    print(f"    server memory during the import: peak {vm_hwm(server.pid) / 2**20:.0f} MiB "
                          f"(before it {before / 2**20:.0f} MiB)", flush=True)
                    print_phases(work / "server.log", "S2A_BIG_ASSET.tif", import_seconds)
                    if ratio < 0.8 and workspace == ws:
                        misses.append("import")
    finally:
        stop(server)
        stop(file_server)
        shutil.rmtree(work, ignore_errors=True)
    if misses:
        print("missed: " + ", ".join(misses))
    return 1 if args.check and misses else 0


if __name__ == "__main__":
    raise SystemExit(main())
