"""``make test`` runs every test in one run (those marked ``slow`` first, the quick ones last); ``make test-quick``
runs the quick ones only, after ruff; the README names both where it names ``make test``."""

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
    return [m.group(1) for line in lines if (m := re.search(r"\$\(PYTEST\) .*-m '([^']+)'.* tests$", line))]


def test_make_test_runs_every_test_and_test_quick_the_quick_ones() -> None:
    assert marker_expressions(recipe("test")) == ["not install"]  # slow and quick alike
    assert marker_expressions(recipe("test-quick")) == ["not slow and not install"]
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

    def get_closest_marker(self, name: str) -> pytest.Mark | None:
        return next((m.mark for m in self.markers if m.name == name), None)


def test_tests_under_a_slow_path_are_marked_slow_and_no_others() -> None:
    from tests.conftest import TESTS, pytest_collection_modifyitems

    e2e = Collected(TESTS / "e2e" / "test_data_e2e.py")
    tutorials = Collected(TESTS / "docs" / "test_tutorials.py")
    quick = Collected(TESTS / "sdk" / "test_atomic_files.py")
    pytest_collection_modifyitems([e2e, tutorials, quick])  # type: ignore[list-item]
    assert [m.name for m in e2e.markers] == ["slow"] and [m.name for m in tutorials.markers] == ["slow"]
    assert quick.markers == []


def test_the_longest_slow_tests_come_first() -> None:
    from tests.conftest import FIRST, TESTS, pytest_collection_modifyitems

    for where in FIRST:
        assert (TESTS / where).exists(), f"tests/conftest.py's FIRST names {where}, which is gone"
    packaging = Collected(TESTS / "packaging" / "test_floor.py")
    matrix = Collected(TESTS / "server" / "test_access_matrix.py")
    apps = Collected(TESTS / "server" / "test_apps.py")
    quick = Collected(TESTS / "sdk" / "test_atomic_files.py")
    items = [packaging, matrix, apps, quick]
    pytest_collection_modifyitems(items)  # type: ignore[arg-type]
    assert items == [apps, packaging, matrix, quick]  # FIRST's, the other slow ones, then the quick ones


def test_a_costly_module_is_one_unit_of_work_and_other_tests_one_each() -> None:
    from tests.conftest import ONE_WORKER, TESTS, one_worker_scope

    for where in ONE_WORKER:
        assert (TESTS / where).exists(), f"tests/conftest.py's ONE_WORKER names {where}, which is gone"
    matrix = "tests/server/test_access_matrix.py"
    assert one_worker_scope(f"{matrix}::test_cell[admin-GET /ws/byuser]", ROOT) == matrix
    assert one_worker_scope(f"{matrix}::test_other", ROOT) == matrix
    assert one_worker_scope("tests/server/test_apps.py::test_x", ROOT) is None
    assert one_worker_scope("elsewhere/test_x.py::test_x", ROOT) is None


def test_under_loadgroup_the_scheduler_makes_each_costly_module_one_unit(pytestconfig: pytest.Config,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import pytest_xdist_make_scheduler

    options = {"dist": "loadgroup", "tx": ["2*popen"]}
    monkeypatch.setattr(pytestconfig, "getvalue", lambda name, *_: options.get(name))
    scheduler = pytest_xdist_make_scheduler(pytestconfig, None)
    matrix = "tests/server/test_access_matrix.py"
    assert scheduler._split_scope(f"{matrix}::test_cell[a]") == scheduler._split_scope(f"{matrix}::test_b") == matrix
    assert scheduler._split_scope("tests/server/test_apps.py::test_x") == "tests/server/test_apps.py::test_x"
    assert scheduler._split_scope("tests/server/test_apps.py::test_x@g") == "g"  # xdist's own groups as before
    options["dist"] = "load"
    assert pytest_xdist_make_scheduler(pytestconfig, None) is None  # other modes are xdist's
