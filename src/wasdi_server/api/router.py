"""Falcon's compiled router, with exact paths answered from a dictionary, and its tree built once per process.

Nearly every WASDI path is static (``/ws/byuser``, ``/process/byusr``), and each is served under two
prefixes, so the compiled router walks a tree of ~450 routes for every request.  A static template
matches one path only, so once the compiled router has matched it, the same answer can be looked up
by the path itself on the next request.

Adding ~900 routes one by one (checking each responder, inserting it, looking for conflicts) and compiling
the tree took most of the time of ``create_app``, and a process that builds many apps (the tests, the
nodes of a deployment) built the same tree each time.  ``add_routes`` builds it once per sequence of
templates and resource classes, and gives each router a copy of it holding that router's own resources.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from threading import Lock
from typing import Any

from falcon import responders
from falcon.routing import CompiledRouter
from falcon.routing.compiled import CompiledRouterNode, CompiledRouterOptions

_DEFAULT_CONVERTERS = dict(CompiledRouterOptions().converters.data)


@dataclass(frozen=True)
class _Leaf:
    """What a node of a built tree routes to: the index in the table of its resource, and per HTTP method the
    name of that resource's responder, or falcon's default responder (405, OPTIONS), which holds no state."""

    resource_index: int
    responders: tuple[tuple[str, str | Callable[..., Any]], ...]


@dataclass(frozen=True)
class _Shape:
    """A compiled tree with no resources in it: copied into each router that adds the same table."""

    roots: list[CompiledRouterNode]
    leaves: dict[int, _Leaf]  # by id() of a node of ``roots``
    return_values: list[CompiledRouterNode]
    patterns: list[Any]
    converters: list[Any]
    find: Callable[..., Any]
    finder_src: str


_shapes: dict[tuple[tuple[str, type], ...], _Shape | None] = {}
_shapes_lock = Lock()


class StaticFirstRouter(CompiledRouter):
    """A ``CompiledRouter`` that remembers which requested paths are static templates."""

    def __init__(self) -> None:
        super().__init__()
        self._static: dict[str, tuple[object, Any, str]] = {}

    def add_route(self, uri_template: str, resource: object, **kwargs: Any) -> None:
        self._static.clear()  # a new route may shadow or rebind one remembered
        super().add_route(uri_template, resource, **kwargs)

    def add_routes(self, table: Sequence[tuple[str, object]]) -> None:
        """Adds every ``(template, resource)`` of ``table`` and compiles, routing as ``add_route`` called for each
        in turn would (a later template replaces an equal earlier one; a bad template raises the same error).

        The tree is built once per process for each sequence of templates and resource classes, and copied here.
        """
        for template, _ in table:  # falcon.App.add_route's own checks, which this path does not pass through
            if not template.startswith("/"):
                raise ValueError("uri_template must start with '/'")
            if "//" in template:
                raise ValueError("uri_template may not contain '//'")
        try:
            shape = self._shape_of(table) if self._takes_a_shape() else None
            if shape is not None:
                clones: dict[int, CompiledRouterNode] = {}
                roots = [self._clone(node, shape, table, clones) for node in shape.roots]
                return_values = [clones[id(node)] for node in shape.return_values]
        except AttributeError:  # falcon's router keeps its tree otherwise (a newer 4.x): built as falcon does
            shape = None
        if shape is None:
            for number, (template, resource) in enumerate(table, start=1):
                self.add_route(template, resource, compile=number == len(table))
            return
        self._static.clear()
        self._roots = roots
        self._return_values = return_values
        self._patterns = shape.patterns
        self._converters = shape.converters
        self._finder_src = shape.finder_src
        self._find = shape.find  # generated code that reads only its arguments: one function serves every copy

    def find(self, uri: str, req: Any = None) -> tuple[object, Any, dict[str, Any], str | None] | None:
        hit = self._static.get(uri)
        if hit is not None:
            resource, method_map, template = hit
            return resource, method_map, {}, template
        found = super().find(uri, req)
        if found is not None and not found[2] and found[3] == uri:
            self._static[uri] = (found[0], found[1], uri)
        return found

    def _takes_a_shape(self) -> bool:
        # A router with routes already, or options of its own, builds its tree itself.
        return (not self._roots and not self.options.default_to_on_request
                and dict(self.options.converters.data) == _DEFAULT_CONVERTERS)

    @staticmethod
    def _shape_of(table: Sequence[tuple[str, object]]) -> _Shape | None:
        key = tuple((template, type(resource)) for template, resource in table)
        with _shapes_lock:
            if key not in _shapes:
                _shapes[key] = _build_shape(table)
            return _shapes[key]

    @staticmethod
    def _clone(node: CompiledRouterNode, shape: _Shape, table: Sequence[tuple[str, object]],
               clones: dict[int, CompiledRouterNode]) -> CompiledRouterNode:
        twin = CompiledRouterNode.__new__(CompiledRouterNode)  # a shallow copy, without copy.copy's detours
        twin.__dict__.update(node.__dict__)
        clones[id(node)] = twin
        twin.children = [StaticFirstRouter._clone(child, shape, table, clones) for child in node.children]
        leaf = shape.leaves.get(id(node))
        if leaf is not None:
            resource = table[leaf.resource_index][1]
            twin.resource = resource
            twin.method_map = {method: getattr(resource, how) if isinstance(how, str) else how
                               for method, how in leaf.responders}
        return twin


def _build_shape(table: Sequence[tuple[str, object]]) -> _Shape | None:
    """The tree of ``table`` built by falcon, emptied of its resources; ``None`` when a responder is not a method
    every resource of its class has (then each router adds its routes one by one)."""
    router = CompiledRouter()
    for template, resource in table:
        if any(name.startswith("on_") for name in getattr(resource, "__dict__", {})):
            return None  # responders set on one instance: another of its class may have others
        router.add_route(template, resource)
    router.find("/")  # compiles
    index_of = {id(resource): number for number, (_, resource) in enumerate(table)}
    leaves: dict[int, _Leaf] = {}
    stack = list(router._roots)
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.resource is None:
            continue
        how: list[tuple[str, str | Callable[..., Any]]] = []
        for method, responder in (node.method_map or {}).items():
            if getattr(responder, "__self__", None) is node.resource:
                how.append((method, "on_" + method.lower()))  # the name falcon looked it up by
            elif getattr(responder, "__module__", None) == responders.__name__:
                how.append((method, responder))
            else:
                return None
        leaves[id(node)] = _Leaf(index_of[id(node.resource)], tuple(how))
        node.resource = node.method_map = None  # the shape keeps no app alive
    return _Shape(router._roots, leaves, router._return_values, router._patterns, router._converters,
                  router._find, router._finder_src)
