"""Maps: the published layers as an OGC WMS (1.1.1 and 1.3.0) for WASDI's web client, QGIS and OWSLib.

Who sees what: a layer is visible to whoever may read its workspace (``WorkspaceService.readable``, so
the sharing rules of ``SharingService``); to anyone else it does not exist (``LayerNotDefined``, also in
GetCapabilities, so its name is not disclosed).  A request without a valid session is refused.

Operations (``providers/wms/protocol.py`` reads and writes the protocol, the local map server draws):
- ``GetCapabilities``: the visible layers with their title, EPSG:4326 and EPSG:3857 bounding boxes,
  styles (the layer's own, then the styles the caller may read) and legend URLs;
- ``GetMap``: any box and size in EPSG:4326 or EPSG:3857, PNG, transparent outside the raster and where
  it has no data (``TRANSPARENT=FALSE`` fills that with ``BGCOLOR``); several layers are drawn in order
  (at most ``LayerLimit``, within a pixels x layers budget), in drawing processes with a deadline (busy or
  too slow: a ServiceException with 503);
  a ``STYLES`` entry names a style from /styles the caller may read (``StyleNotDefined`` otherwise);
- ``GetFeatureInfo``: the value of the layer's band at a pixel, as text, HTML or JSON;
- ``GetLegendGraphic``: the style's colours as a PNG.
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import DomainError
from ...png import encode_pixels
from ...providers.mapserver import LocalMapServer, MapServer, MapServerError
from ...providers.raster_reads import ReadRefused
from ...providers.wms import protocol, render
from ...providers.wms.protocol import ServiceException
from ...store import Collection
from ..accounts.identity import User
from ..workspaces.workspaces import WorkspaceService
from .styles import StyleService

PNG = "image/png"


@dataclass(frozen=True)
class Answer:
    """What the WMS endpoint sends: a body and its content type."""

    body: bytes
    content_type: str
    cacheable: bool = False


class MapService:
    def __init__(self, layers: Collection, workspaces: WorkspaceService, styles: StyleService,
                 map_server: MapServer) -> None:
        self.layers = layers
        self.workspaces = workspaces
        self.styles = styles
        self.map_server = map_server

    def close(self) -> None:
        self.map_server.close()

    def start_readers(self, count: int) -> None:
        """Start readers for the layers published last, in the background (the server is starting): a web map's
        first tiles need not wait for one."""
        if isinstance(self.map_server, LocalMapServer):
            self.map_server.warm(count)

    # -- access ------------------------------------------------------------------------------
    def _local(self) -> LocalMapServer:
        if not isinstance(self.map_server, LocalMapServer):
            raise ServiceException("this server's layers are served by an external map server",
                                   "OperationNotSupported")
        return self.map_server

    def _may_read(self, user: User, workspace_id: str | None, seen: dict[str, bool]) -> bool:
        key = str(workspace_id)
        if key not in seen:
            try:
                self.workspaces.readable(user, workspace_id)
                seen[key] = True
            except DomainError:
                seen[key] = False
        return seen[key]

    def visible(self, user: User, layer_id: str) -> tuple[dict[str, Any], render.Layer]:
        """The record and prepared layer of ``layer_id`` if the caller may read it; ``LayerNotDefined`` otherwise."""
        record = self.layers.get(layer_id) if LocalMapServer.valid_id(layer_id) else None
        layer = self._local().layer(layer_id) if record is not None else None
        if record is None or layer is None or not layer.georeferenced or not self._may_read(
                user, record.get("workspaceId"), {}):
            raise ServiceException(f"no layer named {layer_id[:100]!r}", "LayerNotDefined")
        return record, layer

    def _style_name(self, user: User, name: str, layer: render.Layer) -> str | None:
        """The style a request names ("" or ``default``: the layer's own), if the caller may read it."""
        if name in ("", "default") or (layer.style and name.casefold() == layer.style.casefold()):
            return layer.style
        doc = self.styles.by_name(name)
        if doc is None or not self.styles.can_read(user, doc):
            raise ServiceException(f"no style named {name[:100]!r}", "StyleNotDefined")
        return str(doc["name"])

    # -- operations --------------------------------------------------------------------------
    def handle(self, user: User, params: Mapping[str, str], service_url: str) -> Answer:
        """Answer one WMS request (``params`` with lower-case names); ``ServiceException`` when it cannot."""
        service = (params.get("service") or "").strip()
        operation = required_operation(params)
        if service and service.upper() != "WMS":
            raise ServiceException(f"SERVICE {service[:20]!r} is not offered: use WMS", "InvalidParameterValue")
        if operation == "getcapabilities":
            if not service:
                raise ServiceException("SERVICE=WMS is required", "MissingParameterValue")
            return self.capabilities(user, protocol.negotiate(params.get("version")), service_url)
        if operation == "getlegendgraphic":
            return self.legend(user, protocol.parse_legend(params))
        version = protocol.version_of(params)
        if operation in ("getmap", "map"):
            return self.get_map(user, protocol.parse_map(params, version))
        if operation in ("getfeatureinfo", "feature_info"):
            return self.feature_info(user, protocol.parse_feature_info(params, version))
        raise ServiceException(f"REQUEST {params.get('request', '')[:40]!r} is not offered: use GetCapabilities, "
                               "GetMap, GetFeatureInfo or GetLegendGraphic", "OperationNotSupported")

    def capabilities(self, user: User, version: str, service_url: str) -> Answer:
        local = self._local()
        seen: dict[str, bool] = {}
        readable_styles = sorted({str(d["name"]) for d in self.styles.styles.find() if self.styles.can_read(user, d)},
                                 key=str.casefold)
        entries = []
        for record in sorted(self.layers.find(), key=lambda r: int(r.get("createdDate") or 0)):
            if not self._may_read(user, record.get("workspaceId"), seen):
                continue
            layer = local.layer(str(record["layerId"]))
            if layer is None or not layer.georeferenced or layer.wgs84 is None:
                continue
            own = layer.style or "default"
            styles = ((own, f"{own} (the layer's style)" if layer.style else "grey stretch, 2nd to 98th percentile"),
                      *((s, s) for s in readable_styles if s.casefold() != own.casefold()))
            product = str(record.get("fileName") or "")
            entries.append(protocol.LayerEntry(
                str(record["layerId"]), f"{product} - {record.get('band') or ''}",
                f"Band {record.get('band') or ''} of {product} (workspace {record.get('workspaceId')})",
                layer.wgs84, layer.mercator, styles))
        xml = protocol.capabilities(version, service_url, entries)
        return Answer(xml, "text/xml" if version == "1.3.0" else "application/vnd.ogc.wms_xml")

    def get_map(self, user: User, request: protocol.MapRequest) -> Answer:
        local = self._local()
        chosen = []
        for name, style in zip(request.layers, request.styles, strict=True):
            _, layer = self.visible(user, name)
            chosen.append((name, self._style_name(user, style, layer)))
        background = None if request.transparent else request.background
        try:
            if len(chosen) == 1:
                png = local.render_png(chosen[0][0], chosen[0][1], request.crs, request.bbox, request.width,
                                       request.height, background)
            else:
                png = local.render_map(chosen, request.crs, request.bbox, request.width, request.height, background)
        except MapServerError as e:  # removed meanwhile
            raise ServiceException(str(e), "LayerNotDefined") from e
        except ReadRefused as e:
            raise refusal(e) from e
        return Answer(png, PNG, cacheable=True)

    def feature_info(self, user: User, request: protocol.InfoRequest) -> Answer:
        view = request.map
        features = []
        for name in request.query_layers[:request.feature_count]:
            record, layer = self.visible(user, name)
            try:
                x, y, value = self._local().value_at(layer, view.crs, view.bbox, view.width, view.height, request.i,
                                                     request.j)
            except ReadRefused as e:
                raise refusal(e) from e
            if value is not None:
                features.append({"layer": name, "product": record.get("fileName"), "band": record.get("band"),
                                 "value": value, "x": x, "y": y, "crs": view.crs})
        if request.info_format == "application/json":
            body = {"type": "FeatureCollection", "features": [
                {"type": "Feature", "id": f["layer"], "geometry": {"type": "Point", "coordinates": [f["x"], f["y"]]},
                 "properties": {k: f[k] for k in ("layer", "product", "band", "value")}} for f in features],
                    "crs": {"type": "name", "properties": {"name": view.crs}}}
            return Answer(json.dumps(body).encode(), "application/json")
        if request.info_format == "text/html":
            rows = "".join(f"<tr><td>{html.escape(str(f['layer']))}</td><td>{html.escape(str(f['product']))}</td>"
                           f"<td>{html.escape(str(f['band']))}</td><td>{f['value']!r}</td></tr>" for f in features)
            body_html = ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>GetFeatureInfo</title></head>"
                         "<body><table><tr><th>layer</th><th>product</th><th>band</th><th>value</th></tr>"
                         f"{rows}</table></body></html>")
            return Answer(body_html.encode(), "text/html; charset=utf-8")
        lines = [f"{f['layer']} {f['product']} {f['band']} value = {f['value']!r}" for f in features]
        return Answer(("\n".join(lines) or "no value at this point").encode() + b"\n", "text/plain; charset=utf-8")

    def legend(self, user: User, request: protocol.LegendRequest) -> Answer:
        _, layer = self.visible(user, request.layer)
        style = self._local().style(self._style_name(user, request.style, layer))
        return Answer(encode_pixels(render.legend(layer, style, request.width, request.height)), PNG,
                      cacheable=True)


def refusal(error: ReadRefused) -> ServiceException:
    """A read the readers did not do, as the WMS says it: 503 when busy or out of time (try again), else 400."""
    return ServiceException(error.message, "NoApplicableCode", status=503 if error.busy else 400)


def required_operation(params: Mapping[str, str]) -> str:
    operation = (params.get("request") or "").strip().lower()
    if not operation:
        raise ServiceException("REQUEST is required (GetCapabilities, GetMap, GetFeatureInfo, GetLegendGraphic)",
                               "MissingParameterValue")
    return operation
