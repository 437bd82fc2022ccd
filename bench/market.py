"""What the app store costs per request, against GET /wasdi/hello on the same in-process server in the same run.

Builds a fresh server (temporary data directory) with ``--apps`` store apps of 20 publishers, a review on
every third one and a sharing on every fifth, then times, in-process (falcon's test client, no socket):
GET /wasdi/hello (baseline), GET /processors/getdeployed, POST /processors/getmarketlist (first page, sorted by
score), GET /processors/getmarketdetail and GET /processormedia/publisher/getlist.  Rounds are interleaved and
medians reported as ratios to the baseline.

    python bench/market.py [--apps 1000] [--rounds 15]

Figures, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from falcon import testing

from wasdi_server import create_app, load_settings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--apps", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(load_settings(data_dir=Path(tmp), environ={}))
        services = app.services
        try:
            services.users.add("buyer@example.org", "bench-password-1", name="Buyer")
            publishers = [f"pub{i}@example.org" for i in range(20)]
            for uid in publishers:
                services.users.add(uid, "bench-password-1", name=uid.split("@")[0])
            processors = services.store.collection("processors")
            reviews = services.store.collection("reviews")
            sharings = services.store.collection("sharings")
            with processors.transaction():
                for i in range(args.apps):
                    pid = str(uuid.uuid4())
                    processors.insert({"processorId": pid, "name": f"app{i:05d}", "userId": publishers[i % 20],
                                       "isPublic": 1 if i % 5 else 0, "showInStore": True, "version": "1",
                                       "categories": ["marine" if i % 2 else "urban"], "ondemandPrice": float(i % 7),
                                       "uploadDate": float(i), "lastUpdate": float(i), "placeholderIndex": 1})
                    if i % 3 == 0:
                        reviews.insert({"reviewId": str(uuid.uuid4()), "processorId": pid,
                                        "userId": "buyer@example.org", "vote": float(i % 6), "date": float(i)})
                    if i % 5 == 0:
                        sharings.insert({"sharingId": f"processor|{pid}|buyer@example.org", "resourceType": "processor",
                                         "resourceId": pid, "userId": "buyer@example.org",
                                         "ownerId": publishers[i % 20], "permissions": "read"})
            token = services.sessions.open("buyer@example.org")
            client = testing.TestClient(app)
            headers = {"x-session-token": token}
            calls: dict[str, Callable[[], object]] = {
                "hello (baseline)": lambda: client.simulate_get("/wasdi/hello"),
                "getdeployed": lambda: client.simulate_get("/processors/getdeployed", headers=headers),
                "getmarketlist": lambda: client.simulate_post(
                    "/processors/getmarketlist", headers=headers,
                    json={"orderBy": "score", "orderDirection": -1, "itemsPerPage": 12}),
                "getmarketdetail": lambda: client.simulate_get("/processors/getmarketdetail", headers=headers,
                                                               params={"processorname": "app00001"}),
                "publisher/getlist": lambda: client.simulate_get("/processormedia/publisher/getlist",
                                                                 headers=headers),
            }
            times: dict[str, list[float]] = {name: [] for name in calls}
            for call in calls.values():
                call()
            for _ in range(args.rounds):
                for name, call in calls.items():
                    start = time.perf_counter()
                    result = call()
                    times[name].append(time.perf_counter() - start)
                    assert getattr(result, "status_code", 200) == 200, name
            base = statistics.median(times["hello (baseline)"])
            print(f"{args.apps} store apps, {args.rounds} rounds, in-process; median per request:")
            for name, values in times.items():
                median = statistics.median(values)
                print(f"  {name:20s} {median * 1000:8.2f} ms   {median / base:8.1f} x hello")
        finally:
            services.close()


if __name__ == "__main__":
    main()
