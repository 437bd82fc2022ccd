"""The SDK docs' table of wire names and Python names (``reference/sdk/wire-names.md``, generated from the models
at every build by ``tools/docs_hooks.py``) has one row per member of every model, each saying what the model does."""

from __future__ import annotations

import re

import yaml
from tools.docs_hooks import wire_names_page

from tests.docs.test_site import ROOT
from wasdi_sdk.models import MODELS


def rows_by_model(page: str) -> dict[str, dict[str, str]]:
    """model → {wire name: Python name} as the page's "Every model" part shows them."""
    found: dict[str, dict[str, str]] = {}
    for section in page.split("\n### ")[1:]:
        model, _, table = section.partition("\n")
        found[model.strip()] = dict(re.findall(r"^\| `([^`]+)` \| `([^`]+)` \|", table, flags=re.M))
    return found


def test_every_member_of_every_model_has_its_row() -> None:
    shown = rows_by_model(wire_names_page())
    assert set(shown) == set(MODELS)
    for name, cls in MODELS.items():
        expected = {(f.serialization_alias or f.alias or attr): attr for attr, f in cls.model_fields.items()}
        assert shown[name] == expected, name
        for wire, attr in expected.items():  # the model reads the wire name into the attribute the table says
            read_as = cls.model_fields[attr].validation_alias
            assert read_as is None or wire in str(read_as)


def test_the_renamed_members_are_listed_first() -> None:
    page = wire_names_page()
    renamed = page.split("## Renamed", 1)[1].split("## Every model", 1)[0]
    assert "| `ProcessWorkspaceViewModel` | `processObjId` | `process_id` |" in renamed
    assert "| `RunningProcessorViewModel` | `processingIdentifier` | `process_id` |" in renamed
    assert "| `WorkspaceListInfoViewModel` | `workspaceName` | `name` |" in renamed


def test_the_page_is_in_the_sdk_reference() -> None:
    nav = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert "reference/sdk/wire-names.md" in str(nav)
