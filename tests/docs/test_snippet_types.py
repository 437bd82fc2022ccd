"""Every Python block of the README and of ``docs/`` that uses the SDK passes ``mypy --strict``, as a user's own
code would be checked: the SDK's types must let the documented code through without casts or ``or ""``.

All blocks go to one ``mypy`` run (one process, the project's cache). A block that is a fragment of a longer
program (it uses ``client`` or an id it does not define) is checked after the declarations of ``PRELUDE``,
the names the pages' prose gives those fragments.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(?P<indent>[ ]*)```python[^\n]*\n(?P<body>.*?)^(?P=indent)```[ ]*$", re.M | re.S)
USES_SDK = re.compile(r"\bwasdi_sdk\b|\bclient\.")
PRELUDE = (
    "from wasdi_sdk import WasdiClient\n"
    "client: WasdiClient\n"
    "workspace_id: str\n"
    "layer_id: str\n"
)
"""What a fragment may use without defining it: a logged-in client and the ids the surrounding prose names."""


def sdk_blocks() -> dict[str, str]:
    """``<page>_<n>`` → the text of the n-th Python block of the page that uses the SDK."""
    found: dict[str, str] = {}
    for page in PAGES:
        for n, match in enumerate(FENCE.finditer(page.read_text(encoding="utf-8"))):
            body = "\n".join(line.removeprefix(match["indent"]) for line in match["body"].splitlines())
            if USES_SDK.search(body):
                found[f"{page.stem.replace('-', '_').lower()}_{n}"] = body
    return found


def test_the_pages_have_sdk_blocks() -> None:
    names = sdk_blocks()
    assert {"readme", "quickstart", "first_app", "async", "search"} <= {name.rsplit("_", 1)[0] for name in names}


def test_every_sdk_block_of_the_readme_and_the_docs_passes_mypy_strict(tmp_path: Path) -> None:
    blocks = sdk_blocks()
    for name, body in blocks.items():
        (tmp_path / f"{name}.py").write_text(PRELUDE + body + "\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--cache-dir", str(ROOT / ".mypy_cache"),
         "--config-file", str(ROOT / "pyproject.toml"), *sorted(str(p) for p in tmp_path.glob("*.py"))],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
