"""/packageManager: package environment of a processor."""

from ._types import (
    EMPTY,
    STRINGS,
    A,
    Endpoint,
    Style,
    model,
    models,
    q,
    qreq,
)

_PROCESSOR_WS = (qreq("processorId"), qreq("workspace"))

ENDPOINTS = (
    Endpoint("package_manager.list_packages", "GET", "/packageManager/listPackages", Style.STATUS, A,
             query=(qreq("name", doc="Processor name."),), response=models("PackageViewModel"),
             statuses=(200, 401, 403, 500), summary="The packages installed in a processor's environment."),
    Endpoint("package_manager.environment_actions", "GET", "/packageManager/environmentActions", Style.STATUS, A,
             query=(qreq("name", doc="Processor name."),), response=STRINGS, statuses=(200, 400, 401, 403, 500),
             summary="The history of environment actions of a processor (main node only)."),
    Endpoint("package_manager.manager_version", "GET", "/packageManager/managerVersion", Style.STATUS, A,
             query=(qreq("name", doc="Processor name."),), response=model("PackageManagerViewModel"),
             statuses=(200, 400, 401, 403, 500), summary="The package manager of a processor and its version."),
    Endpoint("package_manager.update_environment", "GET", "/packageManager/environmentupdate", Style.STATUS, A,
             query=(*_PROCESSOR_WS, q("updateCommand", doc="action/package, e.g. addPackage/numpy/.")),
             response=EMPTY, mutates=True, statuses=(200, 400, 401, 403, 500),
             summary="Queue an environment update of a processor (or just refresh its package list)."),
    Endpoint("package_manager.reset_actions", "GET", "/packageManager/reset", Style.STATUS, A,
             query=_PROCESSOR_WS, response=EMPTY, mutates=True, statuses=(200, 400, 401, 403, 500),
             summary="Delete the environment action history of a processor (main node only)."),
)
