"""How long the SDK and the CLI take to start, against their floors measured in the same run.

Each figure is the median wall time of a fresh ``python`` process over ``--rounds`` interleaved
rounds (so a busy moment on the machine hits every figure alike):

* ``import wasdi_sdk`` and ``from wasdi_sdk import WasdiClient`` (what a notebook runs first) against
  ``import httpx, pydantic`` (target <= 1.2x each);
* ``wasdi ws --help`` against ``import typer`` (target <= 2.5x), and, for information, the same
  ``ws --help`` of a minimal Typer app with one group of one command: what Typer itself costs to
  print a group's help (it imports pydantic and rich for that).

Figures, not a test: exits 0 unless ``--check`` is given and a target is missed.

    python bench/startup.py [--rounds 15] [--check]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

MINIMAL_TYPER_APP = """
import typer
app, group = typer.Typer(), typer.Typer()
@group.command()
def hello(name: str = "x") -> None:
    '''Say hello.'''
app.add_typer(group, name="ws")
@app.command()
def other() -> None:
    '''Another command.'''
app(["ws", "--help"], prog_name="minimal")
"""

PROGRAMS: dict[str, str] = {
    "import httpx, pydantic": "import httpx, pydantic",
    "import wasdi_sdk": "import wasdi_sdk",
    "from wasdi_sdk import WasdiClient": "from wasdi_sdk import WasdiClient",
    "import typer": "import typer",
    "wasdi ws --help": "import sys\nfrom wasdi_cli.main import main\nsys.exit(main(['ws', '--help']))",
    "minimal Typer app: ws --help": MINIMAL_TYPER_APP,
}

TARGETS = [
    ("import wasdi_sdk", "import httpx, pydantic", 1.2),
    ("from wasdi_sdk import WasdiClient", "import httpx, pydantic", 1.2),
    ("wasdi ws --help", "import typer", 2.5),
]
INFORMATIVE = [
    ("minimal Typer app: ws --help", "import typer"),
    ("wasdi ws --help", "minimal Typer app: ws --help"),
]


def wall(code: str) -> float:
    env = {**os.environ, "PYTHONPATH": str(SRC), "NO_COLOR": "1"}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--check", action="store_true", help="exit 1 if a target is missed")
    args = parser.parse_args()
    for code in PROGRAMS.values():  # warm the bytecode caches
        wall(code)
    times: dict[str, list[float]] = {name: [] for name in PROGRAMS}
    for _ in range(args.rounds):
        for name, code in PROGRAMS.items():
            times[name].append(wall(code))
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, value in median.items():
        print(f"{name:<36} {value * 1e3:7.0f} ms")
    print()
    missed = []
    for name, floor, target in TARGETS:
        ratio = median[name] / median[floor]
        ok = ratio <= target
        print(f"{name} / {floor}: {ratio:5.2f}x  target <= {target}  {'ok' if ok else 'MISSED'}")
        if not ok:
            missed.append(name)
    for name, floor in INFORMATIVE:
        print(f"{name} / {floor}: {median[name] / median[floor]:5.2f}x  (for information)")
    return 1 if missed and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
