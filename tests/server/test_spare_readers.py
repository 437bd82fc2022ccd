"""Spare readers (``ReaderPool(spares=…)``, ``map_spare_readers``): a reader started ahead with an empty folder of
its own reads a new file alone, so an import into a new workspace does not wait for that workspace's reader to
start; it sees that one file and nothing else, is used once, and is replaced."""

from __future__ import annotations

import os
import socket
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.conftest import Server
from tests.environment import require
from tests.server.geodata import folder, ingested, make_geotiff, new_workspace

from wasdi_server.domains.products.readers import stands_alone
from wasdi_server.launcher.box import world
from wasdi_server.launcher.box.readers import ReaderPool, WorldKey
from wasdi_server.providers.raster_reads import ReadJob


def until(condition: Callable[[], bool], seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "not within the deadline"
        time.sleep(0.05)


@pytest.fixture
def boxed() -> None:
    require(world.probe().works, "bubblewrap (/usr/bin/bwrap) cannot build a reader's world here: "
                                 + "; ".join(world.probe().missing()))


@pytest.fixture
def pool(tmp_path: Path, boxed: None) -> Iterator[tuple[ReaderPool, list[WorldKey]]]:
    """A boxed pool with one spare, and the worlds it started readers of (spares included)."""
    pool = ReaderPool(workers=1, seconds=60.0, wait_seconds=30.0, spares=1, spare_root=tmp_path / "readers")
    started: list[WorldKey] = []
    start = pool._start

    def recorded(key: WorldKey) -> object:
        started.append(key)
        return start(key)

    pool._start = recorded  # type: ignore[method-assign]
    try:
        yield pool, started
    finally:
        pool.close()


def folders_of(started: list[WorldKey]) -> set[str]:
    return {path for key in started for path in key[0]}


def test_a_new_file_is_read_by_a_spare_and_named_by_its_own_path(tmp_path: Path,
                                                                 pool: tuple[ReaderPool, list[WorldKey]]) -> None:
    readers, started = pool
    first = tmp_path / "first"
    first.mkdir()
    assert readers.warm((first,))  # the pool's first use starts its spare too
    until(lambda: readers.spares_ready == 1)
    spare = readers._spare_ready[0]

    new = tmp_path / "new workspace"
    new.mkdir()
    tif = make_geotiff(new / "scene.tif", count=2)
    answer = readers.read_one_file("product", tif)

    assert answer.value["readable"] and answer.value["file_name"] == "scene.tif"
    assert [band["source"] for band in answer.value["bands"]] == [str(tif), str(tif)]  # not the spare's link
    assert os.path.realpath(new) not in folders_of(started)  # no reader of the new folder was started
    assert not Path(spare.key[0][0]).exists()  # the spare's folder (and its link to the file) is gone
    assert spare.process.poll() is not None and spare.process.pid not in readers.process_ids()  # used once
    until(lambda: readers.spares_ready == 1)  # and replaced


def test_a_spare_sees_its_file_and_nothing_beside_it(tmp_path: Path, pool: tuple[ReaderPool, list[WorldKey]]) -> None:
    """A zip whose VRT member reads a file beside the zip: a reader of the folder reads it, the spare cannot."""
    readers, _ = pool
    workspace = tmp_path / "ws"
    workspace.mkdir()
    neighbour = make_geotiff(workspace / "neighbour.tif", count=1)
    archive = workspace / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        bundle.writestr("band.vrt", '<VRTDataset rasterXSize="100" rasterYSize="100"><SRS>EPSG:4326</SRS>'
                                    "<GeoTransform>10, 0.01, 0, 41, 0, -0.01</GeoTransform>"
                                    '<VRTRasterBand dataType="Float32" band="1"><SimpleSource>'
                                    f'<SourceFilename relativeToVRT="0">{neighbour}</SourceFilename>'
                                    "<SourceBand>1</SourceBand></SimpleSource></VRTRasterBand></VRTDataset>")
    assert stands_alone(archive)
    readers.warm((tmp_path,))
    until(lambda: readers.spares_ready == 1)
    by_spare = readers.read_one_file("product", archive)
    assert not by_spare.value["readable"] and by_spare.value["bands"] == []  # the neighbour is not in its world
    assert str(tmp_path / "readers") not in str(by_spare.value)  # what it says names the file by its own path

    by_folder = readers.read(ReadJob("product", (str(archive),)), read_only=(workspace,))
    assert by_folder.value["readable"], by_folder.value
    until(lambda: readers.spares_ready == 1)
    assert readers.read_one_file("product", archive).value["readable"]  # its folder's reader runs: it reads
    assert readers.spares_ready == 1


def test_without_a_spare_ready_the_folders_reader_reads(tmp_path: Path) -> None:
    pool = ReaderPool(workers=1, seconds=60.0, wait_seconds=30.0, boxed=False)  # no spares
    tif = make_geotiff(tmp_path / "scene.tif", count=1)
    try:
        answer = pool.read_one_file("product", tif)
        assert answer.value["readable"] and answer.value["bands"][0]["source"] == str(tif)
        assert pool.spares_ready == 0 and len(pool.process_ids()) == 1  # the folder's reader, kept
    finally:
        pool.close()


def test_spare_folders_of_a_server_that_ended_are_removed(tmp_path: Path) -> None:
    root = tmp_path / "readers"
    host = socket.gethostname()
    dead = root / f"4194399@{host}-abc"  # above the largest process id Linux gives
    live = root / f"{os.getpid()}@{host}-def"
    elsewhere = root / "4194399@another-machine-ghi"  # a node sharing the data folder: its own to clean
    stray = root / "not-a-spare"
    for path in (dead, live, elsewhere, stray):
        path.mkdir(parents=True)
    os.link(make_geotiff(tmp_path / "scene.tif", count=1), dead / "scene.tif")
    ReaderPool(spares=1, spare_root=root, boxed=False).close()
    assert sorted(p.name for p in root.iterdir()) == sorted([live.name, elsewhere.name])


@pytest.mark.parametrize("layout, alone", [
    ({"x.tif": "tiff"}, True),
    ({"x.zip": "zip", "other.tif": "tiff"}, True),
    ({"x.tif": "tiff", "x.tif.aux.xml": "<PAMDataset/>"}, False),
    ({"x.tif": "tiff", "x.tfw": "1\n0\n0\n-1\n0\n0\n"}, False),
    ({"x.tif": "tiff", "x.tif.ovr": "tiff"}, False),
    ({"x.vrt": "<VRTDataset/>"}, False),
    ({"x.tif": "\n <VRTDataset/>"}, False),
    ({"x.img": "hfa", "x.hdr": "ENVI"}, False),
    ({"x.dim": "<Dimap_Document/>"}, False),
])
def test_what_stands_alone(tmp_path: Path, layout: dict[str, str], alone: bool) -> None:
    for name, text in layout.items():
        (tmp_path / name).write_text(text)
    assert stands_alone(tmp_path / next(iter(layout))) is alone


def test_a_link_and_a_folder_do_not_stand_alone(tmp_path: Path) -> None:
    make_geotiff(tmp_path / "real.tif", count=1)
    (tmp_path / "link.tif").symlink_to(tmp_path / "real.tif")
    (tmp_path / "folder.tif").mkdir()
    assert not stands_alone(tmp_path / "link.tif") and not stands_alone(tmp_path / "folder.tif")


def test_an_ingestion_by_a_spare_records_the_product_as_its_workspace_reader_would(tmp_path: Path,
                                                                                  boxed: None) -> None:
    server = Server(tmp_path / "data", map_spare_readers=1)
    try:
        alice = server.add_user("alice@example.org")
        first = new_workspace(server, alice, "first")
        ingested(server, alice, first, make_geotiff(tmp_path / "a.tif", count=2))
        reads = server.services.products.reads
        until(lambda: reads.spares_ready == 1)
        started: list[WorldKey] = []
        start = reads._start
        reads._start = lambda key: (started.append(key), start(key))[1]

        second = new_workspace(server, alice, "second")
        record = ingested(server, alice, second, make_geotiff(tmp_path / "b.tif", count=2))
        assert os.path.realpath(folder(server, second)) not in folders_of(started)
        assert [(b["name"], b["source"], b["width"]) for b in record["bands"]] == [("red", "", 100),
                                                                                   ("band_2", "", 100)]
        assert record["readable"] and record["bbox"]
    finally:
        server.close()
