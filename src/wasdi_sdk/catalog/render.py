"""Render the catalogue as documentation (``docs/api.md``): ``python -m wasdi_sdk.catalog.render``."""

from __future__ import annotations

import sys
from collections.abc import Iterable

from . import ENDPOINTS, Auth, BodyKind, Endpoint, Param, ResponseKind, Style

_STYLE = {Style.STATUS: "A (status)", Style.MARKER: "B (marker)", Style.EMPTY: "C (empty)"}
_AUTH = {Auth.SESSION: "session", Auth.TOKEN: "session or `token`", Auth.PUBLIC: "none"}


def _param(p: Param) -> str:
    text = f"`{p.name}`" + ("*" if p.required else "")
    if p.default is not None:
        text += f"={p.default}"
    return text


def _body(ep: Endpoint) -> str:
    kind = ep.body.kind
    if kind is BodyKind.NONE:
        return ""
    if kind is BodyKind.JSON:
        return f"JSON {ep.body.model}"
    if kind is BodyKind.MULTIPART or kind is BodyKind.FORM:
        return f"{kind.value} `{ep.body.field}`" if ep.body.field else kind.value
    return str(kind.value).replace("_", " ")


def _response(ep: Endpoint) -> str:
    r = ep.response
    if r.kind is ResponseKind.MODEL:
        return str(r.model)
    if r.kind is ResponseKind.MODEL_LIST:
        return f"[{r.model}]"
    return r.kind.value if r.kind is not ResponseKind.TEXT else r.media_type


def sdk_method(ep: Endpoint) -> str | None:
    """``client.<group>.<operation>`` when the SDK wraps ``ep``, else ``None``."""
    from ..resources import RESOURCES

    resource = RESOURCES.get(ep.group)
    return f"client.{ep.group}.{ep.operation}" if resource and hasattr(resource, ep.operation) else None


def markdown(endpoints: Iterable[Endpoint] = ENDPOINTS) -> str:
    """The API reference: one table per group, every endpoint with its SDK method (— where not yet wrapped)."""
    lines = ["# API reference", "",
             "Generated from the endpoint catalogue (`wasdi_sdk.catalog`) by "
             "`python -m wasdi_sdk.catalog.render > docs/api.md`; a test keeps it current.", "",
             "Failure styles: A = HTTP status with `ErrorResponse {message}`; B = HTTP 200 with a failure marker "
             "in the body; C = HTTP 200 with null, an empty list, a default model, `ERROR` or -1. "
             "`*` marks a required parameter.", ""]
    groups: dict[str, list[Endpoint]] = {}
    for ep in endpoints:
        groups.setdefault(ep.group, []).append(ep)
    for group, eps in groups.items():
        lines += [f"## {group} ({eps[0].base})", "",
                  "| Method | Path | SDK method | Auth | Style | Query | Body | Response | Summary |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for ep in eps:
            auth = _AUTH[ep.auth] + (", admin" if ep.admin else "")
            query = ", ".join(_param(p) for p in ep.query)
            method = sdk_method(ep)
            lines.append(f"| {ep.method} | `{ep.path}` | {f'`{method}`' if method else '—'} | {auth} | "
                         f"{_STYLE[ep.style]} | {query} | {_body(ep)} | {_response(ep)} | {ep.summary} |")
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(markdown())
