"""Generate the async client (``wasdi_sdk._async``) from the sync one: ``python tools/gen_async.py [--check]``.

The sync modules are the only hand-written definition of every method.  This script reads them, finds
every function that does I/O (it calls, directly or through other functions, a coroutine method of
``httpx.AsyncClient`` or ``httpx.Response``, or ``time.sleep``), makes it ``async def`` and awaits each
call to such a function, with the receiver's type worked out from annotations, ``self``, local
assignments and the client's group properties.  Whatever does no I/O (models, constants, upload parts,
parsing, error mapping) is imported from the sync module, not copied.  Classes get an ``Async`` prefix;
the rest keep their names in ``wasdi_sdk._async.<same module path>``.

A call the script cannot classify on a client, a resource or an httpx object stops the generation
with the place and the reason, rather than being left without its ``await``.

``--check`` compares the syntax trees of a fresh generation with the files in the tree (so a newer
formatter does not matter) and exits 1 naming the stale files; ``tests/sdk/test_async_generated.py``
runs it.
"""

from __future__ import annotations

import ast
import copy
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from inspect import cleandoc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "wasdi_sdk"
SDK = ROOT / "src" / PACKAGE
TARGET = "_async"

# The sync modules with an async twin, as dotted paths inside the package.
SOURCES = [
    "_base_client", "_resource", "_streams", "helpers", "transfer", "_client",
    *sorted(f"resources.{p.stem}" for p in (SDK / "resources").glob("*.py")),
]

# httpx: which methods of its sync objects are coroutines on the async ones (and their async names).
HTTPX_ASYNC = {
    "httpx.Client": {"send": "send", "get": "get", "post": "post", "put": "put", "patch": "patch",
                     "delete": "delete", "head": "head", "options": "options", "request": "request",
                     "close": "aclose"},
    "httpx.Response": {"read": "aread", "close": "aclose"},
}
HTTPX_ASYNC_ITERATORS = {"httpx.Response": {"iter_bytes": "aiter_bytes", "iter_raw": "aiter_raw",
                                            "iter_text": "aiter_text", "iter_lines": "aiter_lines"}}
HTTPX_SYNC = {
    "httpx.Client": {"build_request"},
    "httpx.Response": {"json", "raise_for_status"},
}
HTTPX_RETURNS = {("httpx.Client", "send"): "httpx.Response", ("httpx.Client", "get"): "httpx.Response"}

# Names whose async twin lives elsewhere than a generated definition.
RENAMES = {
    "Sleep": "AsyncSleep",
    "__enter__": "__aenter__",
    "__exit__": "__aexit__",
}
ATTRIBUTE_RENAMES = {("httpx", "Client"): "AsyncClient", ("time", "sleep"): "sleep"}
MODULE_RENAMES = {("time", "sleep"): "asyncio"}

# Twins written by hand, for sync classes over a transport other than httpx: class -> its module under _async.
# ``client.events`` (live messages over STOMP/WebSocket): ``_async/events.py``, over the same codec and models.
# ``ProcessUpdates`` (what wakes ``processes.wait``): its twin is in the same module, over the async stream.
HAND_WRITTEN: dict[str, str] = {"EventsResource": "events", "ProcessUpdates": "events"}
# The methods of hand-written twins that are coroutines, for classes the generator does not read (outside SOURCES).
HAND_WRITTEN_COROUTINES: dict[str, set[str]] = {"ProcessUpdates": {"open", "close", "sleep"}}

# Attributes whose type no annotation in the source states.
ATTRIBUTE_TYPES = {("APIResource", "_client"): "BaseClient", ("BaseClient", "_http"): "httpx.Client"}
ALWAYS_ASYNC = {"__enter__", "__exit__"}


class GenerationError(Exception):
    """The sync source holds something the generator cannot translate safely."""


@dataclass
class Function:
    module: str
    cls: str | None
    node: ast.FunctionDef
    is_async: bool = False

    @property
    def key(self) -> str:
        return f"{self.module}:{self.cls + '.' if self.cls else ''}{self.node.name}"


@dataclass
class ClassInfo:
    module: str
    node: ast.ClassDef
    bases: list[str]
    methods: dict[str, list[Function]] = field(default_factory=dict)
    properties: dict[str, str] = field(default_factory=dict)
    """property name -> the class it returns (cached properties naming a known class)."""
    fields: set[str] = field(default_factory=set)
    """Annotated class attributes (dataclass fields, callables among them: not methods)."""


@dataclass
class Module:
    name: str
    tree: ast.Module
    functions: dict[str, list[Function]] = field(default_factory=dict)
    classes: dict[str, ClassInfo] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)
    """local name -> (module, name) for ``from . import``s of package modules."""


def resolve_relative(module: str, level: int, target: str | None) -> str:
    """The package-relative dotted path a relative import of ``module`` names (``x.__init__`` for a package)."""
    base = module.split(".")[:-1]
    base = base[: len(base) - (level - 1)] if level > 1 else base
    found = ".".join([*base, *([target] if target else [])])
    return f"{found}.__init__" if found and (SDK / Path(*found.split(".")) / "__init__.py").exists() else found


def annotation_name(node: ast.expr | None) -> str | None:
    """``X`` of an annotation ``X``, ``X | None`` or ``"X"``."""
    if node is None:
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return annotation_name(ast.parse(node.value, mode="eval").body)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = annotation_name(node.left), annotation_name(node.right)
        return left if right in (None, "None") else right if left in (None, "None") else None
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return ast.unparse(node)
    return None


class Program:
    """Every source module, what is in it, and which of its functions are coroutines."""

    def __init__(self) -> None:
        self.modules: dict[str, Module] = {}
        self.classes: dict[str, ClassInfo] = {}
        for name in SOURCES:
            path = SDK / Path(*name.split(".")).with_suffix(".py")
            self.modules[name] = self._load(name, ast.parse(path.read_text(encoding="utf-8")))
        self._find_coroutines()

    def _load(self, name: str, tree: ast.Module) -> Module:
        module = Module(name, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                source = resolve_relative(name, node.level, node.module)
                for alias in node.names:
                    module.imported[alias.asname or alias.name] = (source, alias.name)
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                module.functions.setdefault(node.name, []).append(Function(name, None, node))
            elif isinstance(node, ast.ClassDef):
                info = ClassInfo(name, node, [annotation_name(b) or "" for b in node.bases])
                for item in node.body:
                    if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                        info.fields.add(item.target.id)
                    if isinstance(item, ast.FunctionDef):
                        info.fields |= {t.attr for a in ast.walk(item) if isinstance(a, ast.Assign | ast.AnnAssign)
                                        for t in (a.targets if isinstance(a, ast.Assign) else [a.target])
                                        if isinstance(t, ast.Attribute) and ast.unparse(t.value) == "self"}
                        info.methods.setdefault(item.name, []).append(Function(name, node.name, item))
                        returned = annotation_name(item.returns)
                        if any(annotation_name(d) in ("cached_property", "property") for d in item.decorator_list) \
                                and returned:
                            info.properties[item.name] = returned
                if node.name in self.classes:
                    raise GenerationError(f"class {node.name} is defined twice")
                self.classes[node.name] = info
                module.classes[node.name] = info
        return module

    # -- types --------------------------------------------------------------------------------------
    def mro(self, cls: str) -> list[ClassInfo]:
        info = self.classes.get(cls)
        if info is None:
            return []
        found = [info]
        for base in info.bases:
            found += [b for b in self.mro(base) if b not in found]
        return found

    def method(self, cls: str, name: str) -> list[Function] | None:
        for info in self.mro(cls):
            if name in info.methods:
                return info.methods[name]
        return None

    def attribute_type(self, cls: str, name: str) -> str | None:
        for info in self.mro(cls):
            if name in info.properties:
                return info.properties[name]
            if (info.node.name, name) in ATTRIBUTE_TYPES:
                return ATTRIBUTE_TYPES[(info.node.name, name)]
        return None

    def function(self, module: str, name: str) -> list[Function] | None:
        """The module-level function ``name`` as seen from ``module`` (defined there or imported)."""
        here = self.modules[module]
        if name in here.functions:
            return here.functions[name]
        if name in here.imported:
            source, original = here.imported[name]
            if source in self.modules:
                return self.modules[source].functions.get(original)
        return None

    # -- coroutines ---------------------------------------------------------------------------------
    def _find_coroutines(self) -> None:
        functions = [f for m in self.modules.values() for fs in m.functions.values() for f in fs]
        functions += [f for c in self.classes.values() for fs in c.methods.values() for f in fs]
        for f in functions:
            f.is_async = f.node.name in ALWAYS_ASYNC and f.cls is not None
        changed = True
        while changed:
            changed = False
            for f in functions:
                if not f.is_async and any(Scope(self, f).awaits(call) for call in calls_of(f.node)):
                    for twin in self._same_name(f):
                        twin.is_async = True
                    changed = True

    def _same_name(self, f: Function) -> list[Function]:
        """``f`` and its ``@overload`` declarations, which must be async together."""
        if f.cls:
            return self.classes[f.cls].methods[f.node.name]
        return self.modules[f.module].functions[f.node.name]


def calls_of(node: ast.AST) -> list[ast.Call]:
    """Calls in a function's own body (not in nested functions or classes; lambdas are checked apart)."""
    found: list[ast.Call] = []
    body = node.body if isinstance(node, ast.FunctionDef) else [node]
    stack: list[ast.AST] = [*body]
    if isinstance(node, ast.FunctionDef):
        stack += [d for a in node.args.args + node.args.kwonlyargs for d in [a.annotation] if d is not None]
        stack += [d for d in node.args.defaults + node.args.kw_defaults if d is not None]
    while stack:
        item = stack.pop()
        if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(item, ast.Call):
            found.append(item)
        stack.extend(ast.iter_child_nodes(item))
    return found


class Scope:
    """Types of the names in one function, enough to tell which calls are coroutines."""

    def __init__(self, program: Program, function: Function) -> None:
        self.program = program
        self.function = function
        self.types: dict[str, str] = {}
        args = function.node.args
        for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
            typ = annotation_name(arg.annotation)
            if typ:
                self.types[arg.arg] = typ
        if function.cls:
            self.types.setdefault("self", function.cls)
            self.types.setdefault("cls", function.cls)
        for node in ast.walk(function.node):
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                typ = self.type_of(node.value)
                if typ:
                    self.types.setdefault(node.targets[0].id, typ)

    def type_of(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Await):
            return self.type_of(node.value)
        if isinstance(node, ast.Name):
            known = node.id in self.program.classes or node.id in HAND_WRITTEN_COROUTINES
            return self.types.get(node.id) or (node.id if known else None)
        if isinstance(node, ast.Attribute):
            owner = self.type_of(node.value)
            return self.program.attribute_type(owner, node.attr) if owner else None
        if isinstance(node, ast.Call):
            if isinstance(node.func, ast.Name) and node.func.id == "cast" and node.args:
                return annotation_name(node.args[0])
            if isinstance(node.func, ast.Name) and node.func.id == "cls":
                return self.function.cls
            callee = self.type_of(node.func)
            if callee in self.program.classes or callee in HAND_WRITTEN_COROUTINES:
                return callee
            if isinstance(node.func, ast.Attribute):
                owner = self.type_of(node.func.value)
                if owner in HTTPX_ASYNC:
                    return HTTPX_RETURNS.get((owner, node.func.attr))
                if owner:
                    methods = self.program.method(owner, node.func.attr)
                    if methods:
                        return annotation_name(methods[-1].node.returns)
            return None
        if isinstance(node, ast.BoolOp):
            types = {self.type_of(v) for v in node.values} - {None}
            return types.pop() if len(types) == 1 else None
        return None

    def awaits(self, call: ast.Call) -> bool:
        """Whether ``call`` is a coroutine call in the async twin."""
        func = call.func
        where = f"{self.function.key} line {call.lineno}"
        if isinstance(func, ast.Name):
            if func.id in self.types and self.types[func.id] == "Sleep":
                return True
            functions = self.program.function(self.function.module, func.id)
            return bool(functions and functions[-1].is_async)
        if not isinstance(func, ast.Attribute):
            return False
        if ast.unparse(func) == "time.sleep":
            return True
        owner = self.type_of(func.value)
        if owner is None:
            return False
        if owner in HAND_WRITTEN_COROUTINES:
            return func.attr in HAND_WRITTEN_COROUTINES[owner]
        if owner in HTTPX_ASYNC:
            if func.attr in HTTPX_ASYNC[owner]:
                return True
            if func.attr in HTTPX_SYNC[owner] or func.attr in HTTPX_ASYNC_ITERATORS.get(owner, {}):
                return False
            raise GenerationError(f"{where}: is {owner}.{func.attr} a coroutine? add it to the httpx tables")
        if owner in self.program.classes:
            methods = self.program.method(owner, func.attr)
            if methods is None:
                mro = self.program.mro(owner)
                if any(func.attr in c.fields for c in mro) \
                        or not any(f.is_async for c in mro for fs in c.methods.values() for f in fs):
                    return False
                raise GenerationError(f"{where}: {owner} has no method {func.attr}")
            return methods[-1].is_async
        return False


# -- the transformation ------------------------------------------------------------------------------
class Translate(ast.NodeTransformer):
    """The async body of one function (awaits, async loops, async names)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        for call in calls_of(node.body):
            if self.scope.awaits(call):
                raise GenerationError(f"{self.scope.function.key}: a lambda makes a coroutine call")
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        awaited = self.scope.awaits(node)
        func = node.func
        if awaited and isinstance(func, ast.Attribute):
            owner = self.scope.type_of(func.value)
            if owner in HTTPX_ASYNC:
                func.attr = HTTPX_ASYNC[owner][func.attr]
        self.generic_visit(node)
        return ast.Await(value=node) if awaited else node

    def visit_For(self, node: ast.For) -> ast.AST:
        iterated = node.iter
        if isinstance(iterated, ast.Call) and isinstance(iterated.func, ast.Attribute):
            owner = self.scope.type_of(iterated.func.value)
            names = HTTPX_ASYNC_ITERATORS.get(owner or "", {})
            if iterated.func.attr in names:
                self.generic_visit(node)
                iterated.func.attr = names[iterated.func.attr]
                return ast.AsyncFor(target=node.target, iter=node.iter, body=node.body, orelse=node.orelse,
                                    type_comment=None, lineno=node.lineno, col_offset=node.col_offset)
        self.generic_visit(node)
        return node


class Rename(ast.NodeTransformer):
    """Names of the async world: generated classes, ``AsyncClient``, ``asyncio.sleep`` ..."""

    def __init__(self, names: dict[str, str]) -> None:
        self.names = names
        self.uses_asyncio = False

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if isinstance(node.value, ast.Name) and (node.value.id, node.attr) in ATTRIBUTE_RENAMES:
            key = (node.value.id, node.attr)
            node.attr = ATTRIBUTE_RENAMES[key]
            if key in MODULE_RENAMES:
                node.value.id = MODULE_RENAMES[key]
                self.uses_asyncio = True
            return node
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        return node


def async_function(program: Program, f: Function) -> ast.FunctionDef | ast.AsyncFunctionDef:
    node = copy.deepcopy(f.node)
    if not f.is_async:
        return node
    translated = Translate(Scope(program, f))
    node.body = [translated.visit(statement) for statement in node.body]
    name = RENAMES.get(node.name, node.name) if node.name in ALWAYS_ASYNC else node.name
    return ast.AsyncFunctionDef(name=name, args=node.args, body=node.body, decorator_list=node.decorator_list,
                                returns=node.returns, type_comment=None, type_params=[],
                                lineno=node.lineno, col_offset=node.col_offset)


def has_coroutines(info: ClassInfo) -> bool:
    return any(f.is_async for fs in info.methods.values() for f in fs)


class Generator:
    def __init__(self) -> None:
        self.program = Program()
        # Which definitions get a twin: functions that are coroutines, classes holding one (or based on one), and
        # classes with a property of such a class (the helpers' Protocols: what they need of a client, its groups).
        self.emitted: dict[str, set[str]] = {}
        changed = True
        classes = {name for name, info in self.program.classes.items() if has_coroutines(info)}
        while changed:
            before = len(classes)
            classes |= {n for n, i in self.program.classes.items()
                        if any(b in classes for b in i.bases) or any(t in classes for t in i.properties.values())}
            changed = len(classes) != before
        classes -= set(HAND_WRITTEN)  # their twins are written by hand, not generated
        for name, module in self.program.modules.items():
            self.emitted[name] = {n for n in module.classes if n in classes}
            self.emitted[name] |= {n for n, fs in module.functions.items() if fs[-1].is_async}
        self.renames = {**RENAMES, **{c: "Async" + c for c in [*classes, *HAND_WRITTEN]}}

    def is_emitted(self, module: str, name: str) -> bool:
        """Whether ``module`` defines (or, for a package, re-exports) a twin of ``name``."""
        if name in self.emitted.get(module, set()):
            return True
        imported = self.program.modules[module].imported.get(name) if module in self.program.modules else None
        return imported is not None and module.endswith("__init__") and self.is_emitted(*imported)

    def rewrite_import(self, module: str, node: ast.ImportFrom) -> list[ast.stmt]:
        """A relative import of the sync module, pointing at the twin where there is one."""
        if not node.level:
            return [node]
        source = resolve_relative(module, node.level, node.module)
        if source.endswith("__init__") and node.module is None:
            source = source.removesuffix(".__init__")
        to_twin: list[ast.alias] = []
        to_sync: list[ast.alias] = []
        for alias in node.names:
            if alias.name in HAND_WRITTEN:
                statements_by_hand = ast.ImportFrom(module=HAND_WRITTEN[alias.name], names=[
                    ast.alias("Async" + alias.name, alias.asname)], level=module.count(".") + 1)
                return [statements_by_hand, *self.rewrite_import(module, ast.ImportFrom(
                    module=node.module, names=[a for a in node.names if a is not alias], level=node.level))] \
                    if len(node.names) > 1 else [statements_by_hand]
            submodule = f"{source}.{alias.name}" if source else alias.name
            if node.module is None and (submodule in self.program.modules
                                        or f"{submodule}.__init__" in self.program.modules):
                to_twin.append(alias)
            elif self.is_emitted(source, alias.name):
                to_twin.append(ast.alias(self.renames.get(alias.name, alias.name), alias.asname))
            else:
                to_sync.append(ast.alias(self.renames.get(alias.name, alias.name), alias.asname))
        statements: list[ast.stmt] = []
        if to_sync:
            # From wasdi_sdk._async.<module>, up to wasdi_sdk and down to the sync module.
            sync_module = source.removesuffix(".__init__").removesuffix("__init__") or None
            statements.append(ast.ImportFrom(module=sync_module, names=to_sync, level=module.count(".") + 2))
        if to_twin:
            statements.append(ast.ImportFrom(module=node.module, names=to_twin, level=node.level))
        return statements

    def module(self, name: str) -> str:
        program = self.program
        source = program.modules[name]
        emitted = self.emitted[name]
        body: list[ast.stmt] = []
        defined: set[str] = set()
        imports: list[ast.stmt] = []
        for node in source.tree.body:
            if isinstance(node, ast.ImportFrom):
                if node.module != "__future__":
                    imports += self.rewrite_import(name, node)
            elif isinstance(node, ast.Import):
                imports.append(node)
            elif isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
                inner: list[ast.stmt] = []
                for item in node.body:
                    inner += self.rewrite_import(name, item) if isinstance(item, ast.ImportFrom) else [item]
                body.append(ast.If(test=node.test, body=inner, orelse=[]))
            elif isinstance(node, ast.FunctionDef) and node.name in emitted:
                body.append(async_function(program, source.functions[node.name][-1]))
                defined.add(node.name)
            elif isinstance(node, ast.ClassDef) and node.name in emitted:
                body.append(self.async_class(name, node))
                defined.add(node.name)
            elif name.endswith("__init__") or (isinstance(node, ast.Assign) and self._mentions_emitted(node)):
                body.append(node)
                defined |= self._top_level_names(ast.Module(body=[node], type_ignores=[]))
        # Function-local imports (inside bodies) point at the twins too.
        for statement in body:
            if not isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                continue
            for parent in ast.walk(statement):
                for field_name, value in ast.iter_fields(parent):
                    if isinstance(value, list) and any(isinstance(v, ast.ImportFrom) and v.level for v in value):
                        new: list[ast.AST] = []
                        for item in value:
                            new += self.rewrite_import(name, item) if isinstance(item, ast.ImportFrom) \
                                and item.level else [item]
                        setattr(parent, field_name, new)
        # What the twin uses of the sync module's own definitions is imported from it.
        top_level = self._top_level_names(source.tree) - defined
        used = {n.id for s in body for n in ast.walk(s) if isinstance(n, ast.Name)}
        borrowed = sorted(top_level & used)
        if borrowed:
            imports.append(ast.ImportFrom(module=name, names=[ast.alias(self.renames.get(n, n)) for n in borrowed],
                                          level=name.count(".") + 2))
        renamer = Rename(self.renames)
        body = [renamer.visit(statement) for statement in body]
        imports = [renamer.visit(statement) for statement in imports]
        if renamer.uses_asyncio:
            imports.insert(0, ast.Import(names=[ast.alias("asyncio")]))
        docstring = ast.get_docstring(source.tree) or ""
        header = (f"Generated from ``{PACKAGE}.{name.removesuffix('.__init__')}`` by ``make async``: do not edit.\n\n"
                  f"{docstring}").strip()
        tree = ast.Module(body=[ast.Expr(ast.Constant(header)),
                                ast.ImportFrom(module="__future__", names=[ast.alias("annotations")], level=0),
                                *imports, *body], type_ignores=[])
        if name.endswith("__init__"):
            tree = self._rename_all(tree)
        return ast.unparse(ast.fix_missing_locations(tree)) + "\n"

    @staticmethod
    def _top_level_names(tree: ast.Module) -> set[str]:
        names: set[str] = set()
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                names.add(node.target.id)
        return names

    def _mentions_emitted(self, node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in self.renames and n.id not in RENAMES for n in ast.walk(node))

    def _rename_all(self, tree: ast.Module) -> ast.Module:
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets) \
                    and isinstance(node.value, ast.List):
                for item in node.value.elts:
                    if isinstance(item, ast.Constant) and isinstance(item.value, str):
                        item.value = self.renames.get(item.value, item.value)
        return tree

    def async_class(self, module: str, node: ast.ClassDef) -> ast.ClassDef:
        info = self.program.classes[node.name]
        new = copy.deepcopy(node)
        body: list[ast.stmt] = []
        for item in node.body:
            if isinstance(item, ast.FunctionDef):
                function = next(f for f in info.methods[item.name] if f.node is item)
                body.append(async_function(self.program, function))
            else:
                body.append(copy.deepcopy(item))
        new.body = body
        if new.body and isinstance(new.body[0], ast.Expr) and isinstance(new.body[0].value, ast.Constant):
            lines = f"Async twin of ``{node.name}``: the same methods, awaited.\n\n{cleandoc(new.body[0].value.value)}"
            first, *rest = lines.split("\n")
            indented = "\n".join([first, *[f"    {line}" if line else line for line in rest]])
            new.body[0] = ast.Expr(ast.Constant(indented))
        return new

    def files(self) -> dict[Path, str]:
        """Generated path -> text (formatted and import-sorted by ruff)."""
        out: dict[Path, str] = {}
        for name in SOURCES:
            if not self.emitted[name] and not name.endswith("__init__"):
                continue
            parts = name.split(".")
            out[SDK / TARGET / Path(*parts).with_suffix(".py")] = self.module(name)
        return format_with_ruff(out)


def format_with_ruff(files: dict[Path, str]) -> dict[Path, str]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        written: dict[Path, Path] = {}
        for path, text in files.items():
            target = root / path.relative_to(SDK)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            written[path] = target
        config = ["--config", str(ROOT / "pyproject.toml")]
        ruff = [sys.executable, "-m", "ruff"]
        subprocess.run([*ruff, "check", "--quiet", "--fix", "--select", "I,F401,UP", *config, tmp], check=False,
                       capture_output=True)
        subprocess.run([*ruff, "format", "--quiet", *config, tmp], check=True, capture_output=True)
        return {path: target.read_text(encoding="utf-8") for path, target in written.items()}


def stale(files: dict[Path, str]) -> list[Path]:
    """Generated files that differ (as syntax trees) from what is in the tree, or are missing or extra."""
    found = []
    for path, text in files.items():
        if not path.exists() or ast.dump(ast.parse(path.read_text(encoding="utf-8"))) != ast.dump(ast.parse(text)):
            found.append(path)
    by_hand = {SDK / TARGET / f"{module}.py" for module in HAND_WRITTEN.values()}
    existing = {p for p in (SDK / TARGET).rglob("*.py")} - set(files) - {SDK / TARGET / "__init__.py"} - by_hand
    return found + sorted(existing)


def main(argv: list[str]) -> int:
    files = Generator().files()
    if "--check" in argv:
        out_of_date = stale(files)
        for path in out_of_date:
            print(f"stale: {path.relative_to(ROOT)}", file=sys.stderr)
        if out_of_date:
            print("run: make async", file=sys.stderr)
        return 1 if out_of_date else 0
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
