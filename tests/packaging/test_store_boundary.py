"""Nothing outside the store reads the store's files (issue 22, item 14): benches, tools, examples and test helpers
go through the API or the store's interface (``wasdi_server.store.tinydb_store.read_documents`` for a look without
the lock).  The files that name ``<data_dir>/db`` for another reason say why here; a new one fails until it does."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE_PATH = re.compile(r"""["']db["']|["']db/|/db/[\w*.-]+\.json""")
NOT_READING: dict[str, str] = {
    "bench/store_scale.py": "sums the sizes of the store's files (the disk it takes), never reads them",
    "tests/server/test_auth.py": "checks that no password is in the store's bytes on disk, wherever it stands",
    "tests/server/test_workflows.py": "names a store file as a target a workflow run must not reach",
    "tests/server/test_box.py": "names a store file as a target a boxed run must not reach",
    "tests/e2e/test_box_e2e.py": "names a store file as a target a boxed app must not reach",
    "tests/e2e/test_server_durability.py": "the store's own crash test: what a killed writer leaves in its folder",
}


def test_only_the_store_reads_its_files() -> None:
    places = [p for folder in ("bench", "tools", "examples", "tests") for p in (ROOT / folder).rglob("*.py")
              if "tests/store/" not in p.as_posix() and p != Path(__file__)]
    readers = sorted(p.relative_to(ROOT).as_posix() for p in places if STORE_PATH.search(p.read_text("utf-8")))
    unexplained = [p for p in readers if p not in NOT_READING]
    assert unexplained == [], f"these read <data_dir>/db themselves (use the API or the store's interface): " \
        f"{unexplained}"
    assert sorted(NOT_READING) == readers, "an entry of NOT_READING no longer names the store's files: remove it"


def test_the_launch_bench_asks_the_api_for_the_app() -> None:
    text = (ROOT / "bench" / "launch.py").read_text("utf-8")
    assert "/processors/getprocessor" in text and not STORE_PATH.search(text)
