"""``make test`` runs every test, in two stages (the quick ones, then those marked ``slow``); ``make test-quick``
runs the first stage only, after ruff; the README names both where it names ``make test``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def recipe(target: str) -> list[str]:
    """The command lines of ``target``'s recipe in the Makefile (make's own comments left out)."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    found = re.search(rf"^{re.escape(target)}:[^\n]*\n((?:\t[^\n]*\n)+)", text, flags=re.M)
    assert found, f"no {target} target"
    return [line.strip() for line in found.group(1).splitlines() if not line.strip().startswith("@#")]


def marker_expressions(lines: list[str]) -> list[str]:
    return [m.group(1) for line in lines if (m := re.search(r"\$\(PYTEST\) -m '([^']+)' tests$", line))]


def test_make_test_runs_the_quick_stage_then_the_slow_one_and_so_every_test() -> None:
    quick, slow = marker_expressions(recipe("test"))
    assert quick == "not slow and not install" and slow == "slow and not install"  # together: all but install
    assert marker_expressions(recipe("test-quick")) == [quick]
    assert any(line.startswith("$(BIN)/ruff check") for line in recipe("test-quick"))
    assert any("mypy --strict" in line for line in recipe("test"))


def test_the_slow_paths_exist_and_the_end_to_end_tests_are_among_them(request: pytest.FixtureRequest) -> None:
    from tests.conftest import SLOW, TESTS

    for where in SLOW:
        assert (TESTS / where).exists(), f"tests/conftest.py's SLOW names {where}, which is gone"
    assert "e2e/" in SLOW
    assert request.node.get_closest_marker("slow") is None  # this file is not under a slow path


def test_the_readme_names_test_quick_beside_test() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme[readme.index("```sh\nmake run"):]
    block = block[:block.index("```", 3)]
    assert "\nmake test " in block and "\nmake test-quick " in block


class Collected:
    """What the marking hook reads and writes of a collected test."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.markers: list[pytest.MarkDecorator] = []

    def add_marker(self, marker: pytest.MarkDecorator) -> None:
        self.markers.append(marker)


def test_tests_under_a_slow_path_are_marked_slow_and_no_others() -> None:
    from tests.conftest import TESTS, pytest_collection_modifyitems

    e2e = Collected(TESTS / "e2e" / "test_data_e2e.py")
    tutorials = Collected(TESTS / "docs" / "test_tutorials.py")
    quick = Collected(TESTS / "sdk" / "test_atomic_files.py")
    pytest_collection_modifyitems([e2e, tutorials, quick])  # type: ignore[list-item]
    assert [m.name for m in e2e.markers] == ["slow"] and [m.name for m in tutorials.markers] == ["slow"]
    assert quick.markers == []
