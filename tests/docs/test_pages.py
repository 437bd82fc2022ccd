"""What the README and the server guide say, checked against the code: the offline promise names the one thing
that reaches the network and the settings that keep it local, the server guide files each paragraph under its
section and lists each folder once, and the README says how to serve on another port."""

from __future__ import annotations

import re
from pathlib import Path

from wasdi_server.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SERVER_GUIDE = (ROOT / "docs" / "server.md").read_text(encoding="utf-8")
FIRST_APP = (ROOT / "docs" / "first-app.md").read_text(encoding="utf-8")


def sections(text: str) -> dict[str, str]:
    """``## `` title → its text (up to the next ``## ``; its ``### `` subsections included)."""
    parts = re.split(r"^## (.+)$", text, flags=re.M)
    return {title.strip(): body for title, body in zip(parts[1::2], parts[2::2], strict=True)}


def paragraph_leads(text: str) -> list[str]:
    """The bold lead-ins of its paragraphs (``**Sessions.**``)."""
    return re.findall(r"^\*\*([^*]+)\*\*", text, flags=re.M)


def prose(text: str) -> str:
    """``text`` as one line (a sentence wrapped over lines is searched whole)."""
    return " ".join(text.split())


def test_the_offline_promise_names_app_deploys_and_the_settings_that_keep_them_offline() -> None:
    for page in (README, FIRST_APP):
        text = prose(page)
        assert "works offline once" not in text and "work offline once" not in text
        assert "WASDI_SERVER_APPS_OFFLINE=true" in text and "WASDI_SERVER_APPS_FIND_LINKS=" in text
        assert "apps_offline" in text and "apps_find_links" in text
        # the wheels to download are those of the library the server installs in every app's environment
        assert f"pip download {Settings().apps_library} " in text
    said = prose(README[:README.index("## A five-minute tour")])
    assert "work offline, but for one thing: deploying an app" in said
    apps = prose(sections(README)["Beyond the tour"].split("### Apps", 1)[1].split("### ", 1)[0])
    assert "the one thing here that reaches the network" in apps


def test_the_server_guide_files_the_security_paragraphs_under_security() -> None:
    found = sections(SERVER_GUIDE)
    security = paragraph_leads(found["Security"])
    for lead in ("Sessions.", "Passwords.", "Lost passwords.", "Request bodies.", "Download names.", "Logs."):
        assert lead in security, (lead, security)
    for title in ("Apps", "What an app can reach"):
        assert not set(paragraph_leads(found[title])) & set(security), title
    assert sum(lead.startswith("Login") for lead in security) == 1  # one account of the throttle, not two


def test_the_data_directory_lists_each_entry_once() -> None:
    layout = sections(SERVER_GUIDE)["The data directory"].split("```", 2)[1]
    entries = [line.split()[0] for line in layout.splitlines() if line and not line.startswith(" ")]
    assert "layers/<layerId>.png" in entries
    assert len(entries) == len(set(entries)), [e for e in entries if entries.count(e) > 1]


def test_the_readme_says_how_to_serve_on_another_port_next_to_the_two_commands() -> None:
    commands = README.index("\nmake run ")
    nearby = prose(README[commands:README.index("## A five-minute tour")])
    assert "`make run PORT=18081`" in nearby and "WASDI_SERVER_PORT" in nearby
