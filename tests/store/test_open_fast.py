"""Opening reads back what the store wrote, in id order, and builds its indexes whole."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from wasdi_server.store import open_store


@pytest.mark.parametrize("engine", ["tinydb", "sqlite"])
def test_odd_json_values_and_list_values_reopen_indexed(tmp_path: Path, engine: str) -> None:
    odd = {"id": "a", "nan": math.nan, "big": 2**70, "ws": "w1"}
    with open_store(tmp_path, engine) as s:
        s.declare("jobs", "id", ("ws",)).insert(odd)
        s.declare("jobs", "id").insert({"id": "b", "ws": "w1", "tags": ["x"]})
    with open_store(tmp_path, engine) as s:
        jobs = s.declare("jobs", "id", ("ws", "tags"))
        a = jobs.get("a")
        assert a is not None and math.isnan(a["nan"]) and a["big"] == 2**70
        assert [d["id"] for d in jobs.find(ws="w1")] == ["a", "b"]
        assert [d["id"] for d in jobs.find(tags=["x"])] == ["b"]  # a list value, indexed by its JSON


def test_a_snapshot_out_of_id_order_opens_in_id_order(tmp_path: Path) -> None:
    with open_store(tmp_path, "tinydb") as s:
        s.declare("jobs", "id")
    # written by hand (or by an older version): the store writes snapshots in id order and skips the sort
    (tmp_path / "db" / "jobs.json").write_text('{"jobs": {"3": {"id": "c"}, "1": {"id": "a"}}}')
    with open_store(tmp_path, "tinydb") as s:
        jobs = s.declare("jobs", "id")
        assert [d["id"] for d in jobs.all()] == ["a", "c"]
        jobs.insert({"id": "d"})  # ids continue after the largest
    with open_store(tmp_path, "tinydb") as s:
        assert [d["id"] for d in s.declare("jobs", "id").all()] == ["a", "c", "d"]
