"""A boxed reader (``python -m wasdi_server.launcher.box.reader_worker FOLDERS_JSON``), started by ``readers.py``.

It runs in a world that holds its folders and the system's libraries only, with no network (``world.py``);
GDAL's own network access is switched off too, and every path is checked (``raster_references``) before
GDAL opens it, against the folders named on its command line.  It reads ``ReadJob``s (pickles from the
server, which it trusts) on standard input, and answers each on what was standard output with two
messages: a JSON header (``{"status": "ok", "value": ...}``, ``"refused"`` or ``"error"`` with a
``message``) and the payload bytes: the server never unpickles what a reader sends.  A first answer
``ready`` says the imports are done.  Datasets stay open between jobs (``OpenDatasets``): the tiles of one
layer read the same open VRT.  It ends when its input closes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import traceback
from collections.abc import Callable, Iterator
from multiprocessing.connection import Connection
from typing import Any

from wasdi_server.bounded_cache import BoundedCache

GDAL_CACHE_MB = "128"
NICENESS = 10
"""Reading yields the processor to the server's own threads: a busy map server never slows its API."""
OPEN_DATASETS = 8
"""Datasets kept open between jobs (a layer at a few overview levels)."""
NO_NETWORK = {
    "GDAL_HTTP_TIMEOUT": "1", "GDAL_HTTP_CONNECTTIMEOUT": "1", "GDAL_HTTP_MAX_RETRY": "0",
    "GDAL_HTTP_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
    "CPL_VSIL_CURL_ALLOWED_EXTENSIONS": ".no-network-in-a-reader", "GDAL_DISABLE_READDIR_ON_OPEN": "TRUE",
    "GDAL_VRT_ENABLE_PYTHON": "NO", "CPL_VSIL_CURL_USE_HEAD": "NO", "GDAL_PAM_ENABLED": "YES",
}
"""GDAL's network off (a reader's world has none either), no Python pixel functions, no folder listings."""


KINDS = frozenset({"draw", "pixels", "value_at", "prepare", "product", "metadata"})
"""The ``ReadJob.kind``s a reader does (``Reader``'s methods of those names)."""


def gdal_environment() -> dict[str, str]:
    """What a reader's GDAL reads from its environment."""
    return {"GDAL_CACHEMAX": GDAL_CACHE_MB, "CPL_LOG": os.devnull, **NO_NETWORK}


class OpenDatasets:
    """Layers' VRTs kept open at each overview level, checked once when opened (keyed by the layer's version
    and the files' modification times, so a republished layer is opened afresh)."""

    def __init__(self, check: Callable[[str], None]) -> None:
        self.check = check
        self.open: BoundedCache[tuple[Any, ...], Any] = BoundedCache(
            OPEN_DATASETS, on_evict=lambda _key, dataset: dataset.close())
        self.sources: dict[str, tuple[str, ...]] = {}
        """The product files each layer's VRT reads (the server wrote the VRT: parsed once)."""

    def _sources(self, layer: Any) -> tuple[str, ...]:
        vrt = str(layer.vrt)
        if vrt not in self.sources:
            from wasdi_server.providers.wms import render

            source = render.vrt_source(layer)
            self.sources[vrt] = (source,) if source else ()
        return self.sources[vrt]

    def _key(self, layer: Any, level: int | None) -> tuple[Any, ...]:
        """What makes an open dataset stale: the layer's files and its product changed or replaced (a product
        swapped for another file after publishing is opened, and checked, afresh)."""
        stamps: list[tuple[int, int, int] | None] = []
        for path in (str(layer.vrt), str(layer.vrt) + ".ovr", *self._sources(layer)):
            try:
                stat = os.stat(path)
                stamps.append((stat.st_ino, stat.st_mtime_ns, stat.st_size))
            except OSError:
                stamps.append(None)
        return str(layer.vrt), layer.version, level, tuple(stamps)

    @contextlib.contextmanager
    def __call__(self, layer: Any, level: int | None) -> Iterator[Any]:
        from wasdi_server.providers.wms import render

        key = self._key(layer, level)
        dataset = self.open.get(key)  # a hit is the most recently used from now on
        if dataset is None:
            self.check(str(layer.vrt))
            dataset = render.open_level(layer, level)
            self.open.put(key, dataset)  # past OPEN_DATASETS the least recently used is closed
        yield dataset

    def forget(self, folder: str) -> None:
        """Close the datasets of a layer folder being prepared again."""
        for key, dataset in self.open.items():
            if os.path.dirname(key[0]) == folder:
                self.open.pop(key)
                dataset.close()
        self.sources = {vrt: names for vrt, names in self.sources.items() if os.path.dirname(vrt) != folder}


class Reader:
    """The jobs a reader does, each with the reference check first."""

    def __init__(self, folders: list[str]) -> None:
        from wasdi_server.launcher.box import raster_references

        self.folders = folders
        self.references = raster_references
        self.datasets = OpenDatasets(self.check)

    def check(self, gdal_path: str) -> None:
        self.references.check(gdal_path, self.folders)

    def draw(self, layers: Any, crs: str, bbox: Any, width: int, height: int,
             background: Any = None) -> tuple[Any, bytes]:
        from wasdi_server.providers.wms import render

        return None, render.draw_map(layers, crs, bbox, width, height, background, self.datasets)

    def pixels(self, layer: Any, style: Any, crs: str, bbox: Any, width: int, height: int) -> tuple[Any, bytes]:
        """One layer's RGBA pixels (a map of layers from several workspaces is composited by the server)."""
        from wasdi_server.providers.wms import render

        return [height, width], render.draw(layer, style, crs, bbox, width, height, self.datasets).tobytes()

    def value_at(self, layer: Any, crs: str, bbox: Any, width: int, height: int, i: int,
                 j: int) -> tuple[Any, bytes]:
        from wasdi_server.providers.wms import render

        return list(render.value_at(layer, crs, bbox, width, height, i, j, self.datasets)), b""

    def prepare(self, source: str, band_index: int, folder: Any, style_name: str | None, style: Any,
                source_folder: str, max_size: int, restyle: bool) -> tuple[Any, bytes]:
        """A layer prepared (or only given a new style) and its preview PNG."""
        from wasdi_server.png import encode_pixels
        from wasdi_server.providers.wms import render

        self.datasets.forget(str(folder))
        if restyle:
            layer = render.Layer.load(folder).with_style(style_name)
            layer.save()
        else:
            self.check(source)
            layer = render.prepare(source, band_index, folder, style_name, source_folder)
        return layer.to_json(), encode_pixels(render.preview(layer, style, max_size, self.datasets))

    def product(self, path: str) -> tuple[Any, bytes]:
        from pathlib import Path

        from wasdi_server.domains.products import readers

        return dataclasses.asdict(readers.read_product(Path(path), self.check)), b""

    def metadata(self, path: str) -> tuple[Any, bytes]:
        from pathlib import Path

        from wasdi_server.domains.products import metadata_trees

        return metadata_trees.metadata_tree(Path(path), self.check), b""


def _send(results: Connection, header: dict[str, Any], payload: bytes = b"") -> None:
    results.send_bytes(json.dumps(header).encode())
    results.send_bytes(payload)


def main(argv: list[str]) -> int:
    results = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)  # stray prints must not break the answers
    jobs = Connection(0, writable=False)
    for name, value in gdal_environment().items():
        os.environ.setdefault(name, value)
    from wasdi_server.launcher.box.raster_references import ReferenceRefused

    reader = Reader(json.loads(argv[0]) if argv else [])
    # GDAL and numpy loaded before "ready": render imports rasterio only inside its functions, and that import takes
    # seconds a reader started ahead of its first read (an import's ingestion) should not leave to that read.
    # boto3, which rasterio imports when it is installed (for S3 sessions), is kept out: a reader has no network,
    # and it would double the time a reader takes to start.
    sys.modules.setdefault("boto3", None)  # type: ignore[arg-type]
    from wasdi_server.providers.wms import render  # noqa: F401
    with contextlib.suppress(ImportError):  # without the geo extra, reads answer file-level facts
        import rasterio  # noqa: F401
    os.nice(NICENESS)  # after the imports: a request may be waiting for this start; reads are what may be long

    _send(results, {"status": "ready", "value": os.getpid()})
    while True:
        try:
            job = jobs.recv()
        except (EOFError, OSError):
            return 0
        try:
            if job.kind not in KINDS:
                raise ValueError(f"no such read: {job.kind}")
            value, payload = getattr(reader, job.kind)(*job.args)
            _send(results, {"status": "ok", "value": value}, payload)
        except ReferenceRefused as e:
            _send(results, {"status": "refused", "message": str(e)})
        except Exception as e:  # the user's files, GDAL: the server answers the request, this reader goes on
            traceback.print_exc(file=sys.stderr)
            _send(results, {"status": "error", "message": f"the file could not be read ({type(e).__name__})"})


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
