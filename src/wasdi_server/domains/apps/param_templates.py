"""Processor parameter templates: named, reusable parameter sets of an app, and their sharing.

A record of the ``processor_parameter_templates`` collection (key ``templateId``)::

    templateId, userId (owner), processorId, name, description, jsonParameters (JSON text),
    creationDate, updateDate (epoch ms; served as ``yyyy-MM-dd HH:mm:ss``)

Rules (contract /processorParamTempl; where it is silent the choice is written here):
- add: ``processorId`` and ``name`` are required and the app must exist (400); the caller must be able
  to read the app (403); ``jsonParameters``, when given, must be JSON text (400); the id and both
  timestamps are set here;
- read (get, list, share list): the owner, users it is shared with, admins; an unknown template is
  answered like a forbidden one by ``get`` (403: the contract lists no 400/404 there, and an id that
  does not exist reveals nothing); ``getlist`` gives the caller's own and shared templates of an app;
- update: write rights (owner, ``write`` sharing, admin; else 403); an unknown template is 400; the
  owner and creation date never change, the update date is refreshed;
- delete: the owner (or an admin) removes the template and every sharing of it; a user it is shared
  with removes only their own sharing; anyone else gets 403; unknown: 400;
- sharing goes through ``SharingService`` (resource type ``processorparameterstemplate``); a repeated
  share succeeds with "Already Shared." (gaps §0.8);
- an app's templates go with the app (``on_app_delete``), a user's with the user (``delete_all_of_user``).
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any

from ...dates import format_ms_or_none, now_ms
from ...errors import MSG_NO_ACCESS_RIGHTS, BadRequest, Forbidden, ServerFailure
from ...json_reader import JsonReader
from ...store import Collection
from ..accounts.identity import User
from ..accounts.sharing import Resource, ShareOutcome, SharingService
from .app_records import AppRecords

TEMPLATE = "processorparameterstemplate"
"""The stored resource type of templates in sharings (gaps §4)."""
MAX_NAME_LENGTH = 200
MAX_DESCRIPTION_LENGTH = 4000
MAX_PARAMETERS_LENGTH = 1024 * 1024
INVALID_TEMPLATE = "Invalid template."


def template_resource(doc: Mapping[str, Any]) -> Resource:
    return Resource(TEMPLATE, str(doc["templateId"]), str(doc.get("userId") or ""), str(doc.get("name") or ""))


def _text(value: str | None, what: str, limit: int, *, required: bool = False) -> str:
    text = (value or "").strip()
    if required and not text:
        raise BadRequest(f"the {what} is required")
    if len(text) > limit:
        raise BadRequest(f"the {what} is too long (at most {limit} characters)")
    return text


def check_parameters(reader: JsonReader, value: str | None) -> str:
    """The parameters as given, when they are JSON text within the reader's limits (or nothing)."""
    text = value or ""
    if len(text) > MAX_PARAMETERS_LENGTH:
        raise BadRequest("the parameters are too long")
    if text.strip():
        reader.read(text, "jsonParameters")
    return text


class ParamTemplateService:
    def __init__(self, templates: Collection, apps: AppRecords, sharing: SharingService,
                 json_reader: JsonReader | None = None) -> None:
        self.templates = templates
        self.json_reader = json_reader or JsonReader()
        self.apps = apps
        self.sharing = sharing

    # -- reading ---------------------------------------------------------------------------------
    def _existing(self, template_id: str | None) -> dict[str, Any]:
        doc = self.templates.get(template_id) if template_id else None
        if doc is None:
            raise BadRequest(INVALID_TEMPLATE)
        return doc

    def _readable_app(self, caller: User, processor_id: str | None) -> dict[str, Any]:
        app = self.apps.get(processor_id)
        if app is None:
            raise BadRequest("Invalid processor.")
        if not self.apps.can_read(caller, app):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        return app

    def view(self, caller: User, doc: Mapping[str, Any], *, detail: bool) -> dict[str, Any]:
        out = {
            "templateId": doc["templateId"], "userId": doc.get("userId"), "processorId": doc.get("processorId"),
            "name": doc.get("name"), "updateDate": format_ms_or_none(doc.get("updateDate")),
            "readOnly": not self.sharing.can_write(caller, template_resource(doc)),
        }
        if detail:
            out.update(description=doc.get("description") or "", jsonParameters=doc.get("jsonParameters") or "",
                       creationDate=format_ms_or_none(doc.get("creationDate")))
        return out

    def get(self, caller: User, template_id: str | None) -> dict[str, Any]:
        doc = self.templates.get(template_id) if template_id else None
        if doc is None or not self.sharing.can_read(caller, template_resource(doc)):
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        return self.view(caller, doc, detail=True)

    def list_for(self, caller: User, processor_id: str | None) -> list[dict[str, Any]]:
        """The caller's own templates of an app and those shared with them, by name."""
        self._readable_app(caller, processor_id)
        shared = self.sharing.shared_with(caller.user_id, TEMPLATE)
        docs = [d for d in self.templates.find(processorId=processor_id)
                if d.get("userId") == caller.user_id or d["templateId"] in shared]
        docs.sort(key=lambda d: (str(d.get("name") or "").lower(), d["templateId"]))
        return [self.view(caller, d, detail=False) for d in docs]

    # -- changing --------------------------------------------------------------------------------
    def add(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        processor_id = _text(data.get("processorId"), "processorId", 200, required=True)
        name = _text(data.get("name"), "name", MAX_NAME_LENGTH, required=True)
        description = _text(data.get("description"), "description", MAX_DESCRIPTION_LENGTH)
        parameters = check_parameters(self.json_reader, data.get("jsonParameters"))
        self._readable_app(caller, processor_id)
        stamp = now_ms()
        try:
            return self.templates.insert({
                "templateId": str(uuid.uuid4()), "userId": caller.user_id, "processorId": processor_id,
                "name": name, "description": description, "jsonParameters": parameters,
                "creationDate": stamp, "updateDate": stamp,
            })
        except Exception as e:  # the store failing is the contract's 500
            raise ServerFailure("the template could not be saved") from e

    def update(self, caller: User, data: Mapping[str, Any]) -> dict[str, Any]:
        template_id = _text(data.get("templateId"), "templateId", 200, required=True)
        processor_id = _text(data.get("processorId"), "processorId", 200, required=True)
        name = _text(data.get("name"), "name", MAX_NAME_LENGTH, required=True)
        description = _text(data.get("description"), "description", MAX_DESCRIPTION_LENGTH)
        parameters = check_parameters(self.json_reader, data.get("jsonParameters"))
        doc = self._existing(template_id)
        self.sharing.require_write(caller, template_resource(doc))
        if processor_id != doc.get("processorId"):
            self._readable_app(caller, processor_id)
        updated = self.templates.update(template_id, {
            "processorId": processor_id, "name": name, "description": description, "jsonParameters": parameters,
            "updateDate": now_ms(),
        })
        if updated is None:
            raise BadRequest(INVALID_TEMPLATE)
        return updated

    def delete(self, caller: User, template_id: str | None) -> None:
        doc = self._existing(template_id)
        resource = template_resource(doc)
        if caller.user_id == resource.owner_id or caller.is_admin:
            with self.templates.transaction():
                self.sharing.remove_all(resource)
                if not self.templates.delete(resource.id):
                    raise BadRequest(INVALID_TEMPLATE)
            return
        if self.sharing.sharing(resource, caller.user_id) is None:
            raise Forbidden(MSG_NO_ACCESS_RIGHTS)
        self.sharing.unshare(caller, resource, caller.user_id)

    # -- sharing ---------------------------------------------------------------------------------
    def share(self, caller: User, template_id: str | None, user_id: str | None, rights: str | None) -> ShareOutcome:
        return self.sharing.share(caller, template_resource(self._existing(template_id)), user_id, rights)

    def unshare(self, caller: User, template_id: str | None, user_id: str | None) -> None:
        self.sharing.unshare(caller, template_resource(self._existing(template_id)), user_id)

    def sharings(self, caller: User, template_id: str | None) -> list[dict[str, Any]]:
        doc = self._existing(template_id)
        resource = template_resource(doc)
        self.sharing.require_read(caller, resource)
        return [{"processorParametersTemplateId": resource.id, "userId": s["userId"], "ownerId": resource.owner_id,
                 "permissions": s["permissions"]} for s in self.sharing.sharings_of(resource)]

    # -- cascades --------------------------------------------------------------------------------
    def on_app_delete(self, processor_doc: Mapping[str, Any]) -> None:
        """Remove every template of a deleted app, with their sharings (idempotent)."""
        for doc in self.templates.find(processorId=processor_doc.get("processorId")):
            self.sharing.remove_all(template_resource(doc))
            self.templates.delete(doc["templateId"])

    def delete_all_of_user(self, user_id: str) -> None:
        """Remove the user's templates with their sharings, and the sharings of templates given to them."""
        for doc in self.templates.find(userId=user_id):
            self.sharing.remove_all(template_resource(doc))
            self.templates.delete(doc["templateId"])
        self.sharing.sharings.delete_where(userId=user_id, resourceType=TEMPLATE)
