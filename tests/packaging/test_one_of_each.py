"""One of each mechanism in src/: a second hand-written LRU cache, size formatter, zip streamer, atomic write,
folder fsync, main-node test or date conversion fails here, naming the file (issue 22, item 7).  The one of each:
``wasdi_server.bounded_cache``, ``wasdi_sdk.units``, ``wasdi_server.zip_streams``,
``wasdi_sdk.atomic_files``, ``wasdi_server.domains.platform.main_node.is_main_node``, ``wasdi_server.dates``, and
``wasdi_server.files_beneath`` for opening a file of a user's folder without following links (issue 28)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def sources() -> dict[str, str]:
    return {p.relative_to(SRC).as_posix(): p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")
            if "/data/" not in p.as_posix()}


def calls(text: str) -> set[str]:
    """The dotted names called in ``text`` (``os.replace``, ``datetime.fromtimestamp``, ``x.move_to_end``)."""
    found = set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call):
            found.add(ast.unparse(node.func))
    return found


RULES: list[tuple[str, str, set[str]]] = [
    # what, a pattern over the called names or the text, where it may stand
    ("an LRU of its own", r"move_to_end|popitem|OrderedDict", {"wasdi_server/bounded_cache.py"}),
    ("a size formatter", r"def (human_size|search_size)\b|\"KB\", \"MB\"", {"wasdi_sdk/units.py"}),
    ("a zip streamer", r"ZipFile\([^)]*\"w\"", {"wasdi_server/zip_streams.py", "wasdi_cli/commands/apps.py"}),
    ("an fsync of a folder", r"def fsync_(dir|folder|directory)\b", {"wasdi_sdk/atomic_files.py"}),
    ("an opener of users' files of its own", r"openat2|RESOLVE_BENEATH|O_NOFOLLOW", {"wasdi_server/files_beneath.py"}),
    ("a main-node test", r"== MAIN_NODE|== \"wasdi\"|!= \"wasdi\"", {"wasdi_server/domains/platform/main_node.py"}),
    ("a date conversion", r"\b(fromtimestamp|strptime|fromisoformat|gmtime|time\.strftime)\(|datetime\.now\(",
     {"wasdi_server/dates.py", "wasdi_sdk/resources/subscriptions.py", "wasdi_sdk/_async/resources/subscriptions.py",
      "wasdi_sdk/search_query.py", "wasdi_cli/output.py", "wasdi_cli/commands/market.py",
      "wasdi_cli/commands/workspaces.py"}),
]
"""The CLI's and the SDK's own date texts (what they send and check, what they show in local time) are theirs:
they cannot import the server's helper."""


@pytest.mark.parametrize(("what", "pattern", "home"), RULES, ids=[r[0] for r in RULES])
def test_one_of_each(what: str, pattern: str, home: set[str]) -> None:
    elsewhere = sorted(path for path, text in sources().items() if path not in home and re.search(pattern, text))
    assert elsewhere == [], f"{what} outside {sorted(home)}: {elsewhere}"


def test_every_atomic_replace_goes_through_the_one_helper() -> None:
    # os.replace of a file that must survive a crash is atomic_files' (fsync, rename, fsync the folder); the others
    # swap whole folders (an app's files, staged beside them) or are the SFTP protocol's own rename.
    allowed = {"wasdi_sdk/atomic_files.py", "wasdi_server/domains/apps/app_files.py",
               "wasdi_server/transfer/sftp_server.py"}
    users = sorted(path for path, text in sources().items() if "os.replace" in calls(text) and path not in allowed)
    assert users == []


def test_every_fsync_is_the_helpers_or_an_append() -> None:
    # Besides atomic_files: the store's journal and the run logs fsync the lines they append, and the SFTP server
    # fsyncs when its client asks (the protocol's fsync extension).
    allowed = {"wasdi_sdk/atomic_files.py", "wasdi_server/store/tinydb_store.py", "wasdi_server/store/logs.py",
               "wasdi_server/transfer/sftp_server.py"}
    users = sorted(path for path, text in sources().items() if "os.fsync" in calls(text) and path not in allowed)
    assert users == []
