"""client.processors and client.package_manager against the real app: uploads streamed from a path, failures
raised by meaning (marker, status and run-error styles), build logs, UI, zip download, package lists."""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.app_support import HELLO_APP, app_settings, app_zip
from tests.conftest import Person, Server

from wasdi_sdk import APIError, BadRequestError, ConflictError, PermissionDeniedError, ServerError, WasdiClient


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    s = Server(tmp_path / "data", **app_settings())
    yield s
    s.close()


def wait(client: WasdiClient, process_id: str) -> str:
    for _ in range(600):
        status = client.processes.get_status(process_id)
        if status in ("DONE", "ERROR", "STOPPED"):
            return str(status)
        time.sleep(0.05)
    raise AssertionError("the deploy did not end")


@pytest.fixture
def deployed(server: Server, alice: Person, tmp_path: Path) -> str:
    source = tmp_path / "hello.zip"
    source.write_bytes(app_zip({"myProcessor.py": HELLO_APP, "readme.md": "Says hello."}))
    client = server.sdk(alice)
    result = client.processors.upload(source, name="hello", description="greets", minute_timeout=5)
    assert wait(client, str(result.string_value)) == "DONE"
    return str(server.services.apps.records.by_name("hello")["processorId"])


def test_upload_build_logs_help_ui_and_download(server: Server, alice: Person, deployed: str, tmp_path: Path) -> None:
    client = server.sdk(alice)
    assert client.processors.build_logs(deployed)[-1] == "environment ready"
    assert client.processors.help("hello") == "Says hello."
    assert client.processors.get_ui("hello") == {"tabs": []}
    client.processors.save_ui("hello", ui={"tabs": [{"name": "Main"}]})
    assert client.processors.get_ui("hello") == {"tabs": [{"name": "Main"}]}
    target = client.processors.download(deployed, to=tmp_path)
    with zipfile.ZipFile(target) as bundle:
        assert sorted(bundle.namelist()) == ["myProcessor.py", "readme.md"]
    client.processors.update(deployed, processor={"processorDescription": "new", "minuteTimeout": 7})
    doc = server.services.apps.records.get(deployed)
    assert (doc["description"], doc["minuteTimeout"]) == ("new", 7)
    packages = {p.package_name for p in client.package_manager.list_packages("hello")}
    assert "wasdi" in packages
    manager = client.package_manager.manager_version("hello")
    assert manager is not None and manager.name == "uv"


def test_failures_are_raised_by_meaning(server: Server, alice: Person, bob: Person, deployed: str) -> None:
    with pytest.raises(ConflictError):
        server.sdk(bob).processors.upload(io.BytesIO(app_zip({"myProcessor.py": HELLO_APP})), name="hello")
    with pytest.raises(BadRequestError):
        server.sdk(alice).processors.upload(io.BytesIO(b"not a zip"), name="other")
    with pytest.raises(ServerError):
        server.sdk(alice).processors.upload(io.BytesIO(app_zip({"myProcessor.py": HELLO_APP})), name="Upper")
    with pytest.raises(PermissionDeniedError):
        server.sdk(bob).processors.redeploy(deployed)
    with pytest.raises(APIError, match="Workspace cannot be accessed"):
        server.sdk(alice).processors.run(name="hello", workspace="nope", params={"name": "x"})
    with pytest.raises(BadRequestError):
        server.sdk(alice).package_manager.update_environment(processor_id=deployed, workspace="nope",
                                                             update_command="addPackage/--pre")
