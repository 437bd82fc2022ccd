"""A complete journal line that cannot be read is never dropped silently: the start stops naming the file and
the line, and ``wasdi-server store check`` / ``store drop-line`` let the operator see it and, on their word,
drop it (its bytes kept beside the journal).  Only bytes after the last newline are a torn append."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from wasdi_server import cli
from wasdi_server.store import StoreCorruptError, open_store


def crashed_copy(tmp_path: Path) -> tuple[Path, Path, bytes]:
    """A data directory whose journal holds two acknowledged writes (as a crash leaves it), its journal, the bytes."""
    with open_store(tmp_path / "live") as store:
        items = store.declare("items", "id")
        items.insert({"id": "a", "v": 1})
        items.insert({"id": "b", "v": 2})
        shutil.copytree(tmp_path / "live" / "db", tmp_path / "crashed" / "db")
    journal = next((tmp_path / "crashed" / "db").glob("journal-*.jsonl"))
    return tmp_path / "crashed", journal, journal.read_bytes()


def test_a_corrupted_complete_last_line_stops_the_start(tmp_path: Path) -> None:
    data_dir, journal, content = crashed_copy(tmp_path)
    altered = content[:-12] + b"X" * 11 + b"\n"  # the newline was written: the write was acknowledged
    journal.write_bytes(altered)
    with pytest.raises(StoreCorruptError) as info:
        open_store(data_dir)
    message = str(info.value)
    assert str(journal) in message and "line 2" in message and "store drop-line" in message
    assert journal.read_bytes() == altered


def test_only_bytes_after_the_last_newline_are_a_torn_append(tmp_path: Path) -> None:
    data_dir, journal, content = crashed_copy(tmp_path)
    journal.write_bytes(content + b'{"w":[["items",3,{"id":"c"')
    with open_store(data_dir) as store:
        assert [d["id"] for d in store.declare("items", "id").all()] == ["a", "b"]


def test_the_operator_sees_the_line_and_drops_it_on_their_word(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    data_dir, journal, content = crashed_copy(tmp_path)
    first, second = content.split(b"\n")[:2]
    journal.write_bytes(first[:-3] + b"}}}\n" + second + b"\n")
    assert cli.main(["store", "check", "--data-dir", str(data_dir)]) == 1
    out = capsys.readouterr()
    assert f"{journal.name}: 2 lines" in out.out and "line 1:" in out.out and "drop-line" in out.err
    monkeypatch.setattr("sys.stdin", _Answer("n\n"))
    assert cli.main(["store", "drop-line", journal.name, "1", "--data-dir", str(data_dir)]) == 1
    assert journal.read_bytes() == first[:-3] + b"}}}\n" + second + b"\n"  # "no" changes nothing
    assert cli.main(["store", "drop-line", journal.name, "1", "--yes", "--data-dir", str(data_dir)]) == 0
    kept = journal.with_name(f"{journal.name}.line-1.dropped")
    assert kept.read_bytes() == first[:-3] + b"}}}\n" and kept.name in capsys.readouterr().out
    assert cli.main(["store", "check", "--data-dir", str(data_dir)]) == 0
    with open_store(data_dir) as store:
        assert store.declare("items", "id").all() == [{"id": "b", "v": 2}]


def test_the_tool_refuses_beside_a_running_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with open_store(tmp_path) as store:
        store.declare("items", "id").insert({"id": "a"})
        assert cli.main(["store", "check", "--data-dir", str(tmp_path)]) == 1
        assert "in use by another wasdi server" in capsys.readouterr().err
        journal = next((tmp_path / "db").glob("journal-*.jsonl")).name
        assert cli.main(["store", "drop-line", journal, "1", "--yes", "--data-dir", str(tmp_path)]) == 1


def test_dropping_a_line_that_is_not_there_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data_dir, journal, _ = crashed_copy(tmp_path)
    assert cli.main(["store", "drop-line", journal.name, "9", "--yes", "--data-dir", str(data_dir)]) == 1
    assert "has 2 complete lines" in capsys.readouterr().err
    assert cli.main(["store", "drop-line", "../x", "1", "--yes", "--data-dir", str(data_dir)]) == 1


class _Answer:
    def __init__(self, text: str) -> None:
        self.text = text

    def readline(self) -> str:
        text, self.text = self.text, ""
        return text

    def read(self, size: int = -1) -> str:
        return self.readline()
