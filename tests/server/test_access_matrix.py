"""The access matrix, generated from one table of expected outcomes.

Every row names a catalogue endpoint on a shareable resource, how to call it, and which callers it
lets through: the owner (O), a user the resource is shared with for writing (W) or reading (R), a
stranger (S), an admin (A), and a caller with no session (N).  Everyone else must be refused, in
the endpoint's own failure style, which the catalogue declares: a style-A endpoint with a 4xx status and an
``ErrorResponse``, a style-B one with HTTP 200 (or the status its marker names) and its failure marker, a
style-C one with HTTP 200 (or 204) and its empty answer.  Any other refusal fails the cell, a 5xx first of all:
an error the SDK raises is not enough, its answer must be the endpoint's own.  Each cell
creates its own resource (uniquely named) on one server shared by the module, so mutating calls do
not disturb each other and the table stays cheap to run; apps really built (seconds each) are the
exception: one for the calls that read an app, one for those that change it, and one run, per module.
Payments go through the local provider (no network).  A row whose endpoint this server does not route
fails: every endpoint of the contract is routed; and every catalogue endpoint is a row or is listed in
``NOT_ROWS`` with the reason, so a new endpoint fails here until someone decides.
"""

from __future__ import annotations

import collections
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import waitress
from tests.app_support import HELLO_APP, app_settings, app_zip
from tests.conftest import Person, Server
from tests.server.app_fixtures import make_app
from tests.server.geodata import make_geotiff
from tests.server.snap import graph

from wasdi_sdk import WasdiClient
from wasdi_sdk._exceptions import APIError, EmptyResultError
from wasdi_sdk.catalog import ENDPOINTS, Endpoint, FailureKind, Style, endpoint
from wasdi_server.api.framework import HANDLERS
from wasdi_server.dates import now_ms

ROLES = "OWRSAN"
USERS = {"O": "owner@example.org", "W": "writer@example.org", "R": "reader@example.org",
         "S": "stranger@example.org", "A": "root@example.org"}
EXTRA = "extra@example.org"
"""A user with no part in the matrix, the target of share calls."""


class Made(str):
    """A created resource's id; ``parent`` is the id of what it hangs off (a template's app, a
    project's subscription, a review's app), for the calls that need both."""

    parent: str = ""
    shared: str = ""
    """What the sharings go on, when not the resource itself (its parent, or a comment's app)."""
    other: str = ""
    """A second resource the call names, open to every role but the one under test (a run's workspace)."""

    @classmethod
    def of(cls, rid: str, parent: str = "", shared: str = "", other: str = "") -> Made:
        made = cls(rid)
        made.parent, made.shared, made.other = parent, shared, other
        return made


@dataclass(frozen=True)
class Row:
    endpoint: str
    resource: str
    """A key of SHARE: what is created (by the owner, an admin for ADMIN_MADE), and shared W/R, before the call."""
    allowed: str
    """The roles (letters of ROLES) the call succeeds for."""
    query: Callable[[Made], dict[str, Any]] = lambda rid: {}
    body: Callable[[Made], Any] = lambda rid: None
    files: Callable[[Made], Any] = lambda rid: None
    path: Callable[[Made], dict[str, str]] = lambda rid: {}
    passed: int | None = None
    """A status an allowed caller gets once past the access check, the call then failing for a reason of its
    own (a feature this server does not offer); refused callers must get another answer."""
    refusal: Callable[[Any], bool] | None = None
    """Whether an answer means refused, for a style-C endpoint whose refusal is not its failure style's own."""


TABLE: list[Row] = [
    # workspaces: read calls are open to every sharing, changes to write sharings; deleting as a
    # non-owner removes only the caller's own sharing (so it succeeds for W and R too).
    Row("workspaces.get", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    Row("workspaces.name_by_id", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    Row("workspaces.share_list", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    Row("workspaces.update", "workspace", "OWA", body=lambda ws: {"workspaceId": ws, "name": f"renamed-{ws}"}),
    Row("workspaces.share_add", "workspace", "OWA", lambda ws: {"workspace": ws, "userId": EXTRA, "rights": "read"}),
    # removing the reader's sharing: anyone with write rights, and the reader itself
    Row("workspaces.share_delete", "workspace", "OWRA", lambda ws: {"workspace": ws, "userId": USERS["R"]}),
    Row("workspaces.delete", "workspace", "OWRA", lambda ws: {"workspace": ws}),
    # organizations
    Row("organizations.get", "organization", "OWRA", lambda org: {"organization": org}),
    Row("organizations.share_list", "organization", "OWRA", lambda org: {"organization": org}),
    Row("organizations.update", "organization", "OWA",
        body=lambda org: {"organizationId": org, "name": f"renamed-{org}"}),
    Row("organizations.share_add", "organization", "OWA",
        lambda org: {"organization": org, "userId": EXTRA, "rights": "read"}),
    Row("organizations.share_delete", "organization", "OWRA",
        lambda org: {"organization": org, "userId": USERS["R"]}),
    Row("organizations.delete", "organization", "OWRA", lambda org: {"organization": org}),
    # styles (private ones: a public style is readable by anyone)
    Row("styles.get_xml", "style", "OWRA", lambda sid: {"styleId": sid}),
    Row("styles.share_list", "style", "OWRA", lambda sid: {"styleId": sid}),
    Row("styles.update_params", "style", "OWA", lambda sid: {"styleId": sid, "description": "changed"}),
    Row("styles.share_add", "style", "OWA", lambda sid: {"styleId": sid, "userId": EXTRA, "rights": "read"}),
    # contract: "allowed for the shared user, owner or admin" (not for other writers, unlike workspaces)
    Row("styles.share_delete", "style", "ORA", lambda sid: {"styleId": sid, "userId": USERS["R"]}),
    Row("styles.delete", "style", "OWRA", lambda sid: {"styleId": sid}),
    # workflows: contract "share/delete allowed for owner, the shared user, admin"
    Row("workflows.get_xml", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    Row("workflows.download", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    Row("workflows.share_list", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    Row("workflows.update_params", "workflow", "OWA", lambda wf: {"workflowid": wf, "description": "changed"}),
    Row("workflows.update_xml", "workflow", "OWA", lambda wf: {"workflowId": wf},
        body=lambda wf: graph(writes=("Write", "Write(2)")).decode()),  # a changed graph: the same one is a 304
    Row("workflows.share_add", "workflow", "OWA", lambda wf: {"workflowId": wf, "userId": EXTRA, "rights": "read"}),
    Row("workflows.share_delete", "workflow", "ORA", lambda wf: {"workflowId": wf, "userId": USERS["R"]}),
    Row("workflows.delete", "workflow", "OWRA", lambda wf: {"workflowId": wf}),
    # apps (processors); the record's id is also its name, so the calls by name name the same app
    Row("processors.get", "app", "OWRA", lambda app: {"processorId": app}),
    Row("processors.share_list", "app", "OWRA", lambda app: {"processorId": app}),
    Row("processors.get_ui", "app", "OWRA", lambda app: {"name": app}),
    Row("processors.build_logs", "app", "OWRA", lambda app: {"processorId": app}),
    Row("processors.update", "app", "OWA", lambda app: {"processorId": app},
        body=lambda app: {"processorId": app, "processorName": app, "processorDescription": "changed"}),
    Row("processors.save_ui", "app", "OWA", lambda app: {"name": app}, body=lambda app: '{"tabs": []}'),
    Row("processors.clear_build_flag", "app", "OWA", lambda app: {"processorId": app}),
    Row("processors.share_add", "app", "OWA", lambda app: {"processorId": app, "userId": EXTRA, "rights": "read"}),
    Row("processors.delete", "app", "OWRA", lambda app: {"processorId": app}),
    Row("package_manager.environment_actions", "app", "OWRA", lambda app: {"name": app}),
    # parameter templates (of a public app: only the template's sharing decides)
    Row("param_templates.get", "template", "OWRA", lambda t: {"templateId": t}),
    Row("param_templates.share_list", "template", "OWRA", lambda t: {"processorParametersTemplate": t}),
    Row("param_templates.update", "template", "OWA",
        body=lambda t: {"templateId": t, "processorId": t.parent, "name": "changed"}),
    Row("param_templates.share_add", "template", "OWA",
        lambda t: {"processorParametersTemplate": t, "userId": EXTRA, "rights": "read"}),
    Row("param_templates.delete", "template", "OWRA", lambda t: {"templateId": t}),
    # subscriptions: contract "share/delete allowed for owner, writer, admin"
    Row("subscriptions.get", "subscription", "OWRA", lambda sub: {"subscription": sub}),
    Row("subscriptions.share_list", "subscription", "OWRA", lambda sub: {"subscription": sub}),
    Row("subscriptions.update", "subscription", "OWA",
        body=lambda sub: {"subscriptionId": sub, "name": f"renamed-{sub}", "typeId": "OneMonthStandard"}),
    Row("subscriptions.share_add", "subscription", "OWA",
        lambda sub: {"subscription": sub, "userId": EXTRA, "rights": "read"}),
    # removing the reader's sharing: the contract names owner, writer and admin, and the reader itself may
    # drop its own sharing (as everywhere, domains/accounts/sharing.py; DELETE /subscriptions/delete does the same)
    Row("subscriptions.share_delete", "subscription", "OWRA", lambda sub: {"subscription": sub, "userId": USERS["R"]}),
    Row("subscriptions.delete", "subscription", "OWRA", lambda sub: {"subscription": sub}),
    # projects, through their subscription (the one POST /subscriptions/add creates with it)
    Row("projects.get", "project", "OWRA", lambda pr: {"project": pr}),
    Row("projects.list_by_subscription", "project", "OWRA", lambda pr: {"subscription": pr.parent}),
    Row("projects.create", "project", "OWA", body=lambda pr: {"subscriptionId": pr.parent, "name": f"new-{pr}"}),
    Row("projects.update", "project", "OWA",
        body=lambda pr: {"projectId": pr, "subscriptionId": pr.parent, "name": f"renamed-{pr}"}),
    Row("projects.delete", "project", "OWA", lambda pr: {"project": pr}),
    # nodes: admin only, even for the users a node is shared with
    Row("nodes.get", "node", "A", lambda n: {"node": n}),
    Row("nodes.update", "node", "A", body=lambda n: {"nodeCode": n, "nodeDescription": "changed"}),
    Row("nodes.share_add", "node", "A", lambda n: {"node": n, "userId": EXTRA, "rights": "read"}),
    Row("nodes.delete", "node", "A", lambda n: {"node": n}),
    # reviews and comments, reached through their app; only their author deletes them
    Row("processor_media.add_review", "app", "OWRA", body=lambda app: {"processorId": app, "vote": 4.0}),
    Row("processor_media.list_reviews", "review", "OWRA", lambda rv: {"processorName": rv.parent}),
    Row("processor_media.delete_review", "review", "O", lambda rv: {"processorId": rv.parent, "reviewId": rv}),
    Row("processor_media.add_comment", "review", "OWRA", body=lambda rv: {"reviewId": rv, "text": "agreed"}),
    Row("processor_media.list_comments", "review", "OWRA", lambda rv: {"reviewId": rv}),
    # products, through their workspace (parent: a product's file name in it)
    Row("products.get", "product", "OWRA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.list", "product", "OWRA", lambda ws: {"workspace": ws}),
    Row("products.get_metadata", "product", "OWRA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.list_light", "product", "OWRA", lambda ws: {"workspace": ws}),
    Row("products.list_names", "product", "OWRA", lambda ws: {"workspace": ws}),
    Row("products.update", "product", "OWA", lambda ws: {"workspace": ws},
        body=lambda ws: {"fileName": ws.parent, "description": "changed"}),
    Row("products.add_to_workspace", "product", "OWA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.delete", "product", "OWA", lambda ws: {"workspace": ws, "name": ws.parent}),
    Row("products.delete_many", "product", "OWA", lambda ws: {"workspace": ws}, body=lambda ws: [ws.parent]),
    # processes, through their workspace (parent); stopping: "the caller owns the process, is admin, or can
    # write its workspace" (gaps.md), and so for the calls that change a process record
    Row("processes.get", "process", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get_status", "process", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get_payload", "process", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.list_by_workspace", "process", "OWRA", lambda pid: {"workspace": pid.parent}),
    Row("processes.last_by_workspace", "process", "OWRA", lambda pid: {"workspace": pid.parent}),
    Row("processes.update_status", "process", "OWA", lambda pid: {"procws": pid, "status": "DONE", "perc": 100}),
    Row("processes.set_payload_by_query", "process", "OWA", lambda pid: {"procws": pid, "payload": '{"b": 2}'}),
    Row("processes.stop", "process", "OWA", lambda pid: {"procws": pid}),
    Row("processes.set_payload", "process", "OWA", lambda pid: {"procws": pid}, body=lambda pid: '{"c": 3}'),
    Row("processes.set_sub_pid", "process", "OWA", lambda pid: {"procws": pid, "subpid": 42}),
    Row("products.upload_without_ingest", "product", "OWA", lambda ws: {"workspace": ws, "name": "more.txt"},
        files=lambda ws: {"file": ("more.txt", b"more")}),
    Row("workflows.update_file", "workflow", "OWA", lambda wf: {"workflowid": wf},
        files=lambda wf: {"file": ("graph.xml", graph(writes=("Write", "Write(2)")))}),
    # reviews and comments: only their author changes them (the contract names no other)
    Row("processor_media.update_review", "review", "O",
        body=lambda rv: {"id": rv, "processorId": rv.parent, "vote": 3.0}),
    Row("processor_media.update_comment", "comment", "O",
        body=lambda c: {"commentId": c, "reviewId": c.parent, "text": "changed"}),
    Row("processor_media.delete_comment", "comment", "O", lambda c: {"reviewId": c.parent, "commentId": c}),
    # a node's sharings: listed for the users it is shared with (the contract makes only the node's own
    # calls and share/add admin-only); a sharing is removed by an admin or by the user it names
    Row("nodes.share_list", "node", "WRA", lambda n: {"node": n}),
    Row("nodes.share_delete", "node", "RA", lambda n: {"node": n, "userId": USERS["R"]}),
    # more app calls by name
    Row("processors.help", "app", "OWRA", lambda app: {"name": app}),
    Row("processors.market_detail", "app", "OWRA", lambda app: {"processorname": app}),
    Row("package_manager.manager_version", "app", "OWRA", lambda app: {"name": app}),
    # not an access check: "free, owner, shared or paid" says whether the caller can run it (no 403 listed)
    Row("processors.is_app_purchased", "app", "OWRSA", lambda app: {"processor": app}),
    Row("workflows.get_by_name", "workflow", "OWRA", lambda wf: {"name": wf.parent}),
    # style files (a changed SLD: the same one is a 304); by name, a style's name is its parent
    Row("styles.update_file", "style", "OWA", lambda sid: {"styleId": sid},
        files=lambda sid: {"file": ("style.sld", SLD_CHANGED)}),
    Row("styles.update_xml", "style", "OWA", lambda sid: {"styleId": sid},
        body=lambda sid: {"styleXml": SLD_CHANGED.decode()}),
    Row("styles.download", "style", "OWRA", lambda sid: {"styleId": sid}),
    Row("styles.download_by_name", "style", "OWRA", lambda sid: {"style": sid.parent}),
    # images of a private app, organization and style: read with any sharing, written with write rights
    Row("images.get", "app_image", "OWRA", lambda app: {"collection": "processors", "folder": app, "name": "pic.png"}),
    Row("images.exists", "app_image", "OWRA",
        lambda app: {"collection": "processors", "folder": app, "name": "pic.png"}),
    Row("images.upload", "app", "OWA", lambda app: {"collection": "processors", "folder": app, "name": "new.png"},
        files=lambda app: {"image": ("new.png", PNG)}),
    Row("images.delete", "app_image", "OWA",
        lambda app: {"collection": "processors", "folder": app, "name": "pic.png"}),
    Row("images.upload_processor_logo", "app", "OWA", lambda app: {"processorId": app},
        files=lambda app: {"image": ("logo.png", PNG)}),
    Row("images.upload_gallery_image", "app", "OWA", lambda app: {"processorId": app},
        files=lambda app: {"image": ("shot.png", PNG)}),
    Row("images.get", "org_image", "OWRA",
        lambda org: {"collection": "organizations", "folder": org, "name": "pic.png"}),
    Row("images.delete", "org_image", "OWA",
        lambda org: {"collection": "organizations", "folder": org, "name": "pic.png"}),
    Row("images.get", "style_image", "OWRA", lambda sid: {"collection": "styles", "name": f"{sid.parent}.png"}),
    Row("images.upload", "style", "OWA", lambda sid: {"collection": "styles", "name": f"{sid.parent}.png"},
        files=lambda sid: {"image": ("preview.png", PNG)}),
    # products and files in a workspace (the /catalog calls the official library and the web client make)
    Row("products.upload", "product", "OWA", lambda ws: {"workspace": ws, "name": "up.txt"},
        files=lambda ws: {"file": ("up.txt", b"uploaded")}),
    Row("files.check_available", "product", "OWRA", lambda ws: {"workspace": ws, "filename": ws.parent}),
    Row("files.download", "product", "OWRA", lambda ws: {"workspace": ws, "filename": ws.parent}),
    Row("files.on_node", "product", "OWRA", lambda ws: {"workspace": ws, "filename": ws.parent}),
    Row("files.properties", "product", "OWRA", lambda ws: {"workspace": ws, "file": ws.parent}),
    Row("files.ingest", "product", "OWA", lambda ws: {"workspace": ws, "file": ws.parent}),
    Row("files.ingest_upload", "upload", "OWA", lambda ws: {"workspace": ws, "file": ws.parent}),
    # transfers run as operations of the workspace, so they need write access (the export is queued, then
    # refused by the outbound guard: loopback); a copy into the caller's transfer folder needs a transfer
    # account, which the matrix's users do not have: getting that answer (400) means the permission check passed
    Row("files.ftp_upload", "product", "OWA", lambda ws: {"workspace": ws},
        body=lambda ws: {"fileName": ws.parent, "server": "127.0.0.1"}),
    Row("files.copy_to_sftp", "product", "OWA", lambda ws: {"workspace": ws, "file": ws.parent}, passed=400),
    # notebooks: read access to see whether one is up, write access to start one (it writes the folder); the
    # cells start none (the test hides JupyterLab: "install the extra"), test_notebooks.py starts real ones
    Row("console.ready", "workspace", "OWRA", lambda ws: {"workspaceId": ws}),
    Row("console.create", "workspace", "OWA", lambda ws: {"workspaceId": ws}, passed=501),
    # stopping stops only the caller's own lab: whoever may read the workspace may stop theirs
    Row("console.terminate", "workspace", "OWRA", lambda ws: {"workspaceId": ws}),
    # the file buffer: sharing a product needs read on the origin and write on the destination
    Row("file_buffer.share", "product", "OWRA",
        lambda ws: {"originWorkspaceId": ws, "destinationWorkspaceId": ws.other, "productName": ws.parent}),
    Row("file_buffer.share", "destination", "OWA",
        lambda ws: {"originWorkspaceId": ws.other, "destinationWorkspaceId": ws, "productName": ws.parent}),
    # (a file:// import from the server's own import folder, the one place such an import may read)
    Row("file_buffer.import_product", "import", "OWA",
        body=lambda ws: {"fileUrl": ws.other, "name": "matrix.tif", "workspace": ws}),
    Row("file_buffer.import_product_by_query", "import", "OWA",
        lambda ws: {"fileUrl": ws.other, "name": "matrix.tif", "workspace": ws}),
    Row("file_buffer.publish_band", "product", "OWRA",
        lambda ws: {"workspace": ws, "fileUrl": ws.parent, "band": "band_2"}),
    # processes: a processor run's parameters, several statuses at once (ERROR is the refusal), the logs
    Row("processes.get_params", "run", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get_statuses", "process", "OWRA", body=lambda pid: [pid],
        refusal=lambda answer: answer in ([], ["ERROR"])),
    # (the workspace has a RUNNING process of the owner's: a refusal is the default model, all zeros)
    Row("processes.summary", "running", "OWRA", lambda pid: {"workspace": pid.parent},
        refusal=lambda answer: not any(answer.model_dump().values())),
    Row("processors.add_log", "process", "OWA", lambda pid: {"processworkspace": pid}, body=lambda pid: "a line"),
    Row("processors.count_logs", "process", "OWRA", lambda pid: {"processworkspace": pid}),
    Row("processors.list_logs", "process", "OWRA", lambda pid: {"processworkspace": pid}),
    # workflow runs: read on the workflow and write on the workspace (each in turn the resource under test)
    Row("workflows.run", "workflow_run", "OWRA", lambda wf: {"workspace": wf.other},
        body=lambda wf: {"workflowId": wf, "inputFileNames": ["placed.tif"], "outputFileNames": ["out.tif"]}),
    Row("workflows.run", "workflow_workspace", "OWA", lambda ws: {"workspace": ws},
        body=lambda ws: {"workflowId": ws.other, "inputFileNames": ["placed.tif"], "outputFileNames": ["out.tif"]}),
    # more app calls
    Row("processors.share_delete", "app", "OWRA", lambda app: {"processorId": app, "userId": USERS["R"]}),
    Row("processors.update_details", "app", "OWA", lambda app: {"processorId": app},
        body=lambda app: {"friendlyName": "Changed"}),
    Row("processors.credits_for_run", "app", "OWRA", lambda app: {"processorId": app}, body=lambda app: "{}"),
    Row("param_templates.create", "app", "OWRA", body=lambda app: {"processorId": app, "name": f"t-{app}"}),
    Row("param_templates.list", "app", "OWRA", lambda app: {"processorId": app}),
    Row("param_templates.share_delete", "template", "OWRA",
        lambda t: {"processorParametersTemplate": t, "userId": USERS["R"]}),
    Row("processes.app_stats", "app", "OWRA", lambda app: {"processorName": app}),
    # projects: making one's own active project one the caller can read
    Row("projects.set_active", "project", "OWRA", lambda pr: {"project": pr}),
    # ... and another user's (the reader's): only that user and admins ("other users need admin")
    Row("projects.set_active", "project", "RA", lambda pr: {"project": pr, "target": USERS["R"]}),
    # the generic resource-permission calls are the admins' (owners share through each type's own calls)
    Row("admin.list_resource_permissions", "workspace", "A",
        lambda ws: {"resourceType": "WORKSPACE", "resourceId": ws}),
    Row("admin.add_resource_permission", "workspace", "A",
        lambda ws: {"resourceType": "WORKSPACE", "resourceId": ws, "userId": EXTRA, "rights": "read"}),
    Row("admin.remove_resource_permission", "workspace", "A",
        lambda ws: {"resourceType": "WORKSPACE", "resourceId": ws, "userId": USERS["R"]}),
    # payments (the local provider): an app purchase, a credit package, a subscription
    Row("processors.add_app_payment", "paid_app", "OWRA",
        body=lambda app: {"paymentName": "one run", "processorId": app, "buyDate": BUY_DATE}),
    Row("processors.get_app_payment", "app_payment", "OA", lambda pay: {"appPayment": pay}),
    Row("processors.payment_url", "app_payment", "O", lambda pay: {"processor": pay.parent, "appPayment": pay},
        path=lambda pay: {"payprov": "local"}),
    Row("processors.confirm_payment", "app_checkout", "OWRSAN",
        path=lambda cs: {"payprov": "local", "CHECKOUT_SESSION_ID": cs}),
    Row("credits.payment_url", "credit_package", "O", lambda pkg: {"creditPackageId": pkg},
        path=lambda pkg: {"payprov": "local"}),
    Row("credits.confirm_payment", "credit_checkout", "OWRSAN",
        path=lambda cs: {"payprov": "local", "CHECKOUT_SESSION_ID": cs}),
    # paying for a subscription needs read access to it (domains/commerce/subscriptions.py; the contract names no right)
    Row("subscriptions.payment_url", "subscription", "OWRA", lambda sub: {"subscription": sub},
        path=lambda sub: {"payprov": "local"}),
    Row("subscriptions.confirm_payment", "subscription_checkout", "OWRSAN",
        path=lambda cs: {"payprov": "local", "CHECKOUT_SESSION_ID": cs}),
    # an app really built (its folder, environment and build log on disk), shared by the cells that only read
    # it; runs go to a workspace everyone may write, so only the app's sharing decides
    Row("processors.run", "built_app", "OWRA", lambda app: {"name": app, "workspace": app.other},
        body=lambda app: '{"name": "matrix"}'),
    Row("processors.run_by_query", "built_app", "OWRA",
        lambda app: {"name": app, "workspace": app.other, "encodedJson": "{}"}),
    Row("processors.download", "built_app", "OWRA", lambda app: {"processorId": app.parent}),
    Row("processors.get_cwl", "built_app", "OWRA", lambda app: {"processorName": app}),
    Row("processors.help", "built_app", "OWRA", lambda app: {"name": app}),
    Row("processors.build_logs", "built_app", "OWRA", lambda app: {"processorId": app.parent}),
    Row("package_manager.list_packages", "built_app", "OWRA", lambda app: {"name": app}),
    Row("package_manager.manager_version", "built_app", "OWRA", lambda app: {"name": app}),
    Row("package_manager.environment_actions", "built_app", "OWRA", lambda app: {"name": app}),
    Row("processors.get_ui", "built_app", "OWRA", lambda app: {"name": app}),
    # a new app's deployment is listed in a workspace the uploader may read
    Row("processors.upload", "workspace", "OWRA", lambda ws: {"name": f"upload{ws.replace('-', '')[:16]}",
                                                             "workspace": ws},
        files=lambda ws: {"file": ("app.zip", app_zip({"myProcessor.py": HELLO_APP}))}),
    # replacing an app's files by uploading under its name again ("force"): its owner and admins only; anyone
    # else finds the name taken
    Row("processors.upload", "app", "OA", lambda app: {"name": app, "force": True},
        files=lambda app: {"file": ("app.zip", app_zip({"myProcessor.py": HELLO_APP}))}),
    # a real run of the built app, in a workspace shared W and R: its logs, parameters and payload
    Row("processors.count_logs", "app_run", "OWRA", lambda pid: {"processworkspace": pid}),
    Row("processors.list_logs", "app_run", "OWRA", lambda pid: {"processworkspace": pid}),
    Row("processes.get_params", "app_run", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get_payload", "app_run", "OWRA", lambda pid: {"procws": pid}),
    Row("processes.get", "app_run", "OWRA", lambda pid: {"procws": pid}),
    # changes to a built app's files and environment (a second app, so the readers above are not disturbed)
    Row("processors.update_files", "rebuilt_app", "OWA", lambda app: {"processorId": app.parent},
        files=lambda app: {"file": ("help.txt", b"changed help")}),
    Row("processors.save_ui", "rebuilt_app", "OWA", lambda app: {"name": app}, body=lambda app: '{"tabs": []}'),
    Row("processors.redeploy", "rebuilt_app", "OWA", lambda app: {"processorId": app.parent}),
    Row("processors.update_libraries", "rebuilt_app", "OWA", lambda app: {"processorId": app.parent}),
    Row("package_manager.update_environment", "rebuilt_app", "OWA",
        lambda app: {"processorId": app.parent, "workspace": app.other}),
    Row("package_manager.update_environment", "rebuilt_app", "OWA",
        lambda app: {"processorId": app.parent, "workspace": app.other, "updateCommand": "addPackage/six"}),
    Row("package_manager.update_environment", "rebuilt_app", "OWA",
        lambda app: {"processorId": app.parent, "workspace": app.other, "updateCommand": "removePackage/six"}),
    Row("package_manager.reset_actions", "rebuilt_app", "OWA",
        lambda app: {"processorId": app.parent, "workspace": app.other}),
    # a user's own records: the owner's running time is theirs and an admin's to read; another account is
    # an admin's to read, change and delete
    Row("processes.running_time_by_user", "own_account", "OA", lambda uid: {"userId": uid}),
    Row("images.upload", "own_account", "OA", lambda uid: {"collection": "users", "folder": uid, "name": "me.png"},
        files=lambda uid: {"image": ("me.png", PNG)}),
    Row("images.get", "avatar", "OA", lambda uid: {"collection": "users", "folder": uid, "name": "avatar.png"}),
    Row("images.exists", "avatar", "OA", lambda uid: {"collection": "users", "folder": uid, "name": "avatar.png"}),
    Row("images.delete", "avatar", "OA", lambda uid: {"collection": "users", "folder": uid, "name": "avatar.png"}),
    Row("admin.get_user", "account", "A", lambda uid: {"userId": uid}),
    Row("admin.update_user", "account", "A", body=lambda uid: {"userId": uid, "name": "Changed"}),
    Row("admin.delete_user", "account", "A", lambda uid: {"userId": uid}),
]

SLD = (b'<?xml version="1.0" encoding="UTF-8"?>\n<StyledLayerDescriptor version="1.0.0" '
       b'xmlns="http://www.opengis.net/sld"><NamedLayer><Name>x</Name><UserStyle><FeatureTypeStyle><Rule>'
       b'<RasterSymbolizer><ColorMap type="ramp"><ColorMapEntry color="#ff0000" quantity="0"/>'
       b'<ColorMapEntry color="#0000ff" quantity="1"/></ColorMap></RasterSymbolizer></Rule></FeatureTypeStyle>'
       b"</UserStyle></NamedLayer></StyledLayerDescriptor>")
SLD_CHANGED = SLD.replace(b"#0000ff", b"#00ff00")
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
BUY_DATE = "2026-11-23T10:00:00.000Z"
OPEN_TO = "WRS"
"""Who gets rights on a call's second workspace (``Made.other``), so that only the first resource decides."""


def open_to_all(owner: WasdiClient, workspace: str, rights: str = "write") -> None:
    """Share a run's second workspace with every role under test, so that it decides nothing."""
    for letter in OPEN_TO:
        owner.call("workspaces.share_add", query={"workspace": workspace, "userId": USERS[letter], "rights": rights})


def paid(server: Server, url: str) -> str:
    """The checkout session a local-provider checkout URL names, paid (what the provider's page does)."""
    session_id = url.rstrip("/").rsplit("/", 1)[-1]
    assert server.services.payments.get("local").pay(session_id) is not None
    return session_id


def create(server: Server, owner: WasdiClient, admin: WasdiClient, kind: str, tag: str) -> Made:
    made = create_composite(server, owner, admin, kind, tag)
    return made if made is not None else create_simple(server, owner, admin, kind, tag)


def create_composite(server: Server, owner: WasdiClient, admin: WasdiClient, kind: str, tag: str) -> Made | None:
    """Kinds built from others: images, checkouts, runs naming two resources, built apps."""
    if kind in ("built_app", "rebuilt_app"):
        if kind not in BUILT:
            BUILT[kind] = build_app(server, owner, admin, f"matrix{kind.replace('_', '')}")
        return BUILT[kind]
    if kind == "app_run":
        if kind not in BUILT:
            BUILT[kind] = run_app(server, owner, admin, create(server, owner, admin, "built_app", tag))
        return BUILT[kind]
    if kind in ("app_image", "org_image", "style_image"):
        base = create(server, owner, admin, {"app_image": "app", "org_image": "organization"}.get(kind, "style"), tag)
        collection, folder, name = {"app_image": ("processors", base, "pic.png"),
                                    "org_image": ("organizations", base, "pic.png")}.get(
            kind, ("styles", None, f"{base.parent}.png"))
        owner.call("images.upload", query={"collection": collection, "folder": folder, "name": name},
                   files={"image": (name, PNG)})
        return base
    if kind == "app_payment":
        app = create_parent(server, owner, admin, "paid_app", tag)
        pay = owner.call("processors.add_app_payment", body={"paymentName": "one run", "processorId": app,
                                                               "buyDate": BUY_DATE}).message
        return Made.of(pay, parent=app, shared=app)
    if kind == "app_checkout":
        pay = create(server, owner, admin, "app_payment", tag)
        url = owner.call("processors.payment_url", path={"payprov": "local"},
                         query={"processor": pay.parent, "appPayment": pay}).message
        return Made.of(paid(server, url), shared=pay.parent)
    if kind in ("credit_package", "credit_checkout"):
        pkg = owner.call("credits.create", body={"name": f"matrixcredits{tag}", "type": "Fifty"}).message
        if kind == "credit_package":
            return Made(pkg)
        url = owner.call("credits.payment_url", path={"payprov": "local"}, query={"creditPackageId": pkg}).message
        return Made(paid(server, url))
    if kind == "subscription_checkout":
        sub = create_parent(server, owner, admin, "subscription", tag)
        url = owner.call("subscriptions.payment_url", path={"payprov": "local"}, query={"subscription": sub}).message
        return Made.of(paid(server, url), shared=sub)
    if kind == "workflow_run":
        workflow = create(server, owner, admin, "workflow", tag)
        workspace = create_product(server, owner, tag + "run")
        open_to_all(owner, workspace)
        return Made.of(workflow, parent=workflow.parent, other=workspace)
    if kind == "workflow_workspace":
        name = f"matrixpublicgraph{tag}"
        owner.call("workflows.upload", query={"name": name, "public": True}, files={"file": ("graph.xml", graph())})
        doc = server.services.workflows.workflows.find_one(lambda d: d["name"] == name)
        return Made.of(create_product(server, owner, tag), other=doc["workflowId"])
    if kind in ("product", "destination"):
        # the product's workspace, and a second one: the destination of a share open to everyone, or the
        # origin (read by everyone) of a share into the workspace under test
        product = create_product(server, owner, tag)
        second = create_parent(server, owner, admin, "workspace", tag + "second")
        if kind == "product":
            open_to_all(owner, second)
            return Made.of(product, parent=product.parent, other=second)
        open_to_all(owner, product, rights="read")
        return Made.of(second, parent=product.parent, other=product)
    if kind == "own_account":
        return Made(USERS["O"])
    if kind == "avatar":
        # the owner's picture, uploaded again for each cell (a delete cell removes it)
        owner.call("images.upload", query={"collection": "users", "folder": USERS["O"], "name": "avatar.png"},
                   files={"image": ("avatar.png", PNG)})
        return Made(USERS["O"])
    if kind == "account":
        return Made(server.add_user(f"matrixuser{tag}@example.org").user_id)
    if kind == "import":
        source = Path(server.settings.data_dir) / "imports" / f"source{tag}.txt"
        source.parent.mkdir(parents=True, exist_ok=True)
        source.write_bytes(b"imported")
        return Made.of(create_parent(server, owner, admin, "workspace", tag), other=source.as_uri())
    if kind == "upload":
        # a file in every caller's own upload (file-transfer) folder, to be moved into the workspace
        name = f"upload{tag}.txt"
        for uid in USERS.values():
            folder = server.services.uploads.folder(uid)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / name).write_bytes(b"uploaded")
        return Made.of(create_parent(server, owner, admin, "workspace", tag), parent=name)
    return None


BUILT: dict[str, Made] = {}
"""The built apps of the module's server, by kind (building one costs seconds: one of each per module)."""
APP_FILES = {"myProcessor.py": HELLO_APP, "help.txt": "how to use it", "README.md": "read me",
             "matrixapp.cwl": "cwlVersion: v1.0"}


def build_app(server: Server, owner: WasdiClient, admin: WasdiClient, name: str) -> Made:
    """An app uploaded by the owner and built (offline, from the test wheelhouse), shared W and R, with a
    workspace everyone may write for its runs; ``parent`` is its processor id."""
    process_id = owner.call("processors.upload", query={"name": name},
                            files={"file": (f"{name}.zip", app_zip(APP_FILES))}).string_value
    wait_for(server, process_id)
    doc = server.services.apps.records.by_name(name)
    assert doc["deployed"], f"building {name} failed: see its build log"
    for letter, rights in (("W", "write"), ("R", "read")):
        owner.call("processors.share_add", query={"processorId": doc["processorId"], "userId": USERS[letter],
                                                  "rights": rights})
    workspace = create_parent(server, owner, admin, "workspace", name)
    open_to_all(owner, workspace)
    return Made.of(name, parent=doc["processorId"], other=workspace)


def run_app(server: Server, owner: WasdiClient, admin: WasdiClient, app: Made) -> Made:
    """One run of a built app by the owner, ended, in a workspace shared W and R; ``parent``: the workspace."""
    workspace = create_parent(server, owner, admin, "workspace", f"{app}run")
    for letter, rights in (("W", "write"), ("R", "read")):
        owner.call("workspaces.share_add", query={"workspace": workspace, "userId": USERS[letter], "rights": rights})
    run = owner.call("processors.run", query={"name": app, "workspace": workspace}, body='{"name": "matrix"}')
    process_id = str(run.process_id)
    assert wait_for(server, process_id) == "DONE", f"the run of {app} failed: see its logs"
    assert owner.call("processors.count_logs", query={"processworkspace": process_id}) > 0
    return Made.of(process_id, parent=workspace)


def wait_for(server: Server, process_id: str) -> str:
    """The final status of a process, waited for (an app build or run: seconds)."""
    end = time.monotonic() + 300
    while (status := server.services.processes.get(process_id)["status"]) not in ("DONE", "ERROR", "STOPPED"):
        assert time.monotonic() < end, f"{process_id} did not end"
        time.sleep(0.1)
    return str(status)


def create_product(server: Server, owner: WasdiClient, tag: str) -> Made:
    """A workspace with a file placed in its folder and linked (synchronously, no INGEST to wait for)."""
    rid = str(owner.call("workspaces.create", query={"name": f"matrix{tag}"}).string_value)
    workspaces = server.services.workspaces
    make_geotiff(workspaces.folder(workspaces.load(rid)) / "placed.tif")
    owner.call("products.add_to_workspace", query={"workspace": rid, "name": "placed.tif"})
    return Made.of(rid, parent="placed.tif")


def create_simple(server: Server, owner: WasdiClient, admin: WasdiClient, kind: str, tag: str) -> Made:
    if kind == "comment":
        review = create(server, owner, admin, "review", tag)
        owner.call("processor_media.add_comment", body={"reviewId": review, "text": "first"})
        comment = server.services.store.collection("review_comments").find_one(lambda d: d["reviewId"] == review)
        return Made.of(comment["commentId"], parent=review, shared=review.shared)
    rid = create_parent(server, owner, admin, kind, tag)
    if kind == "template":
        owner.call("param_templates.create", body={"processorId": rid, "name": f"t{tag}"})
        made = owner.call("param_templates.list", query={"processorId": rid})[0].template_id
        return Made.of(made, parent=rid)
    if kind == "project":
        return Made.of(owner.call("projects.list_by_subscription", query={"subscription": rid})[0].project_id,
                       parent=rid, shared=rid)
    if kind in ("process", "run", "running"):
        # a stored record (an ingestion, a processor run with its parameters, or one RUNNING on another node,
        # so that it takes no place of this node's launcher): the launcher never picks these up, so every
        # cell sees it as made
        pid = f"matrixproc{tag}"
        stamp = float(now_ms())
        server.services.store.collection("process_workspaces").insert({
            "processObjId": pid, "workspaceId": rid, "userId": USERS["O"], "productName": "file.tif",
            "operationType": "RUNPROCESSOR" if kind == "run" else "INGEST", "operationSubType": "",
            "status": "RUNNING" if kind == "running" else "DONE", "progressPerc": 100, "payload": '{"a": 1}',
            "pid": 0, "parentId": None, "nodeCode": "elsewhere" if kind == "running" else "wasdi",
            "operationTimestamp": stamp, "runningTime": 0, "lastStateChangeTimestamp": stamp,
            **({"parameter": {"name": "matrix"}} if kind == "run" else {})})
        server.services.process_logs.write(pid, "a line of the run")  # so that a refused listing is told apart
        return Made.of(pid, parent=rid, shared=rid)
    if kind == "review":
        owner.call("processor_media.add_review", body={"processorId": rid, "vote": 5.0})
        review = server.services.store.collection("reviews").find_one(lambda d: d["processorId"] == rid)
        return Made.of(review["reviewId"], parent=rid, shared=rid)
    return rid if isinstance(rid, Made) else Made(rid)


def create_parent(server: Server, owner: WasdiClient, admin: WasdiClient, kind: str, tag: str) -> str:
    if kind in ("workspace", "process", "run", "running", "import"):
        return str(owner.call("workspaces.create", query={"name": f"matrix{tag}"}).string_value)
    if kind == "organization":
        return str(owner.call("organizations.create", body={"name": f"matrix-org{tag}"}).message)
    if kind == "style":
        name = f"matrixstyle{tag}"
        return Made.of(str(owner.call("styles.upload", query={"name": name, "public": False},
                                      files={"file": ("style.sld", SLD)}).string_value), parent=name)
    if kind == "workflow":
        name = f"matrixgraph{tag}"
        owner.call("workflows.upload", query={"name": name}, files={"file": ("graph.xml", graph())})
        doc = server.services.workflows.workflows.find_one(lambda d: d["name"] == name)
        return Made.of(doc["workflowId"], parent=name)
    if kind in ("app", "review"):
        return str(make_app(server, OWNER, f"matrixapp{tag}", processorId=f"matrixapp{tag}")["processorId"])
    if kind == "paid_app":
        return str(make_app(server, OWNER, f"matrixpaidapp{tag}", processorId=f"matrixpaidapp{tag}",
                            ondemandPrice=2.5)["processorId"])
    if kind == "template":
        # a template of a public app, so that only the template's own sharing decides
        return str(make_app(server, OWNER, f"matrixtemplapp{tag}", isPublic=1)["processorId"])
    if kind == "node":
        admin.call("nodes.create", body={"nodeCode": f"matrixnode{tag}", "apiUrl": "http://127.0.0.1:1/"})
        return f"matrixnode{tag}"
    if kind in ("subscription", "project"):
        return str(owner.call("subscriptions.create", body={"typeId": "OneMonthStandard",
                                                            "name": f"matrixsub{tag}"}).message)
    raise AssertionError(kind)


OWNER = Person(USERS["O"], "")
"""The owner as app records name it (make_app reads only its user id)."""
SHARE: dict[str, tuple[str, str] | None] = {"workspace": ("workspaces.share_add", "workspace"),
         "organization": ("organizations.share_add", "organization"), "style": ("styles.share_add", "styleId"),
         "workflow": ("workflows.share_add", "workflowId"), "app": ("processors.share_add", "processorId"),
         "template": ("param_templates.share_add", "processorParametersTemplate"),
         "subscription": ("subscriptions.share_add", "subscription"),
         "project": ("subscriptions.share_add", "subscription"), "node": ("nodes.share_add", "node"),
         "review": ("processors.share_add", "processorId"), "product": ("workspaces.share_add", "workspace"),
         "process": ("workspaces.share_add", "workspace"),
         "comment": ("processors.share_add", "processorId"), "run": ("workspaces.share_add", "workspace"),
         "app_image": ("processors.share_add", "processorId"), "paid_app": ("processors.share_add", "processorId"),
         "org_image": ("organizations.share_add", "organization"), "style_image": ("styles.share_add", "styleId"),
         "app_payment": ("processors.share_add", "processorId"),
         "app_checkout": ("processors.share_add", "processorId"),
         "subscription_checkout": ("subscriptions.share_add", "subscription"),
         "workflow_run": ("workflows.share_add", "workflowId"),
         "workflow_workspace": ("workspaces.share_add", "workspace"),
         "destination": ("workspaces.share_add", "workspace"), "upload": ("workspaces.share_add", "workspace"),
         "running": ("workspaces.share_add", "workspace"), "import": ("workspaces.share_add", "workspace"),
         "app_run": None, "own_account": None, "avatar": None, "account": None, "built_app": None, "rebuilt_app": None,
         "credit_package": None, "credit_checkout": None}
"""How each kind is shared W and R (None: accounts and a user's credit package, which nobody shares, and
built apps and their run, shared once when made)."""
ADMIN_MADE = {"node"}
"""Kinds only an admin creates and shares (the owner role then owns nothing of them)."""


REFUSAL_ANSWERS: dict[FailureKind, Any] = {FailureKind.EMPTY_LIST: [], FailureKind.TEXT_ERROR: "ERROR"}
REFUSAL_STATUSES = frozenset({400, 401, 403, 404})
"""What a refusal may say: invalid input (a name the caller may not see), no session, not permitted, not found."""


def marker_refusals(ep: Endpoint) -> frozenset[int]:
    """The codes a style-B marker may refuse with: the refusal statuses and the 4xx the contract lists for it;
    the failure code it lists only when it lists no 4xx at all (/product/deletelist: intValue 500 and nothing
    else)."""
    listed = {s for s in ep.statuses if s >= 400}
    client_side = {s for s in listed if s < 500}
    return frozenset(REFUSAL_STATUSES | client_side) if client_side else frozenset(REFUSAL_STATUSES | listed)


def answer_of(response: httpx.Response) -> Any:
    """The body as the client reads it: JSON when it is JSON, else the text (None when empty)."""
    if not response.content:
        return None
    try:
        return response.json()
    except ValueError:
        return response.text


def marker_problem(kind: FailureKind, ep: Endpoint, status: int, body: Any) -> str | None:
    """Why ``status``/``body`` is not the failure answer ``kind`` (None: it is)."""
    if kind in (FailureKind.PRIMITIVE, FailureKind.PRIMITIVE_WITH_STATUS):
        if not isinstance(body, dict) or body.get("boolValue", body.get("BoolValue")) is not False:
            return f"no boolValue=false marker in {body!r}"
        code = body.get("intValue", body.get("IntValue"))
        allowed = marker_refusals(ep)
        if kind is FailureKind.PRIMITIVE_WITH_STATUS:
            return None if code == status and code in allowed else f"status {status} with intValue {code}"
        if status != 200:
            return f"HTTP {status} where the marker comes with 200"
        return None if not code or code in allowed else f"intValue {code} is not one of its refusals {sorted(allowed)}"
    if status not in (200, 204) or (status == 204 and kind not in (FailureKind.NULL, FailureKind.DEFAULT_MODEL)):
        return f"HTTP {status} where the failure comes with 200"
    id_field = ep.failure.id_field or ""
    checks: dict[FailureKind, Callable[[Any], bool]] = {
        FailureKind.NULL: lambda b: b is None,
        FailureKind.EMPTY_LIST: lambda b: b == [],
        FailureKind.TEXT_ERROR: lambda b: b == "ERROR",
        FailureKind.MINUS_ONE: lambda b: b == -1,
        FailureKind.FALSE: lambda b: b is False,
        FailureKind.RUNNING_ERROR: lambda b: isinstance(b, dict) and b.get("status") == "ERROR",
        FailureKind.DEFAULT_MODEL: lambda b: b is None or (isinstance(b, dict) and not b.get(id_field)),
        FailureKind.INVALID_USER: lambda b: isinstance(b, dict) and not b.get(id_field or "userId"),
    }
    check = checks.get(kind)
    if check is None:
        return f"{kind} is no failure answer of an HTTP 200"
    return None if check(body) else f"{body!r} is not the {kind.value} failure answer"


def refusal_problem(ep: Endpoint, response: httpx.Response) -> str | None:
    """Why ``response`` is not a refusal in the failure style the catalogue declares for ``ep`` (None: it is)."""
    status, body = response.status_code, answer_of(response)
    if status >= 500:
        return f"a server failure: HTTP {status} {body!r}"[:300]
    if ep.style is Style.STATUS:
        if status not in REFUSAL_STATUSES:
            return f"HTTP {status}, not a refusal status"
        if not (isinstance(body, dict) and isinstance(body.get("message"), str)):
            return f"HTTP {status} without an ErrorResponse body: {body!r}"[:300]
        return None
    kinds = [ep.failure.kind, *([ep.failure.session_failure] if ep.failure.session_failure else [])]
    problems = [marker_problem(kind, ep, status, body) for kind in kinds]
    return None if None in problems else f"style {ep.style.value}: {'; '.join(p or '' for p in problems)}"[:300]


OWN = "acts on the caller's own account, session or records, or creates a new resource: nothing shared to check"
ADMIN = "admin-only, on no shared resource: its refusal of non-admins is tested in its group's own tests"
COMPUTE_NODE = "compute nodes only: a main node refuses everyone (tests/server/test_apps.py, test_styles.py)"
NODE_WIDE = "node-wide figures with no resource named: each caller sees only what they may (its group's tests)"
NOT_ROWS: dict[str, str] = {
    **dict.fromkeys((
        "auth.login", "auth.check_session", "auth.logout", "auth.register", "auth.validate_new_user",
        "auth.edit_user_details", "auth.change_password", "auth.lost_password", "auth.config",
        "auth.private_missions", "auth.skin", "auth.create_upload_account", "auth.exists_upload_account",
        "auth.list_upload_files", "auth.remove_upload_account", "auth.update_upload_password", "utility.hello",
        "utility.feedback", "credits.list_types", "credits.total", "credits.list", "credits.create",
        "subscriptions.get_active", "subscriptions.list", "subscriptions.create", "subscriptions.list_types",
        "projects.list", "organizations.list", "organizations.create", "workspaces.list", "workspaces.create",
        "styles.upload", "styles.list", "workflows.upload", "workflows.list", "processors.list",
        "processors.market_list", "processes.list_by_user", "processes.last_by_user",
        "processes.list_by_app", "processes.running_time_by_subscription", "processes.running_time_by_project",
        "processes.my_running_time_by_project", "search.count", "search.query", "search.list_providers",
        "search.count_list", "search.query_list", "processor_media.list_categories",
        "processor_media.list_publishers", "file_buffer.styles", "nodes.list"), OWN),
    **dict.fromkeys((
        "admin.find_users", "admin.find_workspaces", "admin.find_resources", "admin.find_processors",
        "admin.resource_types", "admin.push_metrics", "admin.latest_metrics", "admin.list_users",
        "admin.users_summary", "admin.clean_processes_queue", "admin.clean_old_processes", "subscriptions.count",
        "subscriptions.list_all", "processes.nodes_by_score", "nodes.create"), ADMIN),
    **dict.fromkeys(("styles.node_delete", "processors.node_delete"), COMPUTE_NODE),
    **dict.fromkeys(("processes.queues_status",), NODE_WIDE),
}
"""Catalogue endpoints that are not rows, and why: every other endpoint must be one."""


def test_every_endpoint_is_a_row_or_says_why_not() -> None:
    rows = {row.endpoint for row in TABLE}
    unexplained = sorted(e.name for e in ENDPOINTS if e.name not in rows and e.name not in NOT_ROWS)
    assert not unexplained, f"add a row (or a reason in NOT_ROWS) for: {', '.join(unexplained)}"
    assert not rows & NOT_ROWS.keys(), "an endpoint is both a row and listed as not one"
    assert NOT_ROWS.keys() <= {e.name for e in ENDPOINTS}, "NOT_ROWS names an endpoint the catalogue lacks"


def cells() -> list[Any]:
    out, seen = [], collections.Counter[str]()
    for row in TABLE:
        key = f"{row.endpoint}-{row.resource}"
        seen[key] += 1
        label = key if seen[key] == 1 else f"{key}-{seen[key]}"
        for role in ROLES:
            out.append(pytest.param(row, role, id=f"{label}-{role}"))
    return out


@pytest.fixture(scope="module")
def matrix_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, Person]]]:
    # The cells call the app in process; a run of a built app calls back over HTTP (the official library), so the
    # same app also listens on a free loopback port, which the settings name as the address apps call.
    app: dict[str, Any] = {}
    listener = waitress.create_server(lambda environ, start: app["wsgi"](environ, start), host="127.0.0.1", port=0,
                                      threads=4)
    try:
        settings = app_settings()
    except pytest.skip.Exception:
        settings = {}  # no wheels for app environments: the built-app cells fail (their build does), the rest runs
    server = Server(tmp_path_factory.mktemp("matrix") / "data", port=listener.effective_port, **settings)
    app["wsgi"] = server.app
    serving = threading.Thread(target=listener.run, name="matrix-http", daemon=True)
    serving.start()
    BUILT.clear()
    people = {letter: server.add_user(uid, admin=letter == "A") for letter, uid in USERS.items()}
    server.add_user(EXTRA)
    yield server, people
    listener.close()
    serving.join(timeout=10)
    server.close()


class SessionlessClient(WasdiClient):
    """Sends calls that need a session without one (the SDK itself refuses them, ``NotLoggedInError``), so that
    the matrix sees how the server refuses them."""

    def _has_credentials(self, *_: Any) -> bool:
        return True


@pytest.mark.parametrize(("row", "role"), cells())
def test_access_matrix(matrix_server: tuple[Server, dict[str, Person]], row: Row, role: str,
                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert row.endpoint in HANDLERS, f"{row.endpoint} is not routed"
    if row.endpoint == "console.create":
        monkeypatch.setitem(sys.modules, "jupyterlab", None)
    server, people = matrix_server
    owner, admin = server.sdk(people["O"]), server.sdk(people["A"])
    rid = create(server, owner, admin, row.resource, uuid.uuid4().hex[:8])
    sharing = SHARE[row.resource]
    if sharing is not None:
        share, key = sharing
        sharer = admin if row.resource in ADMIN_MADE else owner
        shared = rid.shared or rid
        for letter, rights in (("W", "write"), ("R", "read")):
            sharer.call(share, query={key: shared, "userId": USERS[letter], "rights": rights})
    answers: list[httpx.Response] = []
    person = people.get(role)
    own_refusal = False
    client_class = WasdiClient if person else SessionlessClient
    caller = client_class(base_url="http://testserver", session_token=person.token if person else None, max_retries=0,
                          http_client=httpx.Client(transport=httpx.WSGITransport(app=server.app),
                                                   base_url="http://testserver",
                                                   event_hooks={"response": [answers.append]}))
    try:
        result = caller.call(row.endpoint, query=row.query(rid), path=row.path(rid), body=row.body(rid),
                             files=row.files(rid))
        # Some style-C endpoints refuse with an answer the SDK returns as is, since it is also a legitimate
        # one (an empty list, the text ERROR); the rows always have something to list and a process that
        # ended DONE, so there that answer can only be a refusal.  Elsewhere it is an answer (no build logs
        # yet is an empty list), the refusal being an error.
        own_refusal = row.refusal is not None and row.refusal(result)
        refused = own_refusal or (not row.refusal and result == REFUSAL_ANSWERS.get(
            endpoint(row.endpoint).failure.kind, object()))
        outcome = f"refused (answered {result!r})" if refused else "allowed"
    except (APIError, EmptyResultError) as refusal:
        got_through = row.passed is not None and getattr(refusal, "status", None) == row.passed
        outcome = "allowed" if got_through else f"refused ({type(refusal).__name__}: {refusal})"
    expected = "allowed" if role in row.allowed else "refused"
    assert outcome.split(" ")[0] == expected, f"{row.endpoint} as {role}: {outcome}"
    assert answers, "the call reached no server"
    last = answers[-1]
    last.read()
    if own_refusal:  # the row's own refusal answer, in a 200 (checked by the row's predicate)
        assert last.status_code == 200, f"{row.endpoint} as {role}: HTTP {last.status_code}"
    elif expected == "refused":
        problem = refusal_problem(endpoint(row.endpoint), last)
        assert problem is None, f"{row.endpoint} as {role} refused, not in its own failure style: {problem}"
    else:
        assert last.status_code < 500 or last.status_code == row.passed, \
            f"{row.endpoint} as {role}: a server failure, HTTP {last.status_code}"


@pytest.mark.parametrize(("name", "status", "body", "problem"), [
    ("workspaces.delete", 403, {"message": "not yours"}, None),
    ("workspaces.delete", 500, {"message": "boom"}, "a server failure"),
    ("workspaces.delete", 200, {"message": "deleted"}, "not a refusal status"),
    ("workspaces.delete", 403, "Forbidden", "without an ErrorResponse"),
    ("workspaces.list", 200, [], None),
    ("workspaces.list", 401, {"message": "no session"}, "where the failure comes with 200"),
    ("workspaces.list", 502, None, "a server failure"),
    ("workspaces.get", 200, None, None),  # its session failure: null
    ("workspaces.get", 200, {"workspaceId": ""}, None),  # its failure: the default model
    ("workspaces.get", 200, {"workspaceId": "w1"}, "is not the"),
    ("param_templates.share_add", 200, {"boolValue": False, "intValue": 403}, None),
    ("param_templates.share_add", 200, {"boolValue": False, "intValue": 500}, "is not one of its refusals"),
    ("param_templates.share_add", 403, {"boolValue": False, "intValue": 403}, "where the marker comes with 200"),
    ("products.delete_many", 200, {"BoolValue": False, "IntValue": 500}, None),  # the contract's only failure
])
def test_a_refusal_counts_only_in_the_endpoints_own_style(name: str, status: int, body: Any,
                                                          problem: str | None) -> None:
    response = httpx.Response(status, json=body) if body is not None else httpx.Response(status)
    found = refusal_problem(endpoint(name), response)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found, found
