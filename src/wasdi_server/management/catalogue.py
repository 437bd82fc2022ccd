"""Filling the built-in ``LOCAL`` search catalogue: real files, or a small generated sample.

The catalogue is a folder (``search_catalogue_dir``, default ``<data_dir>/catalogue``) that the
``LOCAL`` provider re-lists on every search, so files added here are found at once, also by a
running server, with the footprint, dates and platform the provider reads (``providers/search/local.py``).
It is also the one folder ``file://`` imports may read, so what a search finds can be imported.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from ..search_grammar import PLATFORMS, canonical_platform
from ..settings import Settings

if TYPE_CHECKING:
    from ..providers.search.local import LocalCatalogue, Product

GEO_HINT = "install the geo extra (pip install 'wasdi-toolkit[geo]')"


class CatalogueError(Exception):
    """A file that cannot be added, with what to do about it."""


@dataclass(frozen=True)
class SampleScene:
    name: str
    bbox: tuple[float, float, float, float]
    """west, south, east, north (WGS84)."""
    cloud: float | None


SAMPLE_SCENES = (
    SampleScene("S2A_MSIL2A_20240108T103351_N0510_R108_T32TLR_20240108T130507.tif", (7.0, 45.0, 7.6, 45.6), 12.0),
    SampleScene("S2B_MSIL2A_20240113T103319_N0510_R108_T32TLR_20240113T124811.tif", (7.2, 45.2, 7.8, 45.8), 64.0),
    SampleScene("S2A_MSIL2A_20240118T103331_N0510_R108_T32TMR_20240118T131042.tif", (7.4, 45.3, 8.0, 45.9), 3.5),
    SampleScene("S1A_IW_GRDH_1SDV_20240110T053412_20240110T053437_052000_064A2B_1C3D.tif", (6.8, 45.1, 7.9, 45.9),
                None),
)
"""A few small scenes over the western Po valley, January 2024 (the README tour searches them)."""


def folder_of(settings: Settings) -> Path:
    configured = settings.search_catalogue_dir
    if configured:
        path = Path(configured).expanduser()
        return path if path.is_absolute() else Path(settings.data_dir) / path
    return Path(settings.data_dir) / "catalogue"


def describe(product: Product) -> str:
    when = product.begin.strftime("%Y-%m-%d %H:%M") if isinstance(product.begin, datetime) else "no date"
    box = (",".join(f"{v:g}" for v in product.bbox) if product.bbox else "no footprint")
    return f"{product.title}  {product.platform or 'no platform'}  {when}  bbox {box}"


def _provider(folder: Path) -> LocalCatalogue:
    # Imported here: the services package and the search providers import each other.
    from ..providers.search import LOCAL
    from ..providers.search.local import LocalCatalogue

    return LocalCatalogue(LOCAL, folder=folder)


def _read(folder: Path, path: Path) -> Product:
    provider = _provider(folder)
    st = path.stat()
    return provider._product_of_file(folder, path, st.st_mtime, None if path.is_dir() else st.st_size)


def add(settings: Settings, files: list[Path], *, platform: str | None = None, move: bool = False) -> list[Product]:
    """Copy (or move) ``files`` into the catalogue; what the search will know of each.

    A file whose platform cannot be told from its name or tags needs ``platform``; it is then kept
    in the catalogue's ``<platform>/`` sub-folder, which is how the provider reads it.
    """
    folder = folder_of(settings)
    chosen = canonical_platform(platform) if platform else None
    if chosen is not None and chosen not in PLATFORMS:
        raise CatalogueError(f"unknown platform {platform!r}; use one of {', '.join(PLATFORMS[:8])} ...")
    added = []
    for source in files:
        if not source.exists():
            raise CatalogueError(f"{source} does not exist")
        target_dir = folder / chosen if chosen else folder
        target = target_dir / source.name
        if target.exists():
            raise CatalogueError(f"{source.name} is already in the catalogue ({target})")
        probe = _read(source.parent, source)
        if chosen is None and not probe.platform:
            raise CatalogueError(f"cannot tell the platform of {source.name} from its name or tags; "
                                 "give it with --platform (e.g. --platform Sentinel-2)")
        target_dir.mkdir(parents=True, exist_ok=True)
        if move:
            shutil.move(str(source), target)
        elif source.is_dir():
            shutil.copytree(source, target)
        else:
            shutil.copy2(source, target)
        added.append(_read(folder, target))
    return added


def sample(settings: Settings, *, if_empty: bool = False) -> list[Product]:
    """Write the sample scenes (small GeoTIFFs) into the catalogue; those written."""
    folder = folder_of(settings)
    if if_empty and folder.is_dir() and any(folder.iterdir()):
        return []
    try:
        import numpy
        import rasterio
        from rasterio.transform import from_bounds
    except ImportError as e:
        raise CatalogueError(f"the sample scenes are GeoTIFFs: {GEO_HINT}") from e
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    size = 64
    for number, scene in enumerate(SAMPLE_SCENES):
        path = folder / scene.name
        if path.exists():
            continue
        bands = 2 if scene.name.startswith("S1") else 3
        ramp = numpy.add.outer(numpy.arange(size), numpy.arange(size)).astype("uint16") * (number + 1) * 10
        tags = {"cloudCover": f"{scene.cloud:g}"} if scene.cloud is not None else {}
        with rasterio.open(path, "w", driver="GTiff", width=size, height=size, count=bands, dtype="uint16",
                           crs="EPSG:4326", transform=from_bounds(*scene.bbox, size, size)) as dst:
            for band in range(1, bands + 1):
                dst.write(ramp + band * 100, band)
            dst.update_tags(**tags)
        written.append(_read(folder, path))
    return written


def listing(settings: Settings) -> list[Product]:
    folder = folder_of(settings)
    if not folder.is_dir():
        return []
    return sorted(_provider(folder).products(), key=lambda p: p.title)
