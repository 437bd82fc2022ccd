"""A product's files in a workspace folder: its name from its file name, the mission a file name belongs to,
the sidecar files that go with it, and the file chores (reading in chunks, removing, this server's partial files).

Sidecars deleted with a product: ``<file>.aux.xml``, ``<file>.ovr``, ``<file>.msk``; the ``.hdr`` of an ENVI
``.img``/``.bin``/``.dat``; ``.dbf .shx .prj .cpg .sbn .sbx .qix .shp.xml`` of a shapefile; the ``.prj`` of an
``.asc``; ``.gbx9``/``.ncx4`` of a GRIB; ``.data`` of a ``.dim``; the world files of images
(``.tfw .jgw .pgw .wld``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from ...paths import MAX_NAME_BYTES, name_bytes


def stem_of(file_name: str) -> str:
    """The file name without its last extension (the product ``name``)."""
    stem, dot, _ = file_name.rpartition(".")
    return stem if dot and stem else file_name


PLATFORM_PREFIXES: tuple[tuple[str, str], ...] = (
    ("S1A_", "Sentinel-1"), ("S1B_", "Sentinel-1"), ("S1C_", "Sentinel-1"), ("S1D_", "Sentinel-1"),
    ("S1_", "Sentinel-1"),
    ("S2A_", "Sentinel-2"), ("S2B_", "Sentinel-2"), ("S2C_", "Sentinel-2"), ("S2_", "Sentinel-2"),
    ("S3A_", "Sentinel-3"), ("S3B_", "Sentinel-3"), ("S3_", "Sentinel-3"),
    ("S5P_", "Sentinel-5P"), ("S6A_", "Sentinel-6"), ("S6_", "Sentinel-6"),
    ("LC08_", "Landsat-*"), ("LC09_", "Landsat-*"), ("LO08_", "Landsat-*"), ("LT08_", "Landsat-*"),
    ("LE07_", "Landsat-7"), ("LT05_", "Landsat-5"),
    ("ENV_", "Envisat"), ("ASA_", "Envisat"), ("MER_", "Envisat"),
    ("VIIRS", "VIIRS"), ("RIVER-FLD", "VIIRS"),
    ("ERA5", "ERA5"), ("CAMS", "CAMS"),
    ("COPERNICUS_DSM", "DEM"), ("COPERNICUS_30", "DEM"), ("COP-DEM", "DEM"),
    ("ESA_WORLDCOVER", "WorldCover"),
)


def infer_platform(file_name: str | None) -> str | None:
    """The mission (``platformname`` value) a file name belongs to, from its prefix; ``None`` if unknown."""
    if not file_name:
        return None
    upper = file_name.upper()
    for prefix, platform in PLATFORM_PREFIXES:
        if upper.startswith(prefix):
            return platform
    return None


def sidecars(folder: Path, file_name: str) -> list[Path]:
    """Files (and the ``.data`` folder of a SNAP product) that belong to ``file_name`` in ``folder``."""
    stem = stem_of(file_name)
    suffix = Path(file_name).suffix.lower()
    names = [f"{file_name}.aux.xml", f"{file_name}.ovr", f"{file_name}.msk", f"{stem}.aux.xml"]
    if suffix in (".img", ".bin", ".dat", ".bil", ".bsq", ".bip", ".envi", ""):
        names += [f"{stem}.hdr", f"{file_name}.hdr"]
    if suffix == ".shp":
        names += [f"{stem}{ext}" for ext in (".dbf", ".shx", ".prj", ".cpg", ".sbn", ".sbx", ".qix", ".shp.xml",
                                              ".qmd")]
    if suffix == ".asc":
        names += [f"{stem}.prj"]
    if suffix in (".grib", ".grb", ".grib2"):
        names += [f"{file_name}.gbx9", f"{file_name}.ncx4"]
    if suffix == ".dim":
        names += [f"{stem}.data"]
    if suffix in (".tif", ".tiff", ".jpg", ".jpeg", ".png"):
        names += [f"{stem}{ext}" for ext in (".tfw", ".tifw", ".jgw", ".pgw", ".wld")]
    found = []
    for name in dict.fromkeys(names):
        if name == file_name or "/" in name or "\\" in name or name_bytes(name) > MAX_NAME_BYTES:
            continue  # a name no file system takes names no file
        path = folder / name
        if path.exists() or path.is_symlink():
            found.append(path)
    return found


def iter_file(path: Path, chunk_size: int = 1024 * 1024) -> Iterator[bytes]:
    """The bytes of ``path`` in chunks (closes the file at the end or when the consumer stops)."""
    with open(path, "rb") as handle:
        while True:
            chunk = handle.read(chunk_size)
            if not chunk:
                return
            yield chunk


def is_hidden_temp(name: str) -> bool:
    """Names of this server's own partial files in workspace folders (uploads and imports in flight)."""
    return name.startswith(".") and name.endswith(".part")


def safe_unlink(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir() and not path.is_symlink():
            import shutil

            shutil.rmtree(path, ignore_errors=True)
        else:
            os.unlink(path)
