"""The suite both clients pass, against the in-process app and a real server (see conftest.py).

Every test runs four times: sync and async client, in-process and real server.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.clients.conftest import ALICE, BOB, HELLO, Connect, Target
from tests.server.geodata import BBOX_4326, make_geotiff
from wasdi_sdk import (
    APIError,
    AuthenticationError,
    BadRequestError,
    EmptyResultError,
    NotFoundError,
    PermissionDeniedError,
    ProcessFailedError,
)
from wasdi_sdk.catalog import Style

pytestmark = pytest.mark.anyio


async def test_login_workspaces_and_logout(connect: Connect, target: Target, unique: str) -> None:
    async with connect(None) as client:
        user = await client.auth.login(ALICE, target.password)
        assert user.user_id == ALICE and client.session_token == user.session_id
        ws_id = (await client.workspaces.create(name=f"floods-{unique}")).string_value
        assert ws_id
        listed = {w.workspace_id: w for w in await client.workspaces.list()}
        assert listed[ws_id].name == f"floods-{unique}" and listed[ws_id].read_only is False
        assert (await client.workspaces.get(ws_id)).name == f"floods-{unique}"
        assert (await client.workspaces.rename(ws_id, f"droughts-{unique}")).name == f"droughts-{unique}"
        await client.workspaces.delete(ws_id)
        assert ws_id not in {w.workspace_id for w in await client.workspaces.list()}
        await client.auth.logout()
        assert client.session_token is None
        with pytest.raises(AuthenticationError):
            await client.auth.check_session()
        with pytest.raises(AuthenticationError) as wrong:
            await client.auth.login(ALICE, "not-the-password")
        assert wrong.value.style is Style.MARKER


async def test_failures_are_exceptions_by_meaning(connect: Connect, unique: str) -> None:
    async with connect(ALICE) as owner, connect(BOB) as stranger:
        ws_id = (await owner.workspaces.create(name=f"mine-{unique}")).string_value
        with pytest.raises(PermissionDeniedError) as by_status:
            await stranger.workspaces.delete(ws_id)
        assert by_status.value.style is Style.STATUS and by_status.value.status == 403
        with pytest.raises(PermissionDeniedError) as by_marker:
            await stranger.workspaces.share_add(workspace=ws_id, user_id="carol@example.org")
        assert by_marker.value.style is Style.MARKER
        with pytest.raises(EmptyResultError) as empty:
            await stranger.workspaces.get(ws_id)
        assert empty.value.style is Style.EMPTY
        assert await stranger.workspaces.share_list(ws_id) == []  # an empty list is an answer, not an error
        with pytest.raises(BadRequestError):
            await owner.workspaces.share_add(workspace=ws_id, user_id=ALICE)
        raw = await owner.workspaces.with_raw_response.list()
        assert raw.status_code == 200 and ws_id in {w.workspace_id for w in raw.parse()}
        await owner.workspaces.delete(ws_id)


async def test_streamed_upload_and_download_with_progress(connect: Connect, target: Target, unique: str,
                                                          tmp_path: Path) -> None:
    source = tmp_path / "payload.bin"
    source.write_bytes(bytes(range(256)) * 1031)  # 264 KB: several chunks each way
    async with connect(ALICE) as client:
        ws_id = (await client.workspaces.create(name=f"files-{unique}")).string_value
        sent: list[int] = []
        await client.products.upload_without_ingest(ws_id, source, on_progress=sent.append)
        assert sum(sent) == source.stat().st_size and len(sent) > 1
        received: list[int] = []
        back = await client.files.download("payload.bin", ws_id, tmp_path / "back.bin", on_progress=received.append)
        assert back.read_bytes() == source.read_bytes() and sum(received) == source.stat().st_size
        folder = tmp_path / "into"
        folder.mkdir()
        assert await client.files.download("payload.bin", ws_id, folder) == folder / "payload.bin"
        with pytest.raises(NotFoundError):
            await client.files.download("absent.bin", ws_id, folder / "never.bin")
        assert sorted(p.name for p in folder.iterdir()) == ["payload.bin"]  # a failed download leaves nothing
        await client.workspaces.delete(ws_id)


async def test_ingest_and_wait_for_processes(connect: Connect, unique: str, tmp_path: Path) -> None:
    tif = make_geotiff(tmp_path / "scene.tif")
    async with connect(ALICE) as client:
        ws_id = (await client.workspaces.create(name=f"ingest-{unique}")).string_value
        seen: list[str] = []
        product = await client.upload_and_ingest(ws_id, tif, style="grey", poll_interval=0.05,
                                                 on_update=lambda p: seen.append(p.status))
        assert product.file_name == "scene.tif" and product.bbox == BBOX_4326 and seen[-1] == "DONE"
        await client.products.upload_without_ingest(ws_id, tif, name="again.tif")
        started = await client.files.ingest("again.tif", ws_id)
        final = await client.processes.wait(str(started.string_value), poll_interval=0.05, timeout=60)
        assert final.status == "DONE" and final.operation_type == "INGEST"
        assert {"scene.tif", "again.tif"} <= set(await client.products.list_names(ws_id))
        with pytest.raises(ProcessFailedError) as failed:  # nothing listens on port 9
            await client.import_and_wait(ws_id, "http://127.0.0.1:9/unreachable.tif", poll_interval=0.05)
        assert failed.value.process.status == "ERROR"
        await client.workspaces.delete(ws_id)


async def test_run_and_wait_of_an_unknown_app_is_refused(connect: Connect, unique: str) -> None:
    async with connect(ALICE) as client:
        ws_id = (await client.workspaces.create(name=f"runs-{unique}")).string_value
        with pytest.raises(APIError) as refused:
            await client.processors.run_and_wait(name=f"no-app-{unique}", workspace=ws_id)
        assert refused.value.message
        await client.workspaces.delete(ws_id)


@pytest.mark.e2e
async def test_run_and_wait(real_server: Target, flavour: str, unique: str) -> None:
    # An app run calls its server back over HTTP: only the real server, which listens, has the app deployed.
    async with real_server.client(flavour, ALICE) as client:
        ws_id = (await client.workspaces.create(name=f"runs-{unique}")).string_value
        done = await client.processors.run_and_wait(name=HELLO, workspace=ws_id, params={"name": flavour},
                                                    poll_interval=0.1, timeout=120)
        assert done.status == "DONE"
        assert json.loads(await client.processes.get_payload(str(done.process_id))) == \
            {"greeting": f"hello {flavour}"}
        await client.workspaces.delete(ws_id)


async def test_concurrent_calls(connect: Connect, flavour: str, unique: str) -> None:
    """Many calls at once (the async client's reason to be; the sync one simply runs them in turn)."""
    async with connect(ALICE) as client:
        names = [f"fan-{unique}-{i}" for i in range(6)]
        created = await asyncio.gather(*(client.workspaces.create(name=n) for n in names))
        ids = [c.string_value for c in created]
        assert len(set(ids)) == 6
        fetched = await asyncio.gather(*(client.workspaces.get(i) for i in ids))
        assert [w.name for w in fetched] == names
        await asyncio.gather(*(client.workspaces.delete(i) for i in ids))
        assert not set(ids) & {w.workspace_id for w in await client.workspaces.list()}
