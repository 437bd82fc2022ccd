"""The built-in SFTP service, driven by real SFTP clients: OpenSSH's ``sftp`` (where installed) and AsyncSSH's.

What an upload account may do (upload, resume, list, download, delete, folders) and what it may not
(leave its folder, links included; exceed its quota; run commands; forward ports; stay logged in after
``removeaccount`` or ``updatepassword``; guess passwords quickly), and the web client's way in: the
files ``/auth/upload/list`` lists and ``PUT /catalog/upload/ingest`` ingests.
"""

from __future__ import annotations

import os
from pathlib import Path

import asyncssh
import pytest
from tests import environment
from tests.conftest import Person, Server
from tests.server.geodata import make_geotiff, new_workspace
from tests.server.transfer_support import (
    OPENSSH_SFTP,
    connect,
    create_account,
    digest,
    mailed_password,
    openssh_sftp,
    pattern_file,
    run,
    sftp_service,
)

MB = 1024 * 1024


def test_openssh_sftp_uploads_200_mb_resumes_lists_and_downloads(server: Server, alice: Person,
                                                                  tmp_path: Path) -> None:
    environment.require(OPENSSH_SFTP, "OpenSSH's sftp client is not installed")
    password = create_account(server, alice)
    whole = pattern_file(tmp_path / "scene.bin", 200 * MB)
    part = tmp_path / "part.bin"
    with open(whole, "rb") as src, open(part, "wb") as dst:
        dst.write(src.read(70 * MB))  # what an interrupted upload left behind
    stored = server.services.uploads.folder(alice.user_id) / "scene.bin"
    with sftp_service(server) as service:
        done = openssh_sftp(service, alice.user_id, password, f"put {part} scene.bin\n", tmp_path)
        assert done.returncode == 0, done.stderr
        with open(stored, "r+b") as handle:  # mark the part already there: a resumed upload leaves it alone
            handle.write(b"Z")
        done = openssh_sftp(service, alice.user_id, password,
                            f"reput {whole} scene.bin\nls -l\nget scene.bin {tmp_path / 'back.bin'}\nrm scene.bin\n",
                            tmp_path)
        assert done.returncode == 0, done.stderr
    listing = [line for line in done.stdout.splitlines() if line.endswith("scene.bin") and line.startswith("-")]
    assert listing and str(200 * MB) in listing[0]
    with open(whole, "r+b") as handle:
        handle.write(b"Z")
    assert digest(tmp_path / "back.bin") == digest(whole)  # the first 70 MB were not sent again
    assert not stored.exists()


def test_openssh_sftp_is_kept_inside_the_folder(server: Server, alice: Person, bob: Person, tmp_path: Path) -> None:
    environment.require(OPENSSH_SFTP, "OpenSSH's sftp client is not installed")
    password = create_account(server, alice)
    create_account(server, bob)
    bobs = server.services.uploads.folder(bob.user_id)
    (bobs / "secret.txt").write_text("bob's")
    mine = server.services.uploads.folder(alice.user_id)
    os.symlink(bobs, mine / "to-bob")  # planted by someone with access to the disk: still not followed
    os.symlink(bobs / "secret.txt", mine / "secret-link.txt")
    with sftp_service(server) as service:
        done = openssh_sftp(service, alice.user_id, password, "ls -l to-bob/\n", tmp_path)
        assert "secret.txt" not in done.stdout  # the link itself, at most; never what it points to
        for command in ("get ../bob@example.org/secret.txt", "get /../../etc/passwd", "get secret-link.txt",
                        "get to-bob/secret.txt", "ln -s /etc/passwd mine",
                        "ln secret-link.txt hard", "chdir to-bob"):
            done = openssh_sftp(service, alice.user_id, password, f"{command}\n", tmp_path)
            assert done.returncode != 0, f"{command} succeeded: {done.stdout}"
        done = openssh_sftp(service, alice.user_id, password, "pwd\ncd ../..\npwd\n", tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("Remote working directory: /\n") == 2
    assert not (tmp_path / "secret.txt").exists() and not (tmp_path / "passwd").exists()
    assert not (mine / "mine").exists() and not (mine / "hard").exists()


def test_resume_quota_and_delete_with_the_asyncssh_client(tmp_path: Path, alice: Person, server: Server) -> None:
    password = create_account(server, alice)
    data = os.urandom(3 * MB)

    async def scenario(service: object) -> None:
        async with connect(service, alice.user_id, password) as conn, conn.start_sftp_client() as sftp:  # type: ignore[arg-type]
            await sftp.mkdir("in")
            async with sftp.open("in/a.bin", "wb") as handle:
                await handle.write(data[:MB])
            async with sftp.open("in/a.bin", "r+b") as handle:  # resume where the first upload stopped
                await handle.seek((await sftp.stat("in/a.bin")).size or 0)
                await handle.write(data[MB:2 * MB])
            assert (await sftp.stat("in/a.bin")).size == 2 * MB
            with pytest.raises(asyncssh.SFTPError, match="quota"):
                async with sftp.open("in/b.bin", "wb") as handle:
                    await handle.write(data)  # 2 MB used + 3 MB > 4 MB
            await sftp.remove("in/b.bin")
            async with sftp.open("in/a.bin", "rb") as handle:
                assert await handle.read() == data[:2 * MB]
            vfs = await sftp.statvfs("/")
            assert vfs.blocks * vfs.frsize == 4 * MB  # what `df` shows is the quota,
            assert (vfs.blocks - vfs.bfree) * vfs.frsize == 2 * MB  # and what the folder holds
            await sftp.remove("in/a.bin")
            async with sftp.open("in/c.bin", "wb") as handle:  # deleting gave the room back
                await handle.write(data)
            await sftp.rename("in/c.bin", "c.bin")
            assert sorted(await sftp.listdir("/")) == [".", "..", "c.bin", "in"]

    with sftp_service(server, quota_bytes=4 * MB) as service:
        run(scenario(service))
    assert server.get("/auth/upload/list", alice).json == ["c.bin"]


def test_no_shell_no_exec_no_forwarding(server: Server, alice: Person) -> None:
    password = create_account(server, alice)

    async def scenario(service: object) -> None:
        async with connect(service, alice.user_id, password) as conn:  # type: ignore[arg-type]
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.run("id", check=False)
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.create_process()  # a shell
            with pytest.raises(asyncssh.ChannelOpenError):
                await conn.open_connection("127.0.0.1", server.settings.port)  # -L forwarding
            with pytest.raises(asyncssh.ChannelListenError):
                await conn.forward_remote_port("127.0.0.1", 0, "127.0.0.1", 9)  # -R forwarding
            async with conn.start_sftp_client() as sftp:  # the one thing it may do
                assert await sftp.listdir("/") == [".", ".."]

    with sftp_service(server) as service:
        run(scenario(service))


def test_removeaccount_and_updatepassword_take_effect_at_once(server: Server, alice: Person) -> None:
    first = create_account(server, alice)

    async def still_open(conn: asyncssh.SSHClientConnection) -> bool:
        try:
            async with conn.start_sftp_client() as sftp:
                await sftp.listdir("/")
            return True
        except (asyncssh.Error, OSError):
            return False

    async def scenario(service: object) -> None:
        async with connect(service, alice.user_id, first) as conn:  # type: ignore[arg-type]
            assert await still_open(conn)
            r = server.post("/auth/upload/updatepassword", alice, body=alice.user_id, content_type="text/plain")
            assert r.status_code == 200
            await conn.wait_closed()  # the server ended the session
        second = mailed_password(server, alice.user_id)
        with pytest.raises(asyncssh.PermissionDenied):
            async with connect(service, alice.user_id, first):  # type: ignore[arg-type]
                pass
        async with connect(service, alice.user_id, second) as conn:  # type: ignore[arg-type]
            assert await still_open(conn)
            assert server.delete("/auth/upload/removeaccount", alice).status_code == 200
            await conn.wait_closed()
        with pytest.raises(asyncssh.PermissionDenied):
            async with connect(service, alice.user_id, second):  # type: ignore[arg-type]
                pass

    with sftp_service(server) as service:
        run(scenario(service))
        assert service.open_sessions(alice.user_id) == 0


def test_failed_logins_are_throttled(server: Server, alice: Person) -> None:
    password = create_account(server, alice)

    async def scenario(service: object) -> None:
        with pytest.raises(asyncssh.PermissionDenied):
            async with connect(service, alice.user_id, "wrong-password"):  # type: ignore[arg-type]
                pass

    with sftp_service(server) as service:
        run(scenario(service))
        assert service.throttle.wait_seconds(alice.user_id, "127.0.0.1") == 0  # one failure is free
        for _ in range(5):
            service.throttle.failed(alice.user_id, "127.0.0.1")
        assert service.throttle.wait_seconds(alice.user_id, "127.0.0.1") > 0
        with pytest.raises(asyncssh.PermissionDenied):  # even the right password, while the delay runs
            run(_login(service, alice.user_id, password))


async def _login(service: object, user: str, password: str) -> None:
    async with connect(service, user, password):  # type: ignore[arg-type]
        pass


def test_a_disabled_user_or_an_unknown_login_cannot_log_in(server: Server, alice: Person, bob: Person) -> None:
    password = create_account(server, alice)
    with sftp_service(server) as service:
        with pytest.raises(asyncssh.PermissionDenied):
            run(_login(service, bob.user_id, password))  # bob has no account
        server.services.users.users.update(alice.user_id, {"active": False})
        with pytest.raises(asyncssh.PermissionDenied):
            run(_login(service, alice.user_id, password))


def test_uploaded_file_is_listed_and_ingested_through_the_sdk(server: Server, alice: Person, tmp_path: Path) -> None:
    password = create_account(server, alice)
    scene = make_geotiff(tmp_path / "S2_upload.tif")
    ws = new_workspace(server, alice)

    async def upload(service: object) -> None:
        async with connect(service, alice.user_id, password) as conn, conn.start_sftp_client() as sftp:  # type: ignore[arg-type]
            await sftp.put(str(scene), "S2_upload.tif")
            await sftp.put(str(scene), ".partial")  # hidden: neither listed nor ingestable

    with sftp_service(server) as service:
        run(upload(service))
    client = server.sdk(alice)
    assert server.get("/auth/upload/list", alice).json == ["S2_upload.tif"]
    started = client.files.ingest_upload("S2_upload.tif", ws)
    assert client.wait_for_process(str(started.string_value), poll_interval=0.05, timeout=30).status == "DONE"
    assert [p.file_name for p in client.products.list(ws)] == ["S2_upload.tif"]
    assert server.get("/auth/upload/list", alice).json == []


def test_the_host_key_is_made_once_and_kept(server: Server) -> None:
    with sftp_service(server) as service:
        first = service.fingerprint
    key_file = server.settings.sftp_host_key_path
    assert key_file.is_file() and key_file.stat().st_mode & 0o077 == 0
    with sftp_service(server) as service:
        assert service.fingerprint == first


def test_the_account_mail_says_where_to_connect(server: Server, alice: Person) -> None:
    create_account(server, alice)
    text = server.mails()[-1].get_content()
    assert "USER: alice@example.org - PASSWORD: " in text  # the original's line, first
    assert "sftp -P 2222 'alice@example.org'@127.0.0.1" in text
