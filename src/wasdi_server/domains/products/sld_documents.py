"""SLD documents: a style's file read safely, the one SLD of an uploaded zip, its digest, and the colours of
its preview.

- an SLD is parsed with ``defusedxml`` (no entity expansion, no external references) and must be
  well-formed XML whose root element is ``StyledLayerDescriptor`` (any namespace); else 400.  At most
  1 MiB (``MAX_STYLE_BYTES``, what the map server reads);
- a zip must hold exactly one ``.sld`` (macOS resource forks aside), within that size, in a compression
  this server reads; its entry names never become paths.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import xml.etree.ElementTree as StdElementTree
import zipfile
import zlib
from pathlib import Path
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeElementTree

from ...errors import BadRequest
from ...providers.mapserver import MAX_SLD_BYTES
from ...providers.wms.styles import RGBA, RasterStyle

MAX_STYLE_BYTES = MAX_SLD_BYTES
"""The largest SLD accepted: what the map server reads (1 MiB; SLD files are a few KiB)."""


def local_name(tag: Any) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def parse_sld(path: Path) -> StdElementTree.Element:
    """The root of a well-formed SLD file, parsed safely; ``BadRequest`` otherwise."""
    try:
        tree = SafeElementTree.parse(str(path))
    except DefusedXmlException as e:
        raise BadRequest(f"the SLD is refused: {type(e).__name__}") from e
    except (StdElementTree.ParseError, ValueError, UnicodeError) as e:
        raise BadRequest(f"the SLD is not well-formed XML: {str(e)[:120]}") from e
    root = tree.getroot()
    if root is None or local_name(root.tag) != "StyledLayerDescriptor":
        raise BadRequest("not an SLD: the root element must be StyledLayerDescriptor")
    return root


def preview_colors(style: RasterStyle) -> tuple[list[RGBA], bool]:
    """The colours of a style's preview, and whether they blend (a ramp) or are classes: what the map
    server draws with it, read from the same SLD by the same reader (``providers/wms/styles.py``).

    A colour map: its colours, blended for a ramp; anything else (a channel selection, a style outside what
    the map server draws): no colours, i.e. the default grey stretch.
    """
    if style.colour_map is None:
        return [], True
    return list(style.colour_map.colours), style.colour_map.kind == "ramp"


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 16), b""):
            digest.update(chunk)
    return digest.hexdigest()


READABLE_COMPRESSIONS = frozenset({zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA})


def sld_from_zip(archive: Path, staging: Path) -> Path:
    """The one ``.sld`` of a zip, copied to a temporary file (entry names never become paths)."""
    staging.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=staging, prefix=".unzip-", suffix=".sld")
    out_path = Path(name)
    try:
        with os.fdopen(fd, "wb") as out, zipfile.ZipFile(archive) as zf:
            entries = [i for i in zf.infolist() if not i.is_dir() and i.filename.lower().endswith(".sld")
                       and "__MACOSX" not in i.filename and not i.filename.rsplit("/", 1)[-1].startswith("._")]
            if len(entries) != 1:
                raise BadRequest(f"the zip must hold exactly one .sld file, it holds {len(entries)}")
            if entries[0].file_size > MAX_STYLE_BYTES:
                raise BadRequest(f"the SLD is larger than {MAX_STYLE_BYTES} bytes")
            if entries[0].compress_type not in READABLE_COMPRESSIONS:
                raise BadRequest("the zip uses a compression method this server cannot read")
            size = 0
            with zf.open(entries[0]) as source:
                for chunk in iter(lambda: source.read(1 << 16), b""):
                    size += len(chunk)
                    if size > MAX_STYLE_BYTES:
                        raise BadRequest(f"the SLD is larger than {MAX_STYLE_BYTES} bytes")
                    out.write(chunk)
    except BadRequest:
        out_path.unlink(missing_ok=True)
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, RuntimeError, zlib.error, EOFError, OSError,
            ValueError) as e:
        out_path.unlink(missing_ok=True)
        raise BadRequest("the file is not a readable zip archive") from e
    return out_path
