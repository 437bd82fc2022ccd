"""What the local map server costs: publishing a large band, and WMS GetMap tiles from it.

One run (bench/README.md, "maps.py"):
1. writes a 10,000 x 10,000 float32 GeoTIFF (UTM 32N, 10 m pixels, tiled) in a temporary folder;
2. publishes band 1 in a child process (VRT, overviews, percentiles and the preview image) and reports
   its time and the child's peak resident memory;
3. draws 256 x 256 EPSG:3857 tiles over a 4 x 4 grid around the scene's centre at three zoom levels, as
   WMS GetMap does (``LocalMapServer.render_png``: draw, PNG, disk cache): p50/p99 cold (empty cache) and
   warm (every tile cached), against the baseline of the same tiles drawn from the full-resolution
   raster without overviews;
4. with ``--compare PATH`` (a folder where rio-tiler is installed, e.g. ``pip install --target PATH
   rio-tiler``), the same cold tiles read by rio-tiler's ``Reader.tile`` from the same prepared layer,
   coloured and encoded the same way: the measurement behind choosing rasterio's WarpedVRT.
"""

from __future__ import annotations

import argparse
import math
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE = 10_000
ORIGIN = (400_000.0, 5_100_000.0)
PIXEL = 10.0


def make_scene(path: Path) -> None:
    import numpy as np
    import rasterio
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    profile = {"driver": "GTiff", "width": SIZE, "height": SIZE, "count": 1, "dtype": "float32",
               "crs": "EPSG:32632", "transform": from_origin(*ORIGIN, PIXEL, PIXEL), "nodata": -9999.0,
               "tiled": True, "blockxsize": 512, "blockysize": 512}
    with rasterio.open(path, "w", **profile) as dst:
        for row in range(0, SIZE, 1000):  # written in strips: the script's own memory stays small
            rows = np.arange(row, row + 1000, dtype=np.float32)[:, None]
            cols = np.arange(SIZE, dtype=np.float32)[None, :]
            data = np.sin(rows / 700) * 500 + np.cos(cols / 900) * 500 + rows * 0.01
            dst.write(data.astype(np.float32), 1, window=Window(0, row, SIZE, 1000))


def publish_child(source: str, root: str) -> None:
    """Runs in a child process so its peak memory is the publish's own: what a boxed reader runs to publish
    (``reader_worker.Reader.prepare``: VRT, overviews, percentiles, preview), here unboxed."""
    from wasdi_server.png import encode_pixels
    from wasdi_server.providers.wms import render
    from wasdi_server.providers.wms.styles import DEFAULT

    start = time.perf_counter()
    layer = render.prepare(source, 1, Path(root) / "wasdi_bench", None, str(Path(source).parent))
    (Path(root) / "wasdi_bench.png").write_bytes(encode_pixels(render.preview(layer, DEFAULT, 2048)))
    elapsed = time.perf_counter() - start
    print(f"{elapsed:.3f} {peak_memory_mb():.1f}")


def peak_memory_mb() -> float:
    """This process's peak resident memory.  ``VmHWM``, not ``ru_maxrss``: Linux keeps the parent's
    ``ru_maxrss`` across fork and exec, so a child would report the bench's own peak."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def tile_bounds(x: int, y: int, z: int) -> tuple[float, float, float, float]:
    extent = 20037508.342789244
    size = 2 * extent / 2**z
    return -extent + x * size, extent - (y + 1) * size, -extent + (x + 1) * size, extent - y * size


def grid(z: int) -> list[tuple[int, int, int]]:
    from rasterio.warp import transform

    centre = (ORIGIN[0] + SIZE * PIXEL / 2, ORIGIN[1] - SIZE * PIXEL / 2)
    (lon,), (lat,) = transform("EPSG:32632", "EPSG:4326", [centre[0]], [centre[1]])
    n = 2**z
    cx = int((lon + 180) / 360 * n)
    cy = int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)
    return [(cx + dx, cy + dy, z) for dy in range(-2, 2) for dx in range(-2, 2)]


def percentiles(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, math.ceil(0.99 * len(ordered)) - 1)]
    return statistics.median(ordered) * 1000, p99 * 1000


def timed(call, tiles: list[tuple[int, int, int]], repeat: int = 1) -> list[float]:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(repeat):
        for tile in tiles:
            start = time.perf_counter()
            call(tile)
            samples.append(time.perf_counter() - start)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--zooms", default="10,12,14", help="three web mercator zoom levels")
    parser.add_argument("--compare", default="", help="a folder where rio-tiler is installed (pip --target)")
    parser.add_argument("--publish-child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish_child:
        publish_child(*args.publish_child)
        return
    from wasdi_server.launcher.box.readers import ReaderPool
    from wasdi_server.png import encode_pixels
    from wasdi_server.providers.mapserver import LocalMapServer
    from wasdi_server.providers.wms import render

    zooms = [int(z) for z in args.zooms.split(",")]
    with tempfile.TemporaryDirectory(prefix="wasdi-bench-maps-") as temp:
        folder = Path(temp)
        scene = folder / "scene.tif"
        start = time.perf_counter()
        make_scene(scene)
        print(f"scene: {SIZE}x{SIZE} float32 GeoTIFF, {scene.stat().st_size / 1e6:.0f} MB, written in "
              f"{time.perf_counter() - start:.1f} s")
        out = subprocess.run([sys.executable, __file__, "--publish-child", str(scene), str(folder / "layers")],
                             check=True, capture_output=True, text=True).stdout.split()
        print(f"publish (VRT, overviews, percentiles, preview): {float(out[0]):.2f} s, peak memory "
              f"{float(out[1]):.0f} MB (target < 300 MB)")
        server = LocalMapServer(folder / "layers", ReaderPool(), cache_bytes=512 * 1024**2)
        layer = server.layer("wasdi_bench")
        assert layer is not None
        print(f"overviews: {list(layer.overviews)}; p2/p98: {layer.stats[1][0]:.1f}/{layer.stats[1][1]:.1f}")
        full = render.Layer(**{**layer.__dict__, "overviews": ()})  # the baseline: no overviews
        style = server.style(None)

        def cold(tile: tuple[int, int, int]) -> None:
            server.tiles.drop("wasdi_bench")
            server.render_png("wasdi_bench", None, "EPSG:3857", tile_bounds(*tile), 256, 256)

        def warm(tile: tuple[int, int, int]) -> None:
            server.render_png("wasdi_bench", None, "EPSG:3857", tile_bounds(*tile), 256, 256)

        def baseline(tile: tuple[int, int, int]) -> None:
            encode_pixels(render.draw(full, style, "EPSG:3857", tile_bounds(*tile), 256, 256))

        print(f"\n{'zoom':>4} {'cold p50':>9} {'cold p99':>9} {'warm p50':>9} {'warm p99':>9} "
              f"{'no-ovr p50':>10} {'cold/no-ovr':>11}   targets: cold p50 < 100 ms, warm p50 < 10 ms")
        for z in zooms:
            tiles = grid(z)
            timed(cold, tiles[:2])  # open files once: the first request of a process is not a tile's cost
            cold_p50, cold_p99 = percentiles(timed(cold, tiles, 3))
            for tile in tiles:
                warm(tile)
            warm_p50, warm_p99 = percentiles(timed(warm, tiles, 5))
            base_p50, _ = percentiles(timed(baseline, tiles, 1))
            print(f"{z:>4} {cold_p50:>7.1f}ms {cold_p99:>7.1f}ms {warm_p50:>7.2f}ms {warm_p99:>7.2f}ms "
                  f"{base_p50:>8.1f}ms {cold_p50 / base_p50:>10.2f}x")
        whole = [grid(8)[10]]  # the zoom 8 tile holding the scene's centre: most of the scene in one tile
        scene_p50, _ = percentiles(timed(cold, whole, 5))
        scene_base, _ = percentiles(timed(baseline, whole, 3))
        print(f"   8 (one tile over most of the scene) cold p50 {scene_p50:.1f}ms, without overviews "
              f"{scene_base:.1f}ms ({scene_p50 / scene_base:.2f}x)")
        if args.compare:
            compare(args.compare, layer, zooms)
        server.close()  # its boxed readers


def compare(path: str, layer: object, zooms: list[int]) -> None:
    """rio-tiler against our WarpedVRT path, on the same prepared layer, the same tiles, coloured alike."""
    sys.path.insert(0, path)
    import numpy as np
    from rio_tiler.io import Reader

    from wasdi_server.png import encode_pixels
    from wasdi_server.providers.wms import render
    from wasdi_server.providers.wms.styles import DEFAULT

    low, high = layer.stats[1]  # type: ignore[attr-defined]

    def ours(tile: tuple[int, int, int]) -> None:
        encode_pixels(render.draw(layer, DEFAULT, "EPSG:3857", tile_bounds(*tile), 256, 256))  # type: ignore[arg-type]

    def rio_tiler(tile: tuple[int, int, int]) -> None:
        with Reader(str(layer.vrt)) as reader:  # type: ignore[attr-defined]
            try:
                image = reader.tile(*tile, tilesize=256, indexes=1)
            except Exception:  # outside the bounds: rio-tiler raises, we draw a transparent tile
                encode_pixels(np.zeros((256, 256, 4), np.uint8))
                return
        valid = image.mask > 0
        grey = render.stretch(image.data[0].astype(np.float64), valid, low, high)
        encode_pixels(np.stack([grey, grey, grey, np.where(valid, 255, 0).astype(np.uint8)], axis=-1))

    print(f"\n{'zoom':>4} {'WarpedVRT p50':>14} {'rio-tiler p50':>14} {'rio-tiler/ours':>15}")
    for z in zooms:
        tiles = grid(z)
        timed(ours, tiles[:2])
        timed(rio_tiler, tiles[:2])
        ours_p50, _ = percentiles(timed(ours, tiles, 3))
        theirs_p50, _ = percentiles(timed(rio_tiler, tiles, 3))
        print(f"{z:>4} {ours_p50:>12.1f}ms {theirs_p50:>12.1f}ms {theirs_p50 / ours_p50:>14.2f}x")


if __name__ == "__main__":
    main()
