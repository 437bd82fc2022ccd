"""SNAP graph XML: read safely, find the Read and Write nodes, and write the graph a run executes.

A SNAP graph is ``<graph id=...><node id="..."><operator>Read</operator><parameters>...``; the input
and output nodes of a workflow are the ``<node id>`` values whose ``<operator>`` text is exactly
``Read`` / ``Write`` (gaps §4).  Parsing goes through ``defusedxml``: a DOCTYPE with entities or any
external reference is refused, and the file is at most ``MAX_GRAPH_BYTES``.  A file that is not such
a graph is a ``BadRequest`` saying why.
"""

from __future__ import annotations

import xml.etree.ElementTree as StdElementTree
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from defusedxml import DefusedXmlException
from defusedxml import ElementTree as SafeElementTree

from ...errors import BadRequest

MAX_GRAPH_BYTES = 4 * 1024 * 1024
"""The largest graph accepted (SNAP graphs are a few KiB; this leaves room for big parameter sets)."""
MAX_TEMPLATE_PARAMS = 200
MAX_TEMPLATE_TEXT = 4096
READ = "Read"
WRITE = "Write"
NOT_A_GRAPH = "the file is not a SNAP graph"

# gpt picks the writer from formatName; the extension of the file it writes follows from it.
_FORMAT_EXTENSIONS = {"BEAM-DIMAP": ".dim", "GEOTIFF": ".tif", "GEOTIFF-BIGTIFF": ".tif", "NETCDF4-CF": ".nc",
                      "NETCDF-CF": ".nc", "NETCDF4-BEAM": ".nc", "ENVI": ".hdr", "HDF5": ".h5", "JP2": ".jp2"}


@dataclass(frozen=True)
class GraphNodes:
    """The node ids of a graph's Read and Write operators, in document order."""

    inputs: list[str]
    outputs: list[str]


def parse_graph_bytes(data: bytes) -> StdElementTree.Element:
    """The ``<graph>`` root of ``data``, parsed safely; ``BadRequest`` when it is not a SNAP graph."""
    if len(data) > MAX_GRAPH_BYTES:
        raise BadRequest(f"{NOT_A_GRAPH}: it is larger than {MAX_GRAPH_BYTES} bytes")
    if not data.strip():
        raise BadRequest(f"{NOT_A_GRAPH}: the file is empty")
    try:
        root = SafeElementTree.fromstring(data, forbid_dtd=True)
    except DefusedXmlException as e:
        raise BadRequest(f"{NOT_A_GRAPH}: entities, DTDs and external references are refused") from e
    except (StdElementTree.ParseError, ValueError, UnicodeError) as e:
        raise BadRequest(f"{NOT_A_GRAPH}: it is not well-formed XML ({str(e)[:120]})") from e
    if root.tag != "graph":
        raise BadRequest(f"{NOT_A_GRAPH}: the root element must be <graph>, not <{str(root.tag)[:40]}>")
    nodes = root.findall("node")
    if not nodes:
        raise BadRequest(f"{NOT_A_GRAPH}: it has no <node> elements")
    for node in nodes:
        if not (node.get("id") or "").strip():
            raise BadRequest(f"{NOT_A_GRAPH}: a <node> has no id")
        if not (node.findtext("operator") or "").strip():
            raise BadRequest(f"{NOT_A_GRAPH}: the node {node.get('id')!r} has no <operator>")
    return root


def parse_graph_file(path: Path) -> StdElementTree.Element:
    if path.stat().st_size > MAX_GRAPH_BYTES:
        raise BadRequest(f"{NOT_A_GRAPH}: it is larger than {MAX_GRAPH_BYTES} bytes")
    return parse_graph_bytes(path.read_bytes())


def graph_nodes(root: StdElementTree.Element) -> GraphNodes:
    inputs, outputs = [], []
    for node in root.findall("node"):
        operator = node.findtext("operator")
        if operator == READ:
            inputs.append(str(node.get("id")))
        elif operator == WRITE:
            outputs.append(str(node.get("id")))
    return GraphNodes(inputs, outputs)


def check_template_params(params: Any) -> dict[str, str]:
    """``templateParams`` of a run: text keys found in the graph, replaced by scalar values."""
    if params in (None, {}):
        return {}
    if not isinstance(params, Mapping):
        raise BadRequest("templateParams must be an object of names and values")
    if len(params) > MAX_TEMPLATE_PARAMS:
        raise BadRequest(f"at most {MAX_TEMPLATE_PARAMS} templateParams")
    out: dict[str, str] = {}
    for key, value in params.items():
        if not isinstance(key, str) or not key or len(key) > MAX_TEMPLATE_TEXT:
            raise BadRequest("templateParams names must be non-empty text")
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, (str, int, float)):
            text = str(value)
        else:
            raise BadRequest(f"the templateParams value of {key[:60]!r} must be text or a number")
        if len(text) > MAX_TEMPLATE_TEXT:
            raise BadRequest(f"the templateParams value of {key[:60]!r} is too long")
        out[key] = text
    return out


def output_extension(root: StdElementTree.Element, node_id: str) -> str:
    """The extension of the file the Write node ``node_id`` produces (``.dim`` by default, as gpt)."""
    for node in root.findall("node"):
        if node.get("id") == node_id:
            fmt = (node.findtext("parameters/formatName") or "").strip().upper()
            return _FORMAT_EXTENSIONS.get(fmt, ".dim")
    return ".dim"


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def render_run_graph(data: bytes, template_params: Mapping[str, str], inputs: Mapping[str, Path],
                     outputs: Mapping[str, Path]) -> bytes:
    """The graph a run executes: template parameters replaced in the text (values XML-escaped), then
    each Read node's ``file`` parameter set to its input and each Write node's to its output."""
    text = data.decode("utf-8", errors="replace")
    for key, value in template_params.items():
        text = text.replace(key, _escape(value))
    root = parse_graph_bytes(text.encode("utf-8"))
    by_id = {str(n.get("id")): n for n in root.findall("node")}
    for node_id, path in {**inputs, **outputs}.items():
        node = by_id.get(node_id)
        if node is None:
            raise BadRequest(f"the graph has no node {node_id!r}")
        parameters = node.find("parameters")
        if parameters is None:
            parameters = StdElementTree.SubElement(node, "parameters")
        file_element = parameters.find("file")
        if file_element is None:
            file_element = StdElementTree.SubElement(parameters, "file")
        file_element.text = str(path)
    # typeshed types the result by the encoding's name only for "unicode" (a str); any other is bytes
    document: bytes = StdElementTree.tostring(root, encoding="utf-8", xml_declaration=True)
    return document
