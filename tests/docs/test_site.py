"""The documentation site builds with ``mkdocs build --strict``: a broken link, a page missing from the nav, an
SDK reference that no longer resolves or a docstring mkdocstrings cannot read fails this test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]


def nav_pages() -> list[str]:
    """The Markdown files under docs/ that the nav names (generated pages included)."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    return [page for page in found if (ROOT / "docs" / page).exists()]


def test_the_site_builds_strict_with_no_warning(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's notice about its successor
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False, env=env)
    log = done.stdout + done.stderr
    assert done.returncode == 0, log
    assert "WARNING" not in log, log
    pages = {p.relative_to(site).as_posix() for p in site.rglob("index.html")}
    for expected in ("index.html", "quickstart/index.html", "first-app/index.html", "maps-qgis/index.html",
                     "async/index.html", "operating/index.html", "server/index.html", "maps/index.html",
                     "search/index.html", "api/index.html", "figures/index.html", "reference/cli/index.html",
                     "reference/server-cli/index.html", "reference/openapi/index.html",
                     "reference/sdk/index.html", "reference/sdk/groups/workspaces/index.html"):
        assert expected in pages, f"{expected} is missing from the site"
    workspaces = (site / "reference/sdk/groups/workspaces/index.html").read_text(encoding="utf-8")
    assert "share_add" in workspaces and "Share with a user" in workspaces  # rendered from the docstrings
    cli = (site / "reference/cli/index.html").read_text(encoding="utf-8")
    assert "wasdi apps run" in cli and "--follow" in cli
    assert (site / "reference" / "openapi.json").exists()
    assert "/ws/byuser" in (site / "reference/openapi/index.html").read_text(encoding="utf-8")


def test_every_docs_page_is_in_the_nav() -> None:
    in_nav = set(nav_pages())
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk <= in_nav, f"not in mkdocs.yml's nav: {sorted(on_disk - in_nav)}"


def test_the_readme_points_to_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make docs" in readme and "docs/quickstart.md" in readme
