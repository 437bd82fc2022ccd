"""Generated from ``wasdi_sdk.resources.maps`` by ``make async``: do not edit.

``client.maps``: published bands as map layers, through the server's WMS (``geoserverUrl``).

The WMS is not one of the contract's endpoints: this server serves it at ``<base>/wms`` (OGC WMS 1.1.1
and 1.3.0), where a WASDI cloud serves GeoServer.  Map clients (QGIS, OWSLib, the web client) talk to it
directly; these helpers give its address and fetch images from it with the client's session."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from typing import Any, Unpack

import httpx

from ... import _exceptions as exc
from ..._resource import RequestOptions
from ...resources.maps import _ERRORS, SESSION_HEADER, WMS_PATH, Crs, _local
from .._resource import AsyncAPIResource


class AsyncMapsResource(AsyncAPIResource):
    """Async twin of ``MapsResource``: the same methods, awaited.

    This server's WMS: its address for map clients, GetMap images and layer extents."""

    async def wms_url(
        self, layer_id: str | None = None, *, include_token: bool = False, **options: Unpack[RequestOptions]
    ) -> str:
        """The WMS address to give a map client (QGIS: Layer > Add Layer > Add WMS Layer; OWSLib:
        ``WebMapService(url)``), where published layers are listed under their ``layer_id``.

        ``include_token=True`` puts the session in the address (``?token=``) for clients that cannot send
        the ``x-session-token`` header; treat that address as a password.  With ``layer_id``, checks first
        that the caller sees that layer (``NotFoundError`` if not).
        """
        if layer_id is not None:
            await self.bounds(layer_id, **options)
        url = self._client.base_url + WMS_PATH
        if include_token:
            if not self._client.session_token:
                raise exc.AuthenticationError("no session: log in first")
            url += "?" + str(httpx.QueryParams({"token": self._client.session_token}))
        return url

    async def _get(self, params: dict[str, Any], options: RequestOptions) -> httpx.Response:
        headers = {**self._client._default_headers, **(options.get("extra_headers") or {})}
        if self._client.session_token:
            headers[SESSION_HEADER] = self._client.session_token
        try:
            response = await self._client._http.get(
                self._client.base_url + WMS_PATH,
                params={**params, **(options.get("extra_query") or {})},
                headers=headers,
                timeout=options.get("timeout", self._client.timeout),
            )
        except httpx.TimeoutException as e:
            raise exc.APITimeoutError("the WMS request timed out") from e
        except httpx.TransportError as e:
            raise exc.APIConnectionError(f"cannot reach {self._client.base_url}: {e}") from e
        kind = response.headers.get("content-type", "").split(";")[0]
        exception = kind in ("application/vnd.ogc.se_xml", "text/xml") and b"ServiceException" in response.content[:500]
        if response.status_code != 200 or exception:
            raise self._error(response)
        return response

    @staticmethod
    def _error(response: httpx.Response) -> exc.APIError:
        message, code = (response.text[:300], None)
        try:
            for element in ET.fromstring(response.content).iter():
                if _local(element.tag) == "ServiceException":
                    message, code = ((element.text or "").strip() or message, element.get("code"))
                    break
        except ET.ParseError:
            pass
        if response.status_code == 401:
            cls: type[exc.APIError] = exc.AuthenticationError
        else:
            cls = _ERRORS.get(code or "", exc.BadRequestError if response.status_code < 500 else exc.ServerError)
        return cls(
            f"{message}" + (f" ({code})" if code else ""),
            status=response.status_code,
            body=response.text,
            response=response,
            endpoint="wms",
        )

    async def bounds(
        self, layer_id: str, *, crs: Crs = "EPSG:4326", **options: Unpack[RequestOptions]
    ) -> tuple[float, float, float, float]:
        """A layer's extent ``(minx, miny, maxx, maxy)`` in ``crs`` (longitude/latitude order for EPSG:4326),
        from the WMS capabilities; ``NotFoundError`` when the caller does not see the layer."""
        capabilities = await self._get({"service": "WMS", "request": "GetCapabilities", "version": "1.1.1"}, options)
        for layer in ET.fromstring(capabilities.content).iter("Layer"):
            name = layer.find("Name")
            if name is None or name.text != layer_id:
                continue
            for box in layer.findall("BoundingBox"):
                if box.get("SRS") == crs:
                    return (
                        float(box.get("minx", "nan")),
                        float(box.get("miny", "nan")),
                        float(box.get("maxx", "nan")),
                        float(box.get("maxy", "nan")),
                    )
        raise exc.NotFoundError(f"no layer {layer_id} visible to this session", endpoint="wms")

    async def get_map(
        self,
        layer_id: str,
        *,
        bbox: tuple[float, float, float, float],
        width: int = 256,
        height: int = 256,
        crs: Crs = "EPSG:4326",
        style: str | None = None,
        transparent: bool = True,
        **options: Unpack[RequestOptions],
    ) -> bytes:
        """A PNG of a layer over ``bbox`` = ``(minx, miny, maxx, maxy)`` in ``crs`` (longitude/latitude order
        for EPSG:4326), ``width`` x ``height`` pixels, with ``style`` (a style name from /styles; the layer's
        own when left out).  Transparent outside the data unless ``transparent=False`` (white there).

        ``NotFoundError`` for an unknown or invisible layer or style; ``BadRequestError`` for a request the
        WMS refuses (box, size over 4096, CRS), with the WMS's own message.
        """
        response = await self._get(
            {
                "service": "WMS",
                "request": "GetMap",
                "version": "1.1.1",
                "layers": layer_id,
                "styles": style or "",
                "srs": crs,
                "bbox": ",".join(repr(float(v)) for v in bbox),
                "width": str(width),
                "height": str(height),
                "format": "image/png",
                "transparent": "true" if transparent else "false",
            },
            options,
        )
        return response.content

    async def preview(
        self, layer_id: str, *, size: int = 1024, style: str | None = None, **options: Unpack[RequestOptions]
    ) -> bytes:
        """A PNG of a layer's whole extent in EPSG:4326, its longest side ``size`` pixels."""
        minx, miny, maxx, maxy = await self.bounds(layer_id, **options)
        span = max(maxx - minx, maxy - miny)
        width = max(1, round(size * (maxx - minx) / span))
        height = max(1, round(size * (maxy - miny) / span))
        return await self.get_map(
            layer_id, bbox=(minx, miny, maxx, maxy), width=width, height=height, style=style, **options
        )
