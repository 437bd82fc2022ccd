"""/admin: the operators' console (lookups, permissions, users, node metrics, process queue cleaning)."""

from __future__ import annotations

from typing import Any

from wasdi_sdk.catalog.admin import CLOSED_HEADER
from wasdi_sdk.models import (
    DeployedProcessorViewModel,
    FullUserViewModel,
    GenericResourceViewModel,
    MetricsEntry,
    SuccessResponse,
    UserListViewModel,
    UserResourcePermissionViewModel,
    UsersSummaryViewModel,
    UserViewModel,
    WorkspaceListInfoViewModel,
)

from ..domains.admin.admin_lookups import require_admin
from .answers import Answer
from .framework import Call, handles


@handles("admin.find_users")
def find_users(call: Call) -> list[UserViewModel]:
    found = call.services.admin_lookups.users(call.caller, call.params["partialName"])
    return [UserViewModel.model_validate(d) for d in found]


@handles("admin.find_workspaces")
def find_workspaces(call: Call) -> list[WorkspaceListInfoViewModel]:
    found = call.services.admin_lookups.workspaces_named(call.caller, call.params["partialName"])
    return [WorkspaceListInfoViewModel.model_validate(d) for d in found]


@handles("admin.find_processors")
def find_processors(call: Call) -> list[DeployedProcessorViewModel]:
    found = call.services.admin_lookups.apps_named(call.caller, call.params["partialName"])
    return [DeployedProcessorViewModel.model_validate(d) for d in found]


@handles("admin.find_resources")
def find_resources(call: Call) -> list[GenericResourceViewModel]:
    p = call.params
    found = call.services.admin_lookups.resources_named(call.caller, p["resourceType"], p["partialName"],
                                                        p["offset"], p["limit"])
    return [GenericResourceViewModel.model_validate(d) for d in found]


@handles("admin.list_resource_permissions")
def list_resource_permissions(call: Call) -> list[UserResourcePermissionViewModel]:
    p = call.params
    found = call.services.admin_lookups.permissions(call.caller, p["resourceType"], p["resourceId"], p["userId"])
    return [UserResourcePermissionViewModel.model_validate(d) for d in found]


@handles("admin.add_resource_permission")
def add_resource_permission(call: Call) -> None:
    p = call.params
    call.services.admin_lookups.add_permission(call.caller, p["resourceType"], p["resourceId"], p["userId"],
                                               p["rights"])


@handles("admin.remove_resource_permission")
def remove_resource_permission(call: Call) -> None:
    p = call.params
    call.services.admin_lookups.remove_permission(call.caller, p["resourceType"], p["resourceId"], p["userId"])


@handles("admin.resource_types")
def resource_types(call: Call) -> list[str]:
    return call.services.admin_lookups.resource_type_names(call.caller)


@handles("admin.push_metrics")
def push_metrics(call: Call) -> SuccessResponse:
    require_admin(call.caller)
    body: MetricsEntry = call.body
    return SuccessResponse(message=call.services.metrics.push(body.to_wire()))


@handles("admin.latest_metrics")
def latest_metrics(call: Call) -> MetricsEntry | None:
    require_admin(call.caller)
    entry = call.services.metrics.latest(call.params["nodeCode"])
    return MetricsEntry.model_validate(entry) if entry is not None else None


@handles("admin.list_users")
def list_users(call: Call) -> list[UserListViewModel]:
    p = call.params
    rows = call.services.admin_users.list_page(call.caller, p["partialName"], p["offset"], p["limit"], p["sortedby"],
                                               p["order"])
    return [UserListViewModel.model_validate(r) for r in rows]


@handles("admin.users_summary")
def users_summary(call: Call) -> UsersSummaryViewModel:
    return UsersSummaryViewModel.model_validate(call.services.admin_users.summary(call.caller))


@handles("admin.get_user")
def get_user(call: Call) -> FullUserViewModel:
    return FullUserViewModel.model_validate(call.services.admin_users.details(call.caller, call.params["userId"]))


@handles("admin.update_user")
def update_user(call: Call) -> None:
    body: FullUserViewModel = call.body
    fields: dict[str, Any] = body.model_dump(exclude_none=True)
    call.services.admin_users.update(call.caller, fields)


@handles("admin.delete_user")
def delete_user(call: Call) -> None:
    call.services.admin_users.delete(call.caller, call.params["userId"])


def closed_answer(count: int) -> Answer:
    """The empty 200 the contract says, with how many processes were closed in a header (clients that do not
    know it ignore it)."""
    return Answer(200, body=b"", media_type="text/plain", headers={CLOSED_HEADER: str(count)})


@handles("admin.clean_processes_queue")
def clean_processes_queue(call: Call) -> Answer:
    require_admin(call.caller)
    return closed_answer(call.services.process_cleaning.clean_queue())


@handles("admin.clean_old_processes")
def clean_old_processes(call: Call) -> Answer:
    require_admin(call.caller)
    return closed_answer(call.services.process_cleaning.clean_stale())
