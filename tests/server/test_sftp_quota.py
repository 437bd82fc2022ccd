"""The SFTP quota counts what the folder takes on disk, measured again at each write, truncation and rename:
handles that remember sizes, truncation by path, removed or replaced files still open, and writes into holes
cannot store more than the quota (before, with a 1 MiB quota, 5 handles each writing 900 KiB, truncating by
path and writing again left 4.6 MB stored)."""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh
import pytest
from tests.conftest import Person, Server
from tests.server.transfer_support import connect, create_account, run, sftp_service

KIB = 1024
QUOTA = 1024 * KIB


def on_disk(folder: Path) -> int:
    """What the folder's files take on disk (their blocks), as the operator's ``du`` counts it."""
    return sum(p.lstat().st_blocks * 512 for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


async def try_write(handle: asyncssh.SFTPClientFile, data: bytes, offset: int) -> bool:
    try:
        await handle.write(data, offset)
    except asyncssh.SFTPError as e:
        assert "quota" in str(e)
        return False
    return True


def test_five_handles_truncated_by_path_cannot_pass_the_quota(server: Server, alice: Person) -> None:
    password = create_account(server, alice)
    folder = server.services.uploads.folder(alice.user_id)
    chunk = os.urandom(900 * KIB)
    outcomes: list[tuple[bool, bool]] = []

    async def scenario(service: object) -> None:
        async with connect(service, alice.user_id, password) as conn, conn.start_sftp_client() as sftp:  # type: ignore[arg-type]
            handles = [await sftp.open(f"f{i}.bin", "wb") for i in range(5)]
            for i, handle in enumerate(handles):
                first = await try_write(handle, chunk, 0)
                await sftp.truncate(f"f{i}.bin", 0)  # by path: the handle still "remembers" 900 KiB
                again = await try_write(handle, chunk, 0)
                outcomes.append((first, again))
                assert on_disk(folder) <= QUOTA
            for handle in handles:
                await handle.close()

    with sftp_service(server, quota_bytes=QUOTA) as service:
        run(scenario(service))
    assert outcomes[0] == (True, True)  # one file of 900 KiB fits, written twice over
    assert all(outcome == (False, False) for outcome in outcomes[1:])  # no second one
    assert on_disk(folder) <= QUOTA


def test_a_removed_file_still_open_is_counted_until_its_handle_closes(server: Server, alice: Person) -> None:
    password = create_account(server, alice)
    chunk = os.urandom(900 * KIB)

    async def scenario(service: object) -> None:
        async with connect(service, alice.user_id, password) as conn, conn.start_sftp_client() as sftp:  # type: ignore[arg-type]
            kept = await sftp.open("a.bin", "wb")
            assert await try_write(kept, chunk, 0)
            await sftp.remove("a.bin")  # gone from the folder, its 900 KiB still on disk through `kept`
            other = await sftp.open("b.bin", "wb")
            assert not await try_write(other, chunk, 0)
            assert await try_write(kept, b"more", len(chunk))  # the open file may still be written in place
            await kept.close()  # now the disk is given back
            assert await try_write(other, chunk, 0)
            await other.close()

            # the same through a rename that replaces a file still open
            held = await sftp.open("b.bin", "rb")
            small = await sftp.open("c.bin", "wb")
            assert await try_write(small, b"x" * KIB, 0)
            await small.close()
            await sftp.posix_rename("c.bin", "b.bin")
            fresh = await sftp.open("d.bin", "wb")
            assert not await try_write(fresh, chunk, 0)
            await held.close()
            assert await try_write(fresh, chunk, 0)
            await fresh.close()

    with sftp_service(server, quota_bytes=QUOTA) as service:
        run(scenario(service))


def test_writes_into_a_hole_count_and_growing_truncations_are_bounded(server: Server, alice: Person) -> None:
    password = create_account(server, alice)

    async def scenario(service: object) -> None:
        async with connect(service, alice.user_id, password) as conn, conn.start_sftp_client() as sftp:  # type: ignore[arg-type]
            handle = await sftp.open("sparse.bin", "wb")
            await handle.truncate(QUOTA)  # as big as the quota, all hole: allowed, takes no disk
            with pytest.raises(asyncssh.SFTPError, match="quota"):
                await handle.truncate(2 * QUOTA)  # a growth past the quota is refused
            written = 0
            for offset in range(0, 2 * QUOTA, 256 * KIB):  # filling the hole counts, whatever the size says
                if not await try_write(handle, os.urandom(256 * KIB), offset):
                    break
                written += 256 * KIB
            assert written <= QUOTA
            await handle.close()

    with sftp_service(server, quota_bytes=QUOTA) as service:
        run(scenario(service))
    assert on_disk(server.services.uploads.folder(alice.user_id)) <= QUOTA
