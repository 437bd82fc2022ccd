"""What a raster names besides itself is checked before GDAL opens it: every door GDAL follows (VRT sources and
raw bands, relative names, external overviews, ``.aux.xml``, headers, archives, virtual file systems, driver
prefixes, Python pixel functions) is refused when it leads outside the reader's folders, and left open inside."""

from __future__ import annotations

import os
import zipfile
from pathlib import Path

import pytest

from wasdi_server.launcher.box.raster_references import ReferenceRefused, check


def vrt(source: str, relative: bool = False) -> str:
    return (f'<VRTDataset rasterXSize="10" rasterYSize="10"><VRTRasterBand dataType="Byte" band="1"><SimpleSource>'
            f'<SourceFilename relativeToVRT="{int(relative)}">{source}</SourceFilename><SourceBand>1</SourceBand>'
            "</SimpleSource></VRTRasterBand></VRTDataset>")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "theirs.tif").write_bytes(b"II*\x00theirs")
    (tmp_path / "ws" / "mine.tif").write_bytes(b"II*\x00mine")
    return tmp_path / "ws"


def refused(path: Path | str, ws: Path) -> str:
    with pytest.raises(ReferenceRefused) as error:
        check(str(path), [ws])
    assert str(ws.parent) not in str(error.value)  # the server's folders are never named
    return str(error.value)


def test_files_that_name_only_files_of_the_workspace_are_read(ws: Path) -> None:
    (ws / "a.vrt").write_text(vrt(str(ws / "mine.tif")))
    (ws / "b.vrt").write_text(vrt("mine.tif", relative=True))
    (ws / "c.vrt").write_text(vrt("b.vrt", relative=True))  # a VRT of a VRT
    (ws / "mine.tif.aux.xml").write_text("<PAMDataset><Metadata><MDI key='a'>b</MDI></Metadata></PAMDataset>")
    with zipfile.ZipFile(ws / "pack.zip", "w") as pack:
        pack.writestr("in.tif", b"II*\x00")
    for name in ("mine.tif", "a.vrt", "b.vrt", "c.vrt"):
        check(str(ws / name), [ws])
    check(f"/vsizip/{ws / 'pack.zip'}/in.tif", [ws])


@pytest.mark.parametrize("source", ["/etc/passwd", "../other/theirs.tif", "/vsicurl/http://example.org/x.tif",
                                    "/vsis3/bucket/x.tif", "MEM:::DATAPOINTER=0x1000,PIXELS=10,LINES=10",
                                    "vrt://../other/theirs.tif", 'NETCDF:"/etc/passwd":x', "/vsizip//etc/x.zip/a"])
def test_a_vrt_naming_anything_else_is_refused(ws: Path, source: str) -> None:
    (ws / "evil.vrt").write_text(vrt(source, relative=source.startswith("..")))
    refused(ws / "evil.vrt", ws)


def test_a_raw_band_outside_is_refused(ws: Path) -> None:
    (ws / "raw.vrt").write_text('<VRTDataset rasterXSize="4" rasterYSize="1"><VRTRasterBand dataType="Byte" band="1" '
                                'subClass="VRTRawRasterBand"><SourceFilename relativetoVRT="1">../other/theirs.tif'
                                "</SourceFilename></VRTRasterBand></VRTDataset>")
    assert "theirs.tif" in refused(ws / "raw.vrt", ws)


def test_a_chain_of_vrts_leading_outside_is_refused(ws: Path) -> None:
    (ws / "inner.vrt").write_text(vrt("/etc/passwd"))
    (ws / "outer.vrt").write_text(vrt("inner.vrt", relative=True))
    refused(ws / "outer.vrt", ws)


def test_a_python_pixel_function_and_entities_are_refused(ws: Path) -> None:
    (ws / "py.vrt").write_text('<VRTDataset rasterXSize="1" rasterYSize="1"><VRTRasterBand dataType="Byte" band="1" '
                               'subClass="VRTDerivedRasterBand"><PixelFunctionLanguage>Python</PixelFunctionLanguage>'
                               "<PixelFunctionCode>import os</PixelFunctionCode></VRTRasterBand></VRTDataset>")
    assert "pixel function" in refused(ws / "py.vrt", ws)
    (ws / "ent.vrt").write_text('<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><VRTDataset>&e;</VRTDataset>')
    refused(ws / "ent.vrt", ws)


def test_sidecars_gdal_looks_for_are_checked(ws: Path, tmp_path: Path) -> None:
    """An external overview linked to another user's file, an overview that is a VRT, a ``.aux.xml`` naming a
    file, an ENVI-style header naming a path: each makes the product unreadable."""
    os.symlink(tmp_path / "other" / "theirs.tif", ws / "mine.tif.ovr")
    assert "mine.tif.ovr" in refused(ws / "mine.tif", ws)
    (ws / "mine.tif.ovr").unlink()
    (ws / "mine.tif.ovr").write_text(vrt("/etc/passwd"))
    refused(ws / "mine.tif", ws)
    (ws / "mine.tif.ovr").unlink()
    (ws / "mine.tif.aux.xml").write_text(f"<PAMDataset>{vrt('/etc/shadow')}</PAMDataset>")
    refused(ws / "mine.tif", ws)
    (ws / "mine.tif.aux.xml").unlink()
    (ws / "band.img").write_bytes(b"\x00" * 16)
    (ws / "band.hdr").write_text("ENVI\nsamples = 4\nlines = 4\ndata file = /etc/passwd\n")
    refused(ws / "band.img", ws)
    (ws / "band.hdr").write_text("ENVI\nsamples = 4\nlines = 4\nbands = 1\ndata type = 1\n")
    check(str(ws / "band.img"), [ws])


def test_a_link_out_of_the_workspace_and_a_vrt_inside_a_zip_are_refused(ws: Path, tmp_path: Path) -> None:
    os.symlink(tmp_path / "other" / "theirs.tif", ws / "link.tif")
    refused(ws / "link.tif", ws)
    with zipfile.ZipFile(ws / "pack.zip", "w") as pack:
        pack.writestr("evil.vrt", vrt(str(tmp_path / "other" / "theirs.tif")))
    refused(f"/vsizip/{ws / 'pack.zip'}/evil.vrt", ws)
