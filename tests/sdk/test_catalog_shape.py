"""The shape of the endpoint catalogue and of the wire models, checked against the service contract."""

from __future__ import annotations

import re
import types
from collections import Counter
from typing import Any, Union, get_args, get_origin

import pytest
from pydantic import AliasChoices, BaseModel
from pydantic.alias_generators import to_camel

from wasdi_sdk.catalog import (
    BY_NAME,
    EXTRAS,
    GROUP_MODULES,
    Auth,
    Endpoint,
    FailureKind,
    Style,
)
from wasdi_sdk.catalog import CONTRACT as ENDPOINTS
from wasdi_sdk.models import MODELS, WasdiModel

# ---------------------------------------------------------------------------------------------------------------
# Catalogue
# ---------------------------------------------------------------------------------------------------------------

EXPECTED_PER_BASE = {
    "/admin": 17,
    "/auth": 16,
    "/credits": 6,
    "/filebuffer": 4,
    "/images": 6,
    "/node": 7,
    "/organizations": 8,
    "/packageManager": 5,
    "/process": 23,
    "/processorParamTempl": 8,
    "/processormedia": 10,
    "/processors": 32,
    "/product": 11,
    "/projects": 7,
    "/search": 5,
    "/styles": 13,
    "/subscriptions": 14,
    "/wasdi": 2,
    "/workflows": 13,
    "/ws": 9,
}

# Contract, "Authentication" item 2 (the admin type list, whose header the contract declares but does not
# validate, is the admins' here: issue 18, "/admin/resourcePermissions admin only").
PUBLIC = {
    ("POST", "/auth/login"),
    ("POST", "/auth/register"),
    ("GET", "/auth/validateNewUser"),
    ("GET", "/auth/lostPassword"),
    ("GET", "/wasdi/hello"),
    ("GET", "/credits/types"),
    ("GET", "/credits/{payprov}/confirmation/{CHECKOUT_SESSION_ID}"),
    ("GET", "/subscriptions/{payprov}/confirmation/{CHECKOUT_SESSION_ID}"),
    ("GET", "/processors/{payprov}/confirmation/{CHECKOUT_SESSION_ID}"),
}

# Contract, "Authentication" item 3.
TOKEN = {
    ("GET", "/images/get"),
    ("GET", "/images/exists"),
    ("GET", "/styles/download"),
    ("GET", "/styles/downloadbyname"),
    ("GET", "/workflows/download"),
    ("GET", "/processors/downloadprocessor"),
}

NAME = re.compile(r"[a-z][a-z0-9_]*\.[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
PATH_PARAM = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*\}")

STYLE_B_FAILURES = {FailureKind.PRIMITIVE, FailureKind.PRIMITIVE_WITH_STATUS, FailureKind.INVALID_USER}
STYLE_C_FAILURES = {
    FailureKind.NULL,
    FailureKind.EMPTY_LIST,
    FailureKind.DEFAULT_MODEL,
    FailureKind.TEXT_ERROR,
    FailureKind.MINUS_ONE,
    FailureKind.FALSE,
    FailureKind.RUNNING_ERROR,
    FailureKind.INVALID_USER,
}


def _ids(ep: Endpoint) -> str:
    return ep.name


def test_exactly_216_endpoints() -> None:
    assert len(ENDPOINTS) == 216


def test_method_path_pairs_are_unique() -> None:
    pairs = Counter((e.method, e.path) for e in ENDPOINTS)
    assert [p for p, n in pairs.items() if n > 1] == []


def test_names_are_unique_and_well_formed() -> None:
    names = Counter(e.name for e in ENDPOINTS)
    assert [n for n, c in names.items() if c > 1] == []
    assert [n for n in names if not NAME.fullmatch(n)] == []
    assert set(BY_NAME) == set(names) | {e.name for e in EXTRAS}


def test_each_module_holds_only_its_own_group() -> None:
    for module in GROUP_MODULES:
        group = module.__name__.rsplit(".", 1)[-1]
        assert {e.group for e in module.ENDPOINTS} == {group}, module.__name__


def test_methods_are_http_verbs() -> None:
    assert {e.method for e in ENDPOINTS} <= {"GET", "POST", "PUT", "DELETE"}


@pytest.mark.parametrize(("base", "count"), sorted(EXPECTED_PER_BASE.items()))
def test_count_per_base_path(base: str, count: int) -> None:
    assert sum(1 for e in ENDPOINTS if e.base == base) == count


def test_no_unexpected_base_path() -> None:
    assert {e.base for e in ENDPOINTS} == set(EXPECTED_PER_BASE)


def test_every_referenced_model_exists() -> None:
    missing = {
        (e.name, ref)
        for e in ENDPOINTS
        for ref in (e.body.model, e.response.model)
        if ref is not None and ref not in MODELS
    }
    assert missing == set()


@pytest.mark.parametrize("ep", [e for e in ENDPOINTS if e.style is Style.STATUS], ids=_ids)
def test_style_a_lists_statuses(ep: Endpoint) -> None:
    assert len(ep.statuses) >= 1
    assert ep.failure.kind is FailureKind.ERROR_RESPONSE


@pytest.mark.parametrize("ep", [e for e in ENDPOINTS if e.style is not Style.STATUS], ids=_ids)
def test_styles_b_and_c_carry_a_body_failure(ep: Endpoint) -> None:
    allowed = STYLE_B_FAILURES if ep.style is Style.MARKER else STYLE_C_FAILURES
    assert ep.failure.kind in allowed


@pytest.mark.parametrize("ep", ENDPOINTS, ids=_ids)
def test_path_params_are_whole_segments(ep: Endpoint) -> None:
    assert ep.path.startswith("/")
    for segment in ep.path.strip("/").split("/"):
        assert segment, ep.path
        if "{" in segment or "}" in segment:
            assert PATH_PARAM.fullmatch(segment), segment
    assert ep.path_params == tuple(re.findall(r"\{([^}]+)\}", ep.path))


@pytest.mark.parametrize("ep", ENDPOINTS, ids=_ids)
def test_query_params_are_unique_and_distinct_from_path_params(ep: Endpoint) -> None:
    names = [p.name for p in ep.query]
    assert len(names) == len(set(names))
    assert not set(names) & set(ep.path_params)
    assert "token" not in names, "the token parameter is implied by Auth.TOKEN"


def test_public_endpoints() -> None:
    assert {(e.method, e.path) for e in ENDPOINTS if e.auth is Auth.PUBLIC} == PUBLIC


def test_token_endpoints() -> None:
    assert {(e.method, e.path) for e in ENDPOINTS if e.auth is Auth.TOKEN} == TOKEN


def test_payment_paths_use_the_provider_segment() -> None:
    payments = [e for e in ENDPOINTS if "{payprov}" in e.path]
    assert len(payments) == 6
    confirmations = [e for e in payments if e.path.endswith("/confirmation/{CHECKOUT_SESSION_ID}")]
    assert {e.base for e in confirmations} == {"/credits", "/subscriptions", "/processors"}
    assert all(e.mutates for e in confirmations)


def test_stated_defaults() -> None:
    lst = BY_NAME["subscriptions.list_all"]
    assert [(n, lst.param(n).default) for n in ("offset", "limit", "sortby", "order")] == [
        ("offset", 0), ("limit", 10), ("sortby", "name"), ("order", "asc")]
    delete = BY_NAME["products.delete"]
    assert delete.param("deletefile").default is True and delete.param("deletelayer").default is True
    assert BY_NAME["credits.list"].param("ascendingOrder").default is False
    reviews = BY_NAME["processor_media.list_reviews"]
    assert (reviews.param("page").default, reviews.param("itemsperpage").default) == (0, 4)
    users = BY_NAME["admin.list_users"]
    assert (users.param("offset").default, users.param("limit").default) == (0, 10)
    assert BY_NAME["search.query"].param("providers").default == "AUTO"


def test_state_changing_gets_are_marked() -> None:
    for name in ("processes.update_status", "products.delete", "processes.stop", "workflows.delete"):
        assert BY_NAME[name].mutates and not BY_NAME[name].retry_safe


# ---------------------------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------------------------

CAMEL = re.compile(r"[a-z][a-zA-Z0-9]*")

# Wire names that are not the camelCase of their attribute.  None today: every irregular spelling of the
# contract (Mission's lower-case ``indexname`` ...) is still what the generator gives for its attribute.
IRREGULAR_WIRE_NAMES: frozenset[tuple[str, str]] = frozenset()

RENAMED: dict[tuple[str, str], str] = {
    # (model, wire name): the Python name, where it is not the wire name in snake case: one name per thing
    ("ProcessWorkspaceViewModel", "processObjId"): "process_id",
    ("RunningProcessorViewModel", "processingIdentifier"): "process_id",
    ("ProcessorLogViewModel", "processWorkspaceId"): "process_id",
    ("WorkspaceListInfoViewModel", "workspaceName"): "name",
}
"""Each renamed attribute (issue 31): a process id is ``process_id`` and a workspace's name ``name`` everywhere."""

REQUIRED: dict[str, set[str]] = {
    # model: the fields every successful answer carries (the contract's guarantees), so not Optional in Python
    "ProcessWorkspaceViewModel": {"process_id", "status"},
    "RunningProcessorViewModel": {"process_id", "status"},
    "ProcessorLogViewModel": {"process_id", "row_number"},
    "WorkspaceListInfoViewModel": {"workspace_id", "name", "owner_user_id"},
    "StyleViewModel": {"style_id", "name"},
    "OrganizationListViewModel": {"organization_id", "name"},
    "StringResult": {"string_value"},
    "GeorefProductViewModel": {"file_name"},
}

# Extra spellings accepted on input only: the original server's ``public`` for ``isPublic`` (gaps §0.5) and
# the capitalised PrimitiveResult members (contract, cross-cutting convention 2).
INPUT_ONLY_ALIASES = frozenset({"public", "IntValue", "StringValue", "DoubleValue", "BoolValue"})


def _wire_name(name: str, cls: type[WasdiModel]) -> str:
    field = cls.model_fields[name]
    return field.serialization_alias or field.alias or name


def _sample(tp: Any, depth: int) -> Any:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        return _sample(next(a for a in get_args(tp) if a is not type(None)), depth)
    if tp is Any:
        return {"free": ["json", 1]}
    if tp is bool:
        return True
    if tp is int:
        return 7
    if tp is float:
        return 1.5
    if tp is str:
        return "text"
    if origin is list:
        (item,) = get_args(tp)
        if isinstance(item, type) and issubclass(item, BaseModel) and depth >= 2:
            return []
        return [_sample(item, depth)]
    if origin is dict:
        return {"key": _sample(get_args(tp)[1], depth)}
    if isinstance(tp, type) and issubclass(tp, WasdiModel):
        return _instance(tp, depth + 1)
    raise AssertionError(f"no sample for {tp!r}")


def _instance(cls: type[WasdiModel], depth: int = 0) -> WasdiModel:
    values = {name: _sample(field.annotation, depth) for name, field in cls.model_fields.items()}
    return cls(**values)


MODEL_ITEMS = sorted(MODELS.items())


def test_model_registry_is_keyed_by_class_name() -> None:
    assert all(cls.__name__ == name for name, cls in MODEL_ITEMS)


@pytest.mark.parametrize(("name", "cls"), MODEL_ITEMS, ids=[n for n, _ in MODEL_ITEMS])
def test_model_round_trips(name: str, cls: type[WasdiModel]) -> None:
    obj = _instance(cls)
    wire = obj.to_wire()
    assert set(wire) == {_wire_name(f, cls) for f in cls.model_fields}
    back = cls.model_validate(wire)
    assert back.to_wire() == wire
    assert back == obj


@pytest.mark.parametrize(("name", "cls"), MODEL_ITEMS, ids=[n for n, _ in MODEL_ITEMS])
def test_only_the_fields_every_answer_carries_are_required(name: str, cls: type[WasdiModel]) -> None:
    required = {attr for attr, f in cls.model_fields.items() if f.is_required()}
    assert required == REQUIRED.get(name, set())
    assert all(f.default is None for attr, f in cls.model_fields.items() if attr not in required)
    if not required:
        assert cls().to_wire() == {}


@pytest.mark.parametrize(("name", "cls"), MODEL_ITEMS, ids=[n for n, _ in MODEL_ITEMS])
def test_wire_names_are_camel_case(name: str, cls: type[WasdiModel]) -> None:
    for attr in cls.model_fields:
        wire = _wire_name(attr, cls)
        if (name, wire) in IRREGULAR_WIRE_NAMES:
            continue
        assert CAMEL.fullmatch(wire), (name, wire)
        assert wire == to_camel(attr) or RENAMED.get((name, wire)) == attr, (name, attr, wire)


def test_every_renamed_attribute_is_listed() -> None:
    renamed = {(name, _wire_name(attr, cls)): attr for name, cls in MODEL_ITEMS for attr in cls.model_fields
               if _wire_name(attr, cls) != to_camel(attr) and (name, _wire_name(attr, cls)) not in IRREGULAR_WIRE_NAMES}
    assert renamed == RENAMED


@pytest.mark.parametrize(("name", "cls"), MODEL_ITEMS, ids=[n for n, _ in MODEL_ITEMS])
def test_input_aliases_are_documented(name: str, cls: type[WasdiModel]) -> None:
    for attr, field in cls.model_fields.items():
        choices = field.validation_alias
        if isinstance(choices, AliasChoices):
            extra = {c for c in choices.choices if isinstance(c, str)} - {_wire_name(attr, cls)}
            assert extra <= INPUT_ONLY_ALIASES, (name, attr, extra)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("WorkspaceListInfoViewModel", True),
        ("WorkspaceEditorViewModel", True),
        ("StyleViewModel", True),
        ("SnapWorkflowViewModel", False),
        ("DeployedProcessorViewModel", 1),
    ],
)
def test_is_public_accepts_public_on_input(name: str, value: Any) -> None:
    cls = MODELS[name]
    carried = _instance(cls).to_wire(keep_none=True)
    required = {_wire_name(attr, cls): carried[_wire_name(attr, cls)]
                for attr, f in cls.model_fields.items() if f.is_required()}
    obj = cls.model_validate({**required, "public": value})
    assert obj.to_wire() == {**required, "isPublic": value}


def test_spot_wire_names() -> None:
    spots = {
        "ListReviewsViewModel": "numberOfOneStarVotes",
        "ProcessWorkspaceViewModel": "processObjId",
        "PublishBandResultViewModel": "geoserverBoundingBox",
        "NodeGroupViewModel": "nodeName",
        "ProcessWorkspaceAggregatedViewModel": "numberOfUnfinishedProcesses",
        "AppStatsViewModel": "users",
        "DeployedProcessorViewModel": "deploymentOngoing",
        "AppListViewModel": "isMine",
        "AppDetailViewModel": "showInStore",
        "NodeScoreByProcessWorkspaceViewModel": "timestampAsString",
    }
    for model_name, wire in spots.items():
        cls = MODELS[model_name]
        assert wire in {_wire_name(f, cls) for f in cls.model_fields}, (model_name, wire)


def test_georef_product_extends_product() -> None:
    georef, product = MODELS["GeorefProductViewModel"], MODELS["ProductViewModel"]
    assert issubclass(georef, product)
    assert set(georef.model_fields) - set(product.model_fields) == {"bbox"}


def test_metadata_is_recursive() -> None:
    wire = {"name": "root", "elements": [{"name": "child", "elements": [{"name": "leaf"}]}],
            "attributes": [{"description": "d", "data": "1", "dataType": 0, "numElems": 0}]}
    meta = MODELS["MetadataViewModel"].model_validate(wire)
    assert meta.to_wire() == wire
