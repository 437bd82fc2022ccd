"""Falcon's compiled router, with exact paths answered from a dictionary.

Nearly every WASDI path is static (``/ws/byuser``, ``/process/byusr``), and each is served under two
prefixes, so the compiled router walks a tree of ~450 routes for every request.  A static template
matches one path only, so once the compiled router has matched it, the same answer can be looked up
by the path itself on the next request.
"""

from __future__ import annotations

from typing import Any

from falcon.routing import CompiledRouter


class StaticFirstRouter(CompiledRouter):
    """A ``CompiledRouter`` that remembers which requested paths are static templates."""

    def __init__(self) -> None:
        super().__init__()
        self._static: dict[str, tuple[object, Any, str]] = {}

    def add_route(self, uri_template: str, resource: object, **kwargs: Any) -> None:
        self._static.clear()  # a new route may shadow or rebind one remembered
        super().add_route(uri_template, resource, **kwargs)

    def find(self, uri: str, req: Any = None) -> tuple[object, Any, dict[str, Any], str | None] | None:
        hit = self._static.get(uri)
        if hit is not None:
            resource, method_map, template = hit
            return resource, method_map, {}, template
        found = super().find(uri, req)
        if found is not None and not found[2] and found[3] == uri:
            self._static[uri] = (found[0], found[1], uri)
        return found
