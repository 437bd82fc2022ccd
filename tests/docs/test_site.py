"""The documentation site builds with ``mkdocs build --strict``: a broken link, a page missing from the nav, an
SDK reference that no longer resolves or a docstring mkdocstrings cannot read fails this test.

The site is built once per module and then opened as the README says, ``site/index.html`` as a file, in a real
headless Chromium (Debian's ``chromium`` and ``chromium-driver``, driven by Selenium): every link of the
navigation must land on a page, search must find a word, and the first code block of each page must show its
lines whole."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urldefrag, urlparse

import pytest
import yaml

from tests.environment import unavailable

ROOT = Path(__file__).resolve().parents[2]
WINDOW = (1280, 900)
"""The browser window: a laptop's screen, where Material shows the navigation and the table of contents."""
PAGE_LOAD_SECONDS = 30
NAV_LINKS = "nav.md-nav--primary a.md-nav__link[href]"

# One worker builds the site and opens it (make test schedules with --dist loadgroup).
pytestmark = pytest.mark.xdist_group("docs_site")


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


@dataclass
class Site:
    folder: Path
    log: str
    returncode: int


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """The site as ``make docs`` builds it (strict), into a temporary folder: built once for this module."""
    folder = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # the theme's notice about its successor
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(folder)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, check=False, env=env)
    return Site(folder, done.stdout + done.stderr, done.returncode)


@pytest.fixture(scope="module")
def built(site: Site) -> Path:
    """The built site's folder (the test fails here if the build did)."""
    assert site.returncode == 0, site.log
    return site.folder


def test_the_site_builds_strict_with_no_warning(site: Site) -> None:
    assert site.returncode == 0, site.log
    assert "WARNING" not in site.log, site.log
    pages = {p.relative_to(site.folder).as_posix() for p in site.folder.rglob("*.html")}
    for expected in ("index.html", "quickstart.html", "first-app.html", "maps-qgis.html", "async.html",
                     "operating.html", "server.html", "maps.html", "search.html", "api.html", "figures.html",
                     "reference/cli.html", "reference/server-cli.html", "reference/openapi.html",
                     "reference/sdk/index.html", "reference/sdk/groups/workspaces.html"):
        assert expected in pages, f"{expected} is missing from the site"
    workspaces = (site.folder / "reference/sdk/groups/workspaces.html").read_text(encoding="utf-8")
    assert "share_add" in workspaces and "Share with a user" in workspaces  # rendered from the docstrings
    cli = (site.folder / "reference/cli.html").read_text(encoding="utf-8")
    assert "wasdi apps run" in cli and "--follow" in cli
    assert (site.folder / "reference" / "openapi.json").exists()
    assert "/ws/byuser" in (site.folder / "reference/openapi.html").read_text(encoding="utf-8")


def test_the_site_needs_no_network(built: Path) -> None:
    """Opened from a file, offline: no script, style sheet or font is fetched from elsewhere."""
    for page in built.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        for attribute in ('src="http', "stylesheet\" href=\"http", 'rel="preconnect"'):
            assert attribute not in text, f"{page.relative_to(built)} loads {attribute!r}"
    assert (built / "search" / "search_index.js").exists()  # the index as a script: fetch() fails on file://


def test_docstring_examples_are_code_blocks(built: Path) -> None:
    """A docstring's doctest session is rendered as highlighted code (tools/griffe_docstring_examples.py), not as
    the three nested quotes ``>>>`` is to Markdown."""
    clients = (built / "reference/sdk/index.html").read_text(encoding="utf-8")
    text = clients[clients.index("A client of one WASDI server"):]
    first_block = text[text.index("<pre>"):text.index("</pre>")]
    assert text.index("<pre>") < text.index("Groups are attributes")
    assert '<span class="gp">&gt;&gt;&gt; </span>' in first_block  # a prompt, highlighted as one
    assert 'secret-password' in first_block and "string_value" in first_block
    for page in (built / "reference").rglob("*.html"):
        assert "<blockquote>" not in page.read_text(encoding="utf-8"), page


# -- in a browser ------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium through its chromedriver (both from Debian: apt-get install chromium chromium-driver)."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        unavailable("no chromium/chromedriver (apt-get install -y chromium chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (the test extra: pip install -e '.[test]')")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={WINDOW[0]},{WINDOW[1]}", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    # The system's driver, named: Selenium would otherwise look for one on the network.
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    chrome.set_page_load_timeout(PAGE_LOAD_SECONDS)
    try:
        yield chrome
    finally:
        chrome.quit()


def hrefs(chrome: Any, selector: str) -> list[str]:
    """The resolved addresses of the links ``selector`` finds, without their fragments (one round trip)."""
    found = chrome.execute_script(
        "return Array.from(document.querySelectorAll(arguments[0]), a => [a.href, a.textContent]);", selector)
    return [urldefrag(href).url for href, _ in found]


def local_file(url: str) -> Path:
    parsed = urlparse(url)
    assert parsed.scheme == "file", url
    return Path(unquote(parsed.path))


@dataclass
class Visit:
    """What the browser found on one address."""
    opened: Path
    is_page: bool
    broken_links: list[Path]
    first_block: tuple[int, int] | None
    """The first code block's text width and its box's width, in pixels."""


@pytest.fixture(scope="module")
def visits(built: Path, browser: Any) -> dict[str, Visit]:
    """Every address reached from site/index.html (opened as a file) by the navigation of every page reached."""
    from selenium.webdriver.common.by import By

    found: dict[str, Visit] = {}
    queue = [(built / "index.html").as_uri()]
    while queue:
        url = queue.pop()
        if url in found:
            continue
        browser.get(url)
        page = bool(browser.find_elements(By.CSS_SELECTOR, "article.md-content__inner h1"))
        links = [local_file(link) for link in hrefs(browser, "article.md-content__inner a[href^='file:']")]
        widths = browser.execute_script(
            "const code = document.querySelector('article pre > code');"
            "return code ? [code.scrollWidth, code.clientWidth] : null;")
        found[url] = Visit(local_file(browser.current_url), page, [link for link in links if not link.is_file()],
                           tuple(widths) if widths else None)
        queue += [link for link in hrefs(browser, NAV_LINKS) if link not in found]
    return found


def test_every_link_of_the_navigation_lands_on_a_page(built: Path, visits: dict[str, Visit]) -> None:
    """From site/index.html opened as a file, every page the navigation names, from every page, is a page of
    the site (not a folder's listing), and so is every link within a page's text."""
    for url, visit in visits.items():
        assert visit.opened.is_file() and visit.opened.suffix == ".html", f"{url} opens {visit.opened}, not a page"
        assert visit.is_page, f"{url} is not a page of the site"
        assert not visit.broken_links, f"{url} links to {visit.broken_links}, not files"
    pages = {visit.opened.relative_to(built).as_posix() for visit in visits.values()}
    expected = {page.removesuffix(".md") + ".html" for page in nav_pages()}
    assert expected <= pages, f"not reached from the navigation: {sorted(expected - pages)}"
    assert "reference/sdk/groups/workspaces.html" in pages  # the groups the hook adds to the nav


def test_search_finds_a_word_from_a_file(built: Path, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get((built / "quickstart.html").as_uri())
    box = browser.find_element(By.CSS_SELECTOR, "input.md-search__input")
    assert box.is_displayed(), "no search box (Material hides it when its search worker cannot start)"
    box.click()
    box.send_keys("QGIS")
    wait = WebDriverWait(browser, PAGE_LOAD_SECONDS)
    wait.until(expected_conditions.presence_of_element_located((By.CSS_SELECTOR, ".md-search-result__item a")))
    found = hrefs(browser, ".md-search-result__item a")
    assert (built / "maps-qgis.html").as_uri() in found, found
    browser.get(found[0])
    assert local_file(browser.current_url).is_file()
    assert "QGIS" in browser.find_element(By.CSS_SELECTOR, "article.md-content__inner").text


def test_the_first_code_block_of_each_page_shows_its_lines_whole(visits: dict[str, Visit]) -> None:
    """What a newcomer reads first, comments included, needs no sideways scrolling in a laptop's window."""
    hidden = {visit.opened.name: f"{visit.first_block[0]} px of text in {visit.first_block[1]} px"
              for visit in visits.values() if visit.first_block and visit.first_block[0] > visit.first_block[1]}
    assert not hidden, f"first code blocks wider than the page at {WINDOW[0]}x{WINDOW[1]}: {hidden}"


def test_every_docs_page_is_in_the_nav() -> None:
    in_nav = set(nav_pages())
    on_disk = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert on_disk <= in_nav, f"not in mkdocs.yml's nav: {sorted(on_disk - in_nav)}"


def test_the_readme_points_to_the_site() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "make docs" in readme and "docs/quickstart.md" in readme
