"""/projects: projects and the active project."""

from ._types import (
    SUCCESS,
    A,
    Endpoint,
    Style,
    json_body,
    model,
    models,
    q,
    qbool,
    qreq,
)

ENDPOINTS = (
    Endpoint("projects.list", "GET", "/projects/byuser", Style.STATUS, A,
             query=(qbool("valid", False, doc="Only projects of subscriptions valid now."),),
             response=models("ProjectListViewModel"), statuses=(200, 401, 500),
             summary="The user's projects; the first becomes active when none is."),
    Endpoint("projects.list_by_subscription", "GET", "/projects/bysubscription", Style.STATUS, A,
             query=(qreq("subscription"),), response=models("ProjectListViewModel"),
             statuses=(200, 400, 401, 403, 500), summary="Projects of a subscription."),
    Endpoint("projects.get", "GET", "/projects/byId", Style.STATUS, A, query=(qreq("project"),),
             response=model("ProjectViewModel"), statuses=(200, 400, 401, 403, 500), summary="One project."),
    Endpoint("projects.create", "POST", "/projects/add", Style.STATUS, A, body=json_body("ProjectEditorViewModel"),
             response=SUCCESS, mutates=True, statuses=(200, 401, 403, 500),
             summary="Create a project in a subscription; message is its id."),
    Endpoint("projects.update", "PUT", "/projects/update", Style.STATUS, A,
             body=json_body("ProjectEditorViewModel"), response=SUCCESS, mutates=True,
             statuses=(200, 400, 401, 403, 500), summary="Change a project, or make it the active one."),
    Endpoint("projects.set_active", "PUT", "/projects/active", Style.STATUS, A,
             query=(q("project", doc="Omit to clear the active project."),
                    q("target", doc="A user id; the caller by default.")),
             response=SUCCESS, mutates=True, statuses=(200, 400, 401, 403, 500),
             summary="Set (or clear) the active project, and with it the active subscription."),
    Endpoint("projects.delete", "DELETE", "/projects/delete", Style.STATUS, A, query=(qreq("project"),),
             response=SUCCESS, mutates=True, statuses=(200, 400, 401, 403, 500), summary="Delete a project."),
)
