"""The phases an import logs (``launcher/phases.py``), which bench/search.py reads back, and a read of a world whose
reader is being started ahead (an import's ingestion) waiting for that reader rather than starting a second."""

from __future__ import annotations

import time
from pathlib import Path

from tests.server.geodata import make_geotiff

from wasdi_server.launcher.box.readers import ReaderPool
from wasdi_server.launcher.phases import Phases, parse_phases
from wasdi_server.providers.raster_reads import ReadJob


def test_the_phases_line_reads_back() -> None:
    phases = Phases()
    phases.add("pick-up", 0.012)
    with phases.timing("ingestion read"):
        time.sleep(0.01)
    phases.add("pick-up", 0.003)  # a phase timed twice adds up
    line = f"import of a.tif, 10 bytes: {phases.line()}"
    found = parse_phases(line)
    assert list(found) == ["pick-up", "ingestion read"]
    assert abs(found["pick-up"] - 0.015) < 1e-9 and 0.009 < found["ingestion read"] < 1
    assert parse_phases("no phases here") == {}


def test_a_read_of_a_world_being_warmed_takes_that_reader(tmp_path: Path) -> None:
    pool = ReaderPool(workers=2, seconds=60.0, wait_seconds=5.0, boxed=False)
    tif = make_geotiff(tmp_path / "scene.tif", count=1)
    try:
        assert pool.warm((tmp_path,))
        # asked at once, while the reader starts (importing GDAL takes far longer than this): a free slot is left
        answer = pool.read(ReadJob("product", (str(tif),)), read_only=(tmp_path,))
        assert answer.value["readable"]
        assert len(pool.process_ids()) == 1  # the warmed one; not a second reader of the same folder
    finally:
        pool.close()
