"""What a workflow run costs beyond gpt itself: /workflows/run to DONE, against gpt run directly.

Usage: ``PYTHONPATH=src python bench/workflow_run.py [--runs 15]``

One run, in one process, on a fresh temporary data directory: a stand-in ``gpt`` (a Python script that
reads the graph and copies its input to each Write node's file, as the tests' one does) is put on the
PATH; a user uploads a SNAP graph and a GeoTIFF.  Then, alternating, ``--runs`` times each:

- **direct**: the stand-in gpt run as a subprocess on a graph already written (the floor: Python start-up
  and the copy);
- **workflow**: ``POST /workflows/run`` through the in-process app, waiting (5 ms polls of the record) until
  the GRAPH process is DONE: checks, queueing, the launcher picking it up, the graph written, gpt, the run
  log, and the output read and added as a product.

It prints the median and quartiles of each, and the ratio workflow / direct.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "src")]

from tests.server.snap import STAND_IN_GPT, graph  # noqa: E402

from wasdi_server import create_app, load_settings  # noqa: E402


def make_tif(path: Path) -> Path:
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin

    with rasterio.open(path, "w", driver="GTiff", width=256, height=256, count=1, dtype="float32",
                       crs="EPSG:4326", transform=from_origin(10.0, 41.0, 0.004, 0.004)) as dst:
        dst.write(np.arange(256 * 256, dtype="float32").reshape(256, 256), 1)
    return path


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4)
    return q[0], statistics.median(values), q[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wf-bench-") as tmp:
        base = Path(tmp)
        bin_dir = base / "bin"
        bin_dir.mkdir()
        gpt = bin_dir / "gpt"
        gpt.write_text(STAND_IN_GPT.format(python=sys.executable))
        gpt.chmod(0o755)
        os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"
        app = create_app(load_settings(data_dir=base / "data", environ={}))
        services = app.services
        try:
            services.users.add("bench@example.org", "bench-password-1", name="Bench", surname="User")
            services.subscriptions.create_trial("bench@example.org")
            token = services.sessions.open("bench@example.org")
            user = services.users.active_user("bench@example.org")
            assert user is not None
            ws = services.workspaces.create(user, "bench")["workspaceId"]
            folder = services.workspaces.folder(services.workspaces.load(ws))
            folder.mkdir(parents=True, exist_ok=True)
            make_tif(folder / "in.tif")
            services.products.ingest_file(services.workspaces.load(ws), "in.tif")
            http = httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://bench",
                                headers={"x-session-token": token})
            r = http.post("/workflows/uploadfile", params={"name": "bench"}, files={"file": ("g.xml", graph())})
            r.raise_for_status()
            workflow_id = services.workflows.by_name(user, "bench")["workflowId"]
            direct_graph = base / "direct.xml"
            direct_graph.write_bytes(graph().replace(b"placeholder.tif", str(folder / "in.tif").encode())
                                     .replace(b"out.tif", str(base / "direct-out.tif").encode())
                                     .replace(b"$SCALE", b"2"))
            direct: list[float] = []
            workflow: list[float] = []
            for i in range(args.runs):
                order = ("direct", "workflow") if i % 2 == 0 else ("workflow", "direct")
                for kind in order:
                    start = time.perf_counter()
                    if kind == "direct":
                        subprocess.run([str(gpt), str(direct_graph)], check=True, capture_output=True)
                        direct.append(time.perf_counter() - start)
                        continue
                    body = {"workflowId": workflow_id, "inputFileNames": ["in.tif"],
                            "outputFileNames": [f"out-{i}.tif"], "templateParams": {"$SCALE": "2"}}
                    answer = http.post("/workflows/run", params={"workspace": ws}, json=body).json()
                    pid = answer["stringValue"]
                    while (services.processes.get(pid) or {}).get("status") not in ("DONE", "ERROR", "STOPPED"):
                        time.sleep(0.005)
                    assert services.processes.get(pid)["status"] == "DONE", services.processes.get(pid)
                    workflow.append(time.perf_counter() - start)
            http.close()
        finally:
            services.close()
    print(f"{'':10} {'median ms':>10} {'(p25-p75)':>16}")
    for name, values in (("direct", direct), ("workflow", workflow)):
        low, mid, high = quartiles(values)
        print(f"{name:10} {mid * 1000:10.1f} {f'({low * 1000:.0f}-{high * 1000:.0f})':>16}")
    print(f"ratio workflow / direct: {statistics.median(workflow) / statistics.median(direct):.2f} "
          f"({args.runs} runs each, alternating)")


if __name__ == "__main__":
    main()
