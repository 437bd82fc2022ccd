"""SNAP graphs and a stand-in ``gpt`` for the workflow tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest


def graph(*, reads: tuple[str, ...] = ("Read",), writes: tuple[str, ...] = ("Write",),
          fmt: str = "GeoTIFF", extra: str = "") -> bytes:
    """A SNAP graph: Read nodes, a BandMaths node, Write nodes (formatName ``fmt``)."""
    nodes = [f'<node id="{r}"><operator>Read</operator><parameters class="com.bc.ceres.binding.dom.XppDomElement">'
             f"<file>placeholder.tif</file></parameters></node>" for r in reads]
    nodes.append('<node id="BandMaths"><operator>BandMaths</operator><sources><sourceProduct refid="'
                 f'{reads[0] if reads else "x"}"/></sources><parameters><targetBand><expression>$SCALE * band_1'
                 "</expression></targetBand></parameters></node>")
    nodes += [f'<node id="{w}"><operator>Write</operator><sources><sourceProduct refid="BandMaths"/></sources>'
              f"<parameters><file>out.tif</file><formatName>{fmt}</formatName></parameters></node>" for w in writes]
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<graph id="Graph"><version>1.0</version>'
            + "".join(nodes) + extra + "</graph>").encode()


STAND_IN_GPT = '''#!{python}
"""A stand-in for SNAP's gpt: checks the graph it is given and writes its outputs."""
import shutil, sys, xml.etree.ElementTree as ET
from pathlib import Path

root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "graph", root.tag
reads = [n for n in root.findall("node") if n.findtext("operator") == "Read"]
writes = [n for n in root.findall("node") if n.findtext("operator") == "Write"]
print(f"gpt: {{len(reads)}} read, {{len(writes)}} write", flush=True)
expression = root.findtext(".//targetBand/expression") or ""
if "$" in expression:
    print(f"gpt: unreplaced template parameter in {{expression}}", file=sys.stderr)
    sys.exit(3)
print(f"gpt: expression {{expression}}", flush=True)
source = Path(reads[0].findtext("parameters/file"))
if not source.is_absolute() or not source.is_file():
    print(f"gpt: no input {{source}}", file=sys.stderr)
    sys.exit(2)
for node in writes:
    target = Path(node.findtext("parameters/file"))
    shutil.copyfile(source, target)
    print(f"gpt: wrote {{target.name}}", flush=True)
'''


def install_gpt(folder: Path, monkeypatch: pytest.MonkeyPatch, body: str | None = None) -> Path:
    """Put a stand-in ``gpt`` first on the PATH."""
    folder.mkdir(parents=True, exist_ok=True)
    gpt = folder / "gpt"
    gpt.write_text((body or STAND_IN_GPT).format(python=sys.executable))
    gpt.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    return gpt


def hide_gpt(monkeypatch: pytest.MonkeyPatch, empty: Path) -> None:
    """A PATH with no ``gpt`` on it (only the folder of this Python)."""
    empty.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("PATH", f"{empty}{os.pathsep}{Path(sys.executable).parent}")
