"""The default engine is a journaled document store in TinyDB's file format: after a clean shutdown the TinyDB
library (a test dependency only; the server never imports it) opens every collection file of a data directory a
real server life wrote, and finds exactly what the store held."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tinydb import TinyDB

from tests.conftest import Server
from tests.server.user_estate import build_estate


def test_tinydb_opens_every_collection_a_server_wrote(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    server = Server(data_dir)
    held: dict[str, list[dict[str, Any]]] = {}
    try:
        alice = server.add_user("alice@example.org")
        bob = server.add_user("bob@example.org")
        build_estate(server.services, alice.user_id, bob.user_id, "a")
        # non-ASCII text, in a journal line the clean shutdown folds into the files
        server.services.store.collection("users").update(alice.user_id, {"name": "Ålice ✓"})
        held = {c.name: c.all() for c in server.services.store.collections()}
    finally:
        server.close()

    db = data_dir / "db"
    assert not list(db.glob("journal-*.jsonl")), "a clean shutdown folds the journal into the collection files"
    files = sorted(db.glob("*.json"))
    assert {p.stem for p in files} >= {name for name, docs in held.items() if docs}
    assert len([name for name, docs in held.items() if docs]) >= 10
    for path in files:
        with TinyDB(path, access_mode="r") as tiny:
            assert tiny.tables() == {path.stem}, path.name
            read = tiny.table(path.stem).all()
        key = lambda d: json.dumps(d, sort_keys=True)  # noqa: E731
        assert sorted(map(dict, read), key=key) == sorted(held.get(path.stem, []), key=key), path.name
    users = {d["userId"]: d for d in held["users"]}
    assert users["alice@example.org"]["name"] == "Ålice ✓" and "bob@example.org" in users
