"""The one atomic-write helper: the old file or the complete new one, never a mix, and no leftovers."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from wasdi_sdk import atomic_files
from wasdi_sdk.atomic_files import atomic_writer, replace_durably, write_atomic


def test_write_atomic_replaces_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "f.json"
    target.write_text("old")
    write_atomic(target, "new ✓")
    assert target.read_text("utf-8") == "new ✓" and os.listdir(tmp_path) == ["f.json"]


def test_a_failure_midway_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "f.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), atomic_writer(target) as out:
        out.write(b"half")
        raise RuntimeError("crash")
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.bin"]


def test_a_mode_is_applied_exactly_and_the_default_follows_the_umask(tmp_path: Path) -> None:
    write_atomic(tmp_path / "secret", b"x", mode=0o600)
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600
    old = os.umask(0o022)
    try:
        write_atomic(tmp_path / "plain", b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o644


def test_data_and_the_rename_are_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[str] = []
    real_fsync = os.fsync
    monkeypatch.setattr(atomic_files.os, "fsync", lambda fd: synced.append(os.readlink(f"/proc/self/fd/{fd}"))
                        or real_fsync(fd))
    source = tmp_path / "staging" / "upload"
    source.parent.mkdir()
    source.write_bytes(b"data")
    replace_durably(source, tmp_path / "final")
    assert (tmp_path / "final").read_bytes() == b"data" and not source.exists()
    assert str(source) in synced and str(tmp_path) in synced  # the file's bytes, then the folder's entry
