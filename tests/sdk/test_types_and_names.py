"""The SDK's types follow the contract's guarantees and its names are one per thing (issue 31, items 2 and 3)."""

from __future__ import annotations

import inspect
from typing import Any, get_type_hints

import httpx
import pytest
import respx

import wasdi_sdk
from wasdi_sdk import AsyncWasdiClient, UnexpectedResponseError, WasdiClient
from wasdi_sdk.catalog import endpoint
from wasdi_sdk.models import (
    GeorefProductViewModel,
    ProcessorLogViewModel,
    ProcessWorkspaceViewModel,
    RunningProcessorViewModel,
    StringResult,
    WorkspaceEditorViewModel,
    WorkspaceListInfoViewModel,
)
from wasdi_sdk.resources.file_buffer import FileBufferResource
from wasdi_sdk.resources.workspaces import WorkspacesResource

BASE = "http://wasdi.test"


def test_the_fields_every_answer_carries_are_not_optional() -> None:
    assert get_type_hints(ProcessWorkspaceViewModel)["process_id"] is str
    assert get_type_hints(ProcessWorkspaceViewModel)["status"] is str
    assert get_type_hints(WorkspaceListInfoViewModel)["workspace_id"] is str
    assert get_type_hints(WorkspaceListInfoViewModel)["name"] is str
    assert get_type_hints(RunningProcessorViewModel)["process_id"] is str
    assert get_type_hints(StringResult)["string_value"] is str
    assert get_type_hints(GeorefProductViewModel)["file_name"] is str
    # what a request may leave out stays optional (the editor model is also the body of an update)
    assert get_type_hints(WorkspaceEditorViewModel)["name"] == str | None
    assert get_type_hints(ProcessWorkspaceViewModel)["payload"] == str | None


def test_the_calls_whose_string_value_the_contract_guarantees_say_so_in_their_type() -> None:
    assert get_type_hints(WorkspacesResource.create)["return"] is StringResult
    assert get_type_hints(FileBufferResource.import_product)["return"] is StringResult


@pytest.mark.parametrize("method", ["wait_for_process", "upload_and_ingest", "import_and_wait", "from_config"])
@pytest.mark.parametrize("client_class", [WasdiClient, AsyncWasdiClient])
def test_the_helpers_name_their_arguments(client_class: type[Any], method: str) -> None:
    parameters = inspect.signature(getattr(client_class, method)).parameters.values()
    assert not [p for p in parameters if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert all(p.annotation != "Any" for p in parameters)


@respx.mock
def test_an_answer_without_a_member_the_contract_guarantees_is_an_unexpected_response() -> None:
    respx.get(f"{BASE}{endpoint('processes.last_by_user').path}").mock(
        return_value=httpx.Response(200, json=[{"status": "RUNNING", "workspaceId": "w"}]))
    with WasdiClient(base_url=BASE, session_token="s") as client, \
            pytest.raises(UnexpectedResponseError, match="ProcessWorkspaceViewModel") as caught:
        client.processes.last_by_user()
    assert "processObjId" in str(caught.value)


def test_a_process_id_is_process_id_on_every_model_and_the_wire_names_stay() -> None:
    process = ProcessWorkspaceViewModel.model_validate({"processObjId": "p", "status": "DONE"})
    run = RunningProcessorViewModel.model_validate({"processingIdentifier": "p", "status": "CREATED"})
    line = ProcessorLogViewModel.model_validate({"processWorkspaceId": "p", "rowNumber": 1})
    assert process.process_id == run.process_id == line.process_id == "p"
    assert process.to_wire()["processObjId"] == run.to_wire()["processingIdentifier"] == "p"
    assert line.to_wire()["processWorkspaceId"] == "p"


def test_a_workspace_name_is_name_from_list_and_from_get() -> None:
    listed = WorkspaceListInfoViewModel.model_validate({"workspaceId": "w", "workspaceName": "Floods",
                                                         "ownerUserId": "u"})
    got = WorkspaceEditorViewModel.model_validate({"workspaceId": "w", "name": "Floods"})
    assert listed.name == got.name == "Floods"
    assert listed.to_wire()["workspaceName"] == "Floods"


def test_apps_is_the_group_and_processors_its_alias() -> None:
    with WasdiClient(base_url=BASE) as client:
        assert client.apps is client.processors
    assert AsyncWasdiClient.apps is not None and "apps" in dir(AsyncWasdiClient)


def test_waits_take_the_process_id_by_one_name() -> None:
    for wait in (WasdiClient.wait_for_process, wasdi_sdk.wait_for_process,
                 WasdiClient(base_url=BASE).processes.wait, AsyncWasdiClient(base_url=BASE).processes.wait):
        assert "process_id" in inspect.signature(wait).parameters


def test_the_package_namespace_holds_only_what_a_user_imports() -> None:
    listed = set(dir(wasdi_sdk))
    assert not listed & {"Any", "TYPE_CHECKING", "annotations", "importlib"}
    public = {name for name in listed if not name.startswith("_")}
    assert public == set(wasdi_sdk.__all__) - {"__version__"}
    for name in wasdi_sdk.__all__:
        assert getattr(wasdi_sdk, name) is not None
