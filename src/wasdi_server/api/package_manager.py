"""/packageManager: the package environment of an app."""

from __future__ import annotations

from wasdi_sdk.models import PackageManagerViewModel, PackageViewModel

from .answers import Answer, to_json_bytes
from .framework import Call, handles

UNCHECKED = ('199 wasdi "the package index could not be reached in time: the latest versions are unknown '
             '(latestVersion left out)"')


@handles("package_manager.list_packages")
def list_packages(call: Call) -> list[PackageViewModel] | Answer:
    rows, checked = call.services.app_environments.list_packages(call.caller, call.params["name"])
    packages = [PackageViewModel.model_validate(r) for r in rows]
    if checked:
        return packages
    return Answer(200, body=to_json_bytes(packages), headers={"Warning": UNCHECKED})


@handles("package_manager.environment_actions")
def environment_actions(call: Call) -> list[str]:
    return call.services.app_environments.actions(call.caller, call.params["name"])


@handles("package_manager.manager_version")
def manager_version(call: Call) -> PackageManagerViewModel | Answer:
    manager = call.services.app_environments.manager_version(call.caller, call.params["name"])
    if manager is None:
        return Answer(200, body=b"", media_type="application/json")
    return PackageManagerViewModel.model_validate(manager)


@handles("package_manager.update_environment")
def update_environment(call: Call) -> None:
    p = call.params
    call.services.app_environments.queue_update(call.caller, p["processorId"], p["workspace"], p["updateCommand"])
    call.services.propagation.app_environment_updated(call.caller.user_id, p["processorId"], p["workspace"] or "",
                                                      p["updateCommand"] or "")


@handles("package_manager.reset_actions")
def reset_actions(call: Call) -> None:
    call.services.app_environments.reset(call.caller, call.params["processorId"], call.params["workspace"])
