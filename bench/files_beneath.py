"""What opening workspace files once, beneath their folder, and measuring the SFTP quota at each write cost.

Prints ratios against baselines measured in the same run:

- ``open``: opening a 4 KiB file of a workspace-like folder three levels down, ``fstat`` and reading it, with
  ``files_beneath.open_regular`` (``openat2``, then the per-component walk) ÷ the built-in ``open`` by path;
- ``quota``: 64 KiB writes through ``Quota.write`` with a limit (each write's change of blocks counted, the
  folder of ``--files`` files measured again at least every second) ÷ the same writes with no limit.

Bounded: ``--opens`` opens and ``--writes`` writes per variant (defaults 20,000 and 2,000), a few seconds.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from wasdi_server import files_beneath
from wasdi_server.files_beneath import open_regular
from wasdi_server.paths import folder_size
from wasdi_server.transfer.confined_folder import Quota


def timed(count: int, work: Callable[[], object]) -> float:
    """Seconds per call of ``work``, the best of three runs of ``count`` calls."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for _ in range(count):
            work()
        best = min(best, time.perf_counter() - started)
    return best / count


def bench_open(root: Path, opens: int) -> None:
    relative = "user@example.org/ws-1/scene.tif"
    (root / relative).parent.mkdir(parents=True)
    (root / relative).write_bytes(os.urandom(4096))
    path = root / relative

    def builtin() -> bytes:
        with open(path, "rb") as f:
            os.fstat(f.fileno())
            return f.read()

    def beneath() -> bytes:
        with open_regular(root, relative) as f:
            return f.read()

    base = timed(opens, builtin)
    with_openat2 = timed(opens, beneath) if files_beneath.has_openat2() else float("nan")
    with mock.patch.object(files_beneath._openat2, "get", lambda: None):
        walked = timed(opens, beneath)
    print(f"open+fstat+read of a 4 KiB file: built-in open {base * 1e6:.1f} µs")
    print(f"  open_regular, openat2        {with_openat2 / base:.2f}x")
    print(f"  open_regular, component walk {walked / base:.2f}x")


def bench_quota(root: Path, writes: int, files: int) -> None:
    folder = root / "uploads"
    folder.mkdir()
    for i in range(files):
        (folder / f"f{i}.bin").write_bytes(b"x" * 1000)
    chunk = os.urandom(64 * 1024)
    target = folder / "upload.bin"

    def run(limit: int) -> float:
        quota = Quota(limit, lambda: folder_size(folder, on_disk=True))
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            offset = 0

            def write() -> None:
                nonlocal offset
                quota.write(fd, chunk, offset)
                offset += len(chunk)

            return timed(writes, write)
        finally:
            os.close(fd)
            target.unlink()

    unlimited = run(0)
    limited = run(1 << 50)
    print(f"64 KiB SFTP writes, {files} files in the folder: no quota {unlimited * 1e6:.1f} µs a write")
    print(f"  with a quota to check        {limited / unlimited:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--opens", type=int, default=20_000)
    parser.add_argument("--writes", type=int, default=2_000)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        bench_open(Path(folder), args.opens)
        bench_quota(Path(folder), args.writes, args.files)


if __name__ == "__main__":
    main()
