"""The store's read-only reader gives what opening the store gives, while a store holds the data directory."""

from __future__ import annotations

from pathlib import Path

from wasdi_server.store.tinydb_store import TinyDBStore, read_documents


def test_read_documents_sees_snapshots_and_journal_without_the_lock(tmp_path: Path) -> None:
    store = TinyDBStore(tmp_path, compact_bytes=1)  # every commit may compact: snapshots and journal both used
    try:
        users = store.declare("users", "userId")
        for number in range(20):
            users.insert({"userId": f"u{number}", "n": number})
        users.delete("u3")
        users.update("u4", {"n": 40})
        seen = read_documents(tmp_path)  # the store still holds the lock
        by_key = {doc["userId"]: doc for doc in seen["users"].values()}
        assert by_key == {doc["userId"]: doc for doc in users.all()}
        assert "u3" not in by_key and by_key["u4"]["n"] == 40
    finally:
        store.close()
    assert read_documents(tmp_path / "nowhere") == {}
