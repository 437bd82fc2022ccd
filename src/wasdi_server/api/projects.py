"""/projects: projects and the active project."""

from __future__ import annotations

from wasdi_sdk.models import ProjectListViewModel, ProjectViewModel, SuccessResponse

from .framework import Call, handles
from .organizations import sent


@handles("projects.list")
def list_projects(call: Call) -> list[ProjectListViewModel]:
    return [ProjectListViewModel.model_validate(d)
            for d in call.services.projects.list_for(call.caller, bool(call.params["valid"]))]


@handles("projects.list_by_subscription")
def list_projects_by_subscription(call: Call) -> list[ProjectListViewModel]:
    return [ProjectListViewModel.model_validate(d)
            for d in call.services.projects.list_by_subscription(call.caller, call.params["subscription"])]


@handles("projects.get")
def get_project(call: Call) -> ProjectViewModel:
    return ProjectViewModel.model_validate(call.services.projects.view(call.caller, call.params["project"]))


@handles("projects.create")
def create_project(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.projects.create(call.caller, sent(call.body)))


@handles("projects.update")
def update_project(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.projects.update(call.caller, sent(call.body)))


@handles("projects.set_active")
def set_active_project(call: Call) -> SuccessResponse:
    p = call.params
    return SuccessResponse(message=call.services.projects.set_active(call.caller, p["project"], p["target"]))


@handles("projects.delete")
def delete_project(call: Call) -> SuccessResponse:
    return SuccessResponse(message=call.services.projects.delete(call.caller, call.params["project"]))
