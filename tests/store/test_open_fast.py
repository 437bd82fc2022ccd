"""Opening reads what the store wrote, whichever JSON parser it uses, and builds its indexes whole."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from wasdi_server.store import fastjson, open_store


@pytest.mark.parametrize("engine", ["tinydb", "sqlite"])
def test_what_only_the_standard_library_parses_still_reopens(tmp_path: Path, engine: str) -> None:
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


def test_a_reinserted_id_reopens_in_id_order(tmp_path: Path) -> None:
    with open_store(tmp_path, "tinydb") as s:
        jobs = s.declare("jobs", "id")
        for key in "abc":
            jobs.insert({"id": key})
    with open_store(tmp_path, "tinydb") as s:
        assert [d["id"] for d in s.declare("jobs", "id").all()] == ["a", "b", "c"]


def test_fastjson_refuses_what_is_not_json() -> None:
    assert fastjson.loads(b'{"a": [1, 2.5, null]}') == {"a": [1, 2.5, None]}
    with pytest.raises(ValueError):
        fastjson.loads(b'{"a": ')
