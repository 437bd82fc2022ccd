"""/styles: map styles (SLD files) and their sharing."""

from __future__ import annotations

import re
from typing import Any

from wasdi_sdk.models import PrimitiveResult, StyleSharingViewModel, StyleViewModel

from ..domains.products.sld_documents import MAX_STYLE_BYTES
from ..domains.products.styles import check_description
from ..errors import BadRequest, NotModified
from .answers import Answer, FileResult
from .framework import Call, handles
from .images import receive_file

_XML_ENCODING = re.compile(r"""^(\s*<\?xml[^>]*?\sencoding\s*=\s*)(["'])[^"']*\2""")


def _form_text(call: Call, field: str) -> str:
    value = (call.body or {}).get(field)
    if isinstance(value, list):
        value = value[0] if value else None
    if not isinstance(value, str) or not value.strip():
        raise BadRequest(f"missing form field {field}")
    return value


def _utf8_xml(text: str) -> bytes:
    """The XML text as UTF-8 bytes, its declaration (if it names an encoding) saying so."""
    return _XML_ENCODING.sub(lambda m: f"{m.group(1)}{m.group(2)}UTF-8{m.group(2)}", text, count=1).encode("utf-8")


@handles("styles.upload")
def upload_style(call: Call) -> PrimitiveResult:
    p = call.params
    styles = call.services.styles
    styles.check_new_name(p["name"])
    check_description(p["description"])
    with receive_file(call, "file", MAX_STYLE_BYTES, styles.staging) as received:
        doc = styles.create(call.caller, p["name"], p["description"], p["public"], received.path)
    _propagate_file(call, doc)
    return PrimitiveResult(bool_value=True, string_value=doc["styleId"])


@handles("styles.update_file")
def update_style_file(call: Call) -> None:
    p = call.params
    styles = call.services.styles
    doc = styles.writable_file(call.caller, p["styleId"])
    with receive_file(call, "file", MAX_STYLE_BYTES, styles.staging) as received:
        if not p["zipped"]:
            styles.replace_file(call.caller, p["styleId"], received.path)
        else:
            sld = styles.sld_from_zip(received.path)
            try:
                styles.replace_file(call.caller, p["styleId"], sld)
            finally:
                sld.unlink(missing_ok=True)
    _propagate_file(call, doc)


def _propagate_file(call: Call, doc: dict[str, Any]) -> None:
    """The compute nodes get the style's new file (the main node's outbox; nothing on a lone server)."""
    path = call.services.styles.sld_path(doc["name"])
    call.services.propagation.style_file_updated(call.caller.user_id, doc["styleId"], path, path.name)


@handles("styles.update_xml")
def update_style_xml(call: Call) -> None:
    style_id = call.params["styleId"]
    styles = call.services.styles
    doc = styles.writable_file(call.caller, style_id)
    staged = styles.write_staged(_utf8_xml(_form_text(call, "styleXml")))
    try:
        styles.replace_file(call.caller, style_id, staged)
    finally:
        staged.unlink(missing_ok=True)
    _propagate_file(call, doc)


@handles("styles.get_xml")
def get_style_xml(call: Call) -> Answer:
    data, etag = call.services.styles.xml(call.caller, call.params["styleId"])
    if call.if_none_match(etag):
        raise NotModified("the style is unchanged")
    return Answer(200, body=data, media_type="application/xml", headers={"ETag": etag})


@handles("styles.update_params")
def update_style_params(call: Call) -> None:
    p = call.params
    description = call.as_sent("description")  # an empty one clears it; a missing one leaves it unchanged
    call.services.styles.update_params(call.caller, p["styleId"], description, p["public"])


@handles("styles.list")
def list_styles(call: Call) -> list[StyleViewModel]:
    views = call.services.styles.list_for(call.caller, call.session_id, call.base_url)
    return [StyleViewModel.model_validate(v) for v in views]


@handles("styles.delete")
def delete_style(call: Call) -> None:
    styles = call.services.styles
    doc = styles.get(call.params["styleId"])
    styles.delete(call.caller, call.params["styleId"])
    if doc is not None and styles.get(doc["styleId"]) is None:  # the style went, not just a sharing
        call.services.propagation.style_deleted(call.caller.user_id, doc)


@handles("styles.node_delete")
def node_delete_style(call: Call) -> None:
    call.services.styles.node_delete(call.caller, call.params["styleId"], call.params["styleName"])


@handles("styles.share_add")
def share_style(call: Call) -> PrimitiveResult:
    p = call.params
    outcome = call.services.styles.share(call.caller, p["styleId"], p["userId"], p["rights"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value=outcome.message)


@handles("styles.share_delete")
def unshare_style(call: Call) -> PrimitiveResult:
    call.services.styles.unshare(call.caller, call.params["styleId"], call.params["userId"])
    return PrimitiveResult(bool_value=True, int_value=200, string_value="Done")


@handles("styles.share_list")
def list_style_sharings(call: Call) -> list[StyleSharingViewModel]:
    return [StyleSharingViewModel.model_validate(s)
            for s in call.services.styles.sharings(call.caller, call.params["styleId"])]


@handles("styles.download")
def download_style(call: Call) -> FileResult:
    styles = call.services.styles
    sld = styles.open_file(call.caller, styles.get(call.params["styleId"]))
    return FileResult(sld.stream, filename=sld.filename, length=sld.size)


@handles("styles.download_by_name")
def download_style_by_name(call: Call) -> FileResult:
    styles = call.services.styles
    sld = styles.open_file(call.caller, styles.by_name(call.params["style"]))
    return FileResult(sld.stream, filename=sld.filename, length=sld.size)
