"""Map tiles drawn by boxed readers: against today's unboxed draw, and against TiTiler over HTTP.

One run (bench/README.md, "map_readers.py"):
1. writes a 10,980 x 10,980 uint16 GeoTIFF (a Sentinel-2 tile's size: UTM 32N, 10 m, tiled 512) and a COG of
   it (GDAL's COG driver: internal overviews), in a temporary folder;
2. for each, makes a data directory where a user's workspace holds it as a product with band 1 published
   (in this process, through the server's own services);
3. boxed ÷ unboxed: 256 x 256 EPSG:3857 tiles over a 4 x 4 grid at zooms 10, 12 and 14, each drawn cold (the
   tile cache emptied) by ``LocalMapServer.render_png`` over boxed readers (a bubblewrap world, the reference
   checks, the queue, the pipe); baseline: the same tiles drawn as today's draw worker drew them
   (``render.draw_map`` opening the layer for each tile), in this process, so without even the pipe;
4. with ``--titiler VENV`` (a virtual environment where ``titiler.application`` and ``uvicorn`` are
   installed: ``python -m venv V && V/bin/pip install titiler.application uvicorn``), ``wasdi-server serve``
   and TiTiler (uvicorn, 127.0.0.1) serve the same file; 20 distinct tiles asked at once (the time until the
   last, and how many were drawn), then ``--clients`` clients for ``--seconds`` on distinct tiles (tiles/s).
   Both stretch the band between the same 2nd and 98th percentiles into a 256 x 256 PNG.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

SIZE = 10_980
ORIGIN = (300_000.0, 5_100_000.0)
PIXEL = 10.0
USER = "bench@example.org"
PASSWORD = "bench-password-1"
SRC = Path(__file__).resolve().parent.parent / "src"
EXTENT = 20037508.342789244


def make_scenes(folder: Path) -> dict[str, Path]:
    import numpy as np
    import rasterio
    import rasterio.shutil
    from rasterio.transform import from_origin
    from rasterio.windows import Window

    plain = folder / "plain.tif"
    profile = {"driver": "GTiff", "width": SIZE, "height": SIZE, "count": 1, "dtype": "uint16",
               "crs": "EPSG:32632", "transform": from_origin(*ORIGIN, PIXEL, PIXEL), "nodata": 0,
               "tiled": True, "blockxsize": 512, "blockysize": 512}
    with rasterio.open(plain, "w", **profile) as dst:
        for row in range(0, SIZE, 1098):  # in strips: the bench's own memory stays small
            rows = min(1098, SIZE - row)
            r = np.arange(row, row + rows, dtype=np.float32)[:, None]
            c = np.arange(SIZE, dtype=np.float32)[None, :]
            data = 2000 + np.sin(r / 700) * 900 + np.cos(c / 900) * 900 + r * 0.05
            dst.write(data.astype(np.uint16), 1, window=Window(0, row, SIZE, rows))
    cog = folder / "cog.tif"
    with rasterio.Env(GDAL_NUM_THREADS="2"):
        rasterio.shutil.copy(plain, cog, driver="COG", BLOCKSIZE=512, OVERVIEW_RESAMPLING="NEAREST")
    return {"plain": plain, "COG": cog}


def tile_bounds(x: int, y: int, z: int) -> tuple[float, float, float, float]:
    size = 2 * EXTENT / 2**z
    return -EXTENT + x * size, EXTENT - (y + 1) * size, -EXTENT + (x + 1) * size, EXTENT - y * size


def scene_tiles(z: int) -> list[tuple[int, int, int]]:
    """Every tile of zoom ``z`` inside the scene (its web-mercator box shrunk by a tile)."""
    from rasterio.warp import transform_bounds

    west, south, east, north = transform_bounds("EPSG:32632", "EPSG:4326", ORIGIN[0], ORIGIN[1] - SIZE * PIXEL,
                                                ORIGIN[0] + SIZE * PIXEL, ORIGIN[1])
    n = 2**z

    def xy(lon: float, lat: float) -> tuple[int, int]:
        return int((lon + 180) / 360 * n), int((1 - math.asinh(math.tan(math.radians(lat))) / math.pi) / 2 * n)

    x0, y0 = xy(west, north)
    x1, y1 = xy(east, south)
    return [(x, y, z) for y in range(y0 + 1, y1) for x in range(x0 + 1, x1)]


def centre_grid(z: int) -> list[tuple[int, int, int]]:
    tiles = scene_tiles(z)
    xs = sorted({t[0] for t in tiles})
    ys = sorted({t[1] for t in tiles})
    cx, cy = xs[len(xs) // 2], ys[len(ys) // 2]
    return [(cx + dx, cy + dy, z) for dy in range(-2, 2) for dx in range(-2, 2)]


def p50_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def prepare(data_dir: Path, scene: Path) -> tuple[str, str, tuple[float, float]]:
    """A data directory whose user's workspace holds ``scene`` with band 1 published: (workspace, layer, stats)."""
    from wasdi_server.app import create_app
    from wasdi_server.settings import load_settings

    settings = load_settings(data_dir=data_dir, environ={}, package_index_url="")
    app = create_app(settings)
    services = app.services
    try:
        services.users.add(USER, PASSWORD, name="Bench", surname="Bench")
        services.subscriptions.create_trial(USER)
        workspace = services.workspaces.create(services.users.active_user(USER), "bench")
        shutil.copy(scene, services.workspaces.folder(workspace) / scene.name)
        record = services.products.ingest_file(workspace, scene.name)
        band = record["bands"][0]["name"]
        result = services.products.publish(workspace["workspaceId"], scene.name, band, None, "http://127.0.0.1")
        layer = services.maps.map_server.layer(result["layerId"])
        return workspace["workspaceId"], result["layerId"], layer.stats[1]
    finally:
        services.close()


def todays_draw_worker(connection: Any) -> None:
    """Today's draw worker, as it was before the readers: a plain process at niceness 10 that opens the layer
    for each map and answers its PNG over a pipe (no box, no reference checks, no dataset kept open)."""
    os.nice(10)
    os.environ.setdefault("GDAL_CACHEMAX", "128")
    from wasdi_server.providers.wms import render

    while True:
        try:
            layers, bbox = connection.recv()
        except EOFError:
            return
        connection.send_bytes(render.draw_map(layers, "EPSG:3857", bbox, 256, 256))


def boxed_vs_unboxed(data_dir: Path, layer_id: str) -> None:
    import multiprocessing

    from wasdi_server.launcher.box.readers import ReaderPool
    from wasdi_server.providers.mapserver import LocalMapServer

    draws: dict[str, Callable[[tuple[int, int, int]], None]] = {}
    servers = []
    for name, boxed in (("boxed", True), ("unboxed pool", False)):
        server = LocalMapServer(data_dir / "layers", ReaderPool(boxed=boxed), cache_bytes=64 * 1024**2)
        servers.append(server)

        def cold(tile: tuple[int, int, int], server: LocalMapServer = server) -> None:
            server.tiles.drop(layer_id)
            server.render_png(layer_id, None, "EPSG:3857", tile_bounds(*tile), 256, 256)

        draws[name] = cold
    layer = servers[0].layer(layer_id)
    assert layer is not None
    style = servers[0].style(None)
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    worker = multiprocessing.get_context("spawn").Process(target=todays_draw_worker, args=(theirs,), daemon=True)
    worker.start()

    def today(tile: tuple[int, int, int]) -> None:
        ours.send((((layer, style),), tile_bounds(*tile)))
        ours.recv_bytes()

    draws["today"] = today
    print(f"  {'zoom':>4} {'today p50':>10} {'boxed p50':>10} {'unboxed pool p50':>17} {'boxed/today':>12} "
          "  target: boxed/today <= 1.2")
    every: dict[str, list[float]] = {name: [] for name in draws}
    for z in (10, 12, 14):
        tiles = centre_grid(z)
        samples: dict[str, list[float]] = {name: [] for name in draws}
        for draw in draws.values():
            for tile in tiles[:2]:
                draw(tile)  # a reader started, files opened: not a tile's cost
        for _ in range(4):
            for tile in tiles:  # the three in turn, tile by tile: a shared machine's noise falls on all alike
                for name, draw in draws.items():
                    start = time.perf_counter()
                    draw(tile)
                    samples[name].append(time.perf_counter() - start)
        row = {name: p50_ms(values) for name, values in samples.items()}
        for name, values in samples.items():
            every[name] += values
        print(f"  {z:>4} {row['today']:>8.1f}ms {row['boxed']:>8.1f}ms {row['unboxed pool']:>15.1f}ms "
              f"{row['boxed'] / row['today']:>11.2f}x")
    whole = {name: p50_ms(values) for name, values in every.items()}
    print(f"   all {whole['today']:>8.1f}ms {whole['boxed']:>8.1f}ms {whole['unboxed pool']:>15.1f}ms "
          f"{whole['boxed'] / whole['today']:>11.2f}x")
    ours.close()
    worker.join(5)
    for server in servers:
        server.close()


def timed(call: Callable[[tuple[int, int, int]], None], tiles: list[tuple[int, int, int]]) -> list[float]:
    samples = []
    for tile in tiles:
        start = time.perf_counter()
        call(tile)
        samples.append(time.perf_counter() - start)
    return samples


# -- over HTTP -------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_until_up(port: int, path: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            connection.request("GET", path)
            if connection.getresponse().status < 500:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"a server did not start: {log.read_text()[-2000:]}")


class Tiles:
    """Asks one server for tiles: ``path(tile)`` is the request line's path."""

    def __init__(self, port: int, path: Callable[[tuple[int, int, int]], str], headers: dict[str, str]) -> None:
        self.port, self.path, self.headers = port, path, headers
        self.local = threading.local()

    def get(self, tile: tuple[int, int, int]) -> int:
        connection = getattr(self.local, "connection", None)
        if connection is None:
            connection = self.local.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            connection.request("GET", self.path(tile), headers=self.headers)
            answer = connection.getresponse()
            body = answer.read()
        except OSError:
            self.local.connection = None
            return 0
        return answer.status if body[:4] == b"\x89PNG" else -answer.status


def burst(tiles: Tiles, chosen: list[tuple[int, int, int]]) -> tuple[float, int]:
    """The time until the last of ``chosen`` asked at once, and how many came back as PNGs."""
    def one(tile: tuple[int, int, int]) -> int:
        return Tiles(tiles.port, tiles.path, tiles.headers).get(tile)

    start = time.perf_counter()
    with ThreadPoolExecutor(len(chosen)) as pool:
        statuses = list(pool.map(one, chosen))
    return time.perf_counter() - start, statuses.count(200)


def sustained(tiles: Tiles, pool_of_tiles: list[tuple[int, int, int]], clients: int, seconds: float) -> float:
    """Tiles per second drawn by ``clients`` clients asking back to back, each tile asked once."""
    lock = threading.Lock()
    queue = list(reversed(pool_of_tiles))
    drawn = [0]
    stop = time.monotonic() + seconds

    def client() -> None:
        while time.monotonic() < stop:
            with lock:
                if not queue:
                    return
                tile = queue.pop()
            if tiles.get(tile) == 200:
                with lock:
                    drawn[0] += 1

    start = time.monotonic()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return drawn[0] / (time.monotonic() - start)


def against_titiler(venv: Path, data_dir: Path, scene: Path, layer_id: str, stats: tuple[float, float],
                    clients: int, seconds: float, workdir: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("WASDI_SERVER_")}
    env["PYTHONPATH"] = str(SRC)
    env["WASDI_SERVER_SFTP_PORT"] = "0"
    ours_port, titiler_port = free_port(), free_port()
    ours_log, titiler_log = workdir / "wasdi.log", workdir / "titiler.log"
    ours = subprocess.Popen([sys.executable, "-m", "wasdi_server", "serve", "--data-dir", str(data_dir), "--host",
                             "127.0.0.1", "--port", str(ours_port), "--broker-port", str(free_port())],
                            env=env, stdout=ours_log.open("wb"), stderr=subprocess.STDOUT)
    titiler_env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/tmp"),
                   "GDAL_CACHEMAX": "128", "GDAL_DISABLE_READDIR_ON_OPEN": "TRUE", "WEB_CONCURRENCY": "1"}
    titiler = subprocess.Popen([str(venv / "bin" / "uvicorn"), "titiler.application.main:app", "--host",
                                "127.0.0.1", "--port", str(titiler_port), "--log-level", "warning"],
                               env=titiler_env, stdout=titiler_log.open("wb"), stderr=subprocess.STDOUT)
    try:
        wait_until_up(ours_port, "/wasdi/hello", ours, ours_log)
        wait_until_up(titiler_port, "/healthz", titiler, titiler_log)
        connection = http.client.HTTPConnection("127.0.0.1", ours_port, timeout=30)
        connection.request("POST", "/auth/login", json.dumps({"userId": USER, "userPassword": PASSWORD}),
                           {"Content-Type": "application/json"})
        token = json.loads(connection.getresponse().read())["sessionId"]
        low, high = stats

        def ours_path(tile: tuple[int, int, int]) -> str:
            box = ",".join(f"{v:.6f}" for v in tile_bounds(*tile))
            return (f"/wms?service=WMS&request=GetMap&version=1.1.1&layers={layer_id}&styles=&srs=EPSG:3857"
                    f"&bbox={box}&width=256&height=256&format=image/png&transparent=true")

        def titiler_path(tile: tuple[int, int, int]) -> str:
            x, y, z = tile
            return (f"/cog/tiles/WebMercatorQuad/{z}/{x}/{y}.png?url={scene}&bidx=1&rescale={low:.3f},{high:.3f}"
                    "&tilesize=256")

        servers = {"wasdi": Tiles(ours_port, ours_path, {"x-session-token": token}),
                   "TiTiler": Tiles(titiler_port, titiler_path, {})}
        every = [t for z in (11, 12, 13, 14) for t in scene_tiles(z)]
        used = {name: 0 for name in servers}

        def fresh(name: str, count: int) -> list[tuple[int, int, int]]:
            # each server gets tiles it never drew (no cache of ours helps); both the same ones
            start = used[name]
            used[name] += count
            return every[start:start + count]

        for name, tiles in servers.items():  # a reader started, files opened, on each side
            burst(tiles, fresh(name, 4))
        firsts = {}
        for name, tiles in servers.items():
            firsts[name] = burst(tiles, fresh(name, 20))
        (ours_s, ours_ok), (their_s, their_ok) = firsts["wasdi"], firsts["TiTiler"]
        print(f"  20 tiles at once: wasdi {ours_ok}/20 drawn, last after {ours_s * 1000:.0f} ms; TiTiler "
              f"{their_ok}/20, last after {their_s * 1000:.0f} ms; wasdi/TiTiler {ours_s / their_s:.2f}x "
              "(target <= 1)")
        rates = {}
        for name, tiles in servers.items():
            rates[name] = sustained(tiles, fresh(name, 100_000), clients, seconds)
        print(f"  {clients} clients for {seconds:g} s on distinct tiles: wasdi {rates['wasdi']:.1f} tiles/s, "
              f"TiTiler {rates['TiTiler']:.1f} tiles/s; wasdi/TiTiler {rates['wasdi'] / rates['TiTiler']:.2f}x "
              "(target >= 1)")
    finally:
        for proc in (ours, titiler):
            proc.terminate()
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--titiler", default="", help="a virtual environment with titiler.application and uvicorn")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wasdi-bench-readers-") as temp:
        workdir = Path(temp)
        start = time.perf_counter()
        scenes = make_scenes(workdir)
        print(f"scenes: {SIZE}x{SIZE} uint16, plain tiled GeoTIFF and COG, written in "
              f"{time.perf_counter() - start:.0f} s")
        for kind, scene in scenes.items():
            data_dir = workdir / f"data-{kind}"
            _, layer_id, stats = prepare(data_dir, scene)
            print(f"\n{kind}: published, p2/p98 {stats[0]:.0f}/{stats[1]:.0f}")
            boxed_vs_unboxed(data_dir, layer_id)
            if args.titiler:
                against_titiler(Path(args.titiler), data_dir, scene, layer_id, stats, args.clients, args.seconds,
                                workdir)


if __name__ == "__main__":
    main()

