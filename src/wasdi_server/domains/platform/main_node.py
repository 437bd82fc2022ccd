"""Which node is the main node of a deployment (gaps §8): the rule every part that tells nodes apart applies."""

from __future__ import annotations

MAIN_NODE = "wasdi"
"""The main node's code (``CFG/WasdiConfig.isMainNode``: the node whose code is exactly this)."""


def is_main_node(code: str | None) -> bool:
    """The one test of "is this the main node": its code is exactly ``wasdi`` (gaps §8, ``isMainNode``)."""
    return code == MAIN_NODE
