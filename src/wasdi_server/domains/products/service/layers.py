"""Map layers of product bands (``/filebuffer/publishband``, a PUBLISHBAND process) and their files.

Read access is enough to publish (it draws a map); a band already published answers PUBLISHBAND at once;
asking again while its PUBLISHBAND process is queued or running answers that process's id (no second
process); an unknown band answers null like an unknown product.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....dates import now_ms
from ....errors import BadRequest, NotFound
from ....providers.mapserver import MapServerError, PublishedLayer, new_layer_id
from ...accounts.identity import User
from ...processes.ports import OK
from ...processes.processes import ACTIVE
from .records import ProductRecords


class ProductLayers(ProductRecords):
    """Publishing a band as a map layer, and finding a layer's file for a caller."""

    @staticmethod
    def find_band(record: dict[str, Any], band_name: str) -> dict[str, Any] | None:
        for band in record.get("bands") or []:
            if band.get("name") == band_name:
                return dict(band)
        return None

    @staticmethod
    def publish_result(record: dict[str, Any], band: dict[str, Any]) -> dict[str, Any]:
        """PublishBandResultViewModel fields of a published band."""
        return {"boundingBox": band.get("boundingBox") or "", "bandName": band.get("name"),
                "layerId": band.get("layerId"), "productName": record.get("fileName"),
                "geoserverBoundingBox": band.get("geoserverBoundingBox") or "",
                "geoserverUrl": band.get("geoserverUrl")}

    def publish_band(self, user: User, workspace_id: str | None, file_name: str | None, band_name: str | None,
                     style: str | None, parent: str | None, base_url: str) -> dict[str, Any]:
        """``/filebuffer/publishband``: PUBLISHBAND with the layer when published, else WAITFORRABBIT."""
        workspace, record = self.load(user, workspace_id, file_name)
        band = self.find_band(record, band_name or "")
        if band is None:
            raise NotFound("the product has no such band")
        workspace_id = workspace["workspaceId"]
        layer_id = band.get("layerId")
        if band.get("published") and layer_id and self.map_server.has_layer(layer_id):
            return {"messageCode": "PUBLISHBAND", "messageResult": OK,
                    "payload": self.publish_result(record, band), "workspaceId": workspace_id}
        for process in self.processes.processes.find(lambda r: r.get("status") in ACTIVE, workspaceId=workspace_id,
                                                     operationType="PUBLISHBAND", productName=record["fileName"]):
            if (process.get("parameter") or {}).get("band") == band["name"]:
                return {"messageCode": "WAITFORRABBIT", "messageResult": OK, "payload": process["processObjId"],
                        "workspaceId": workspace_id}
        process = self.processes.create(user, workspace_id, "PUBLISHBAND", record["fileName"], parent=parent,
                                        parameter={"fileName": record["fileName"], "band": band["name"],
                                                   "style": style or record.get("style") or None,
                                                   "baseUrl": base_url})
        return {"messageCode": "WAITFORRABBIT", "messageResult": OK, "payload": process["processObjId"],
                "workspaceId": workspace_id}

    def publish(self, workspace_id: str, file_name: str, band_name: str, style: str | None,
                base_url: str) -> dict[str, Any]:
        """The PUBLISHBAND operation: draw the layer, record it on the band; the PublishBandResultViewModel."""
        workspace = self.workspaces.load(workspace_id)
        record = self.get(workspace_id, file_name)
        if record is None:
            raise NotFound(f"{file_name} is not a product of the workspace")
        band = self.find_band(record, band_name)
        if band is None:
            raise NotFound(f"{file_name} has no band {band_name}")
        source = self.band_reader_source(workspace, file_name, band)
        layer_id = band.get("layerId") or new_layer_id()
        url = f"{base_url.rstrip('/')}/wms"  # map clients ask it for tiles (WMS GetMap with layers=<layerId>)
        try:
            layer: PublishedLayer = self.map_server.publish(source,
                                                            int(band.get("bandIndex") or 1), layer_id, style, url,
                                                            self.workspaces.folder(workspace))
        except MapServerError:
            raise
        published = {"published": True, "layerId": layer.layer_id, "geoserverUrl": layer.url,
                     "geoserverBoundingBox": layer.geoserver_bounding_box, "boundingBox": layer.bounding_box}

        def change(doc: dict[str, Any]) -> dict[str, Any]:
            for b in doc.get("bands") or []:
                if b.get("name") == band_name:
                    b.update(published)
            return doc

        updated = self.products.modify(record["productId"], change)
        if updated is None:  # the product went while drawing
            self.map_server.remove(layer.layer_id)
            raise NotFound(f"{file_name} was removed")
        self.layers.upsert({"layerId": layer.layer_id, "workspaceId": workspace_id, "productId": record["productId"],
                            "fileName": file_name, "band": band_name, "style": style,
                            "boundingBox": layer.bounding_box, "geoserverBoundingBox": layer.geoserver_bounding_box,
                            "geoserverUrl": layer.url, "createdDate": now_ms()})
        return self.publish_result(updated, {**band, **published})

    def layer_for(self, user: User, layer_id: str) -> Path:
        """The file of a layer this server serves, for a caller who may read its workspace."""
        layer = self.layers.get(layer_id) if len(layer_id) <= 100 else None
        if layer is None:
            raise NotFound("no such layer")
        try:
            self.readable(user, layer["workspaceId"])
        except BadRequest as e:  # the workspace is gone
            raise NotFound("no such layer") from e
        path = self.map_server.layer_file(layer_id)
        if path is None or not path.is_file():
            raise NotFound("no such layer")
        return path
