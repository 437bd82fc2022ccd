"""The ``wasdi`` script: says which extra to install when the CLI's libraries are missing, then runs the CLI."""

from __future__ import annotations

import importlib.util
import sys

NEEDED = ("typer", "rich", "tomli_w")


def main() -> int:
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        print(f"wasdi needs the cli extra ({', '.join(missing)} missing): pip install 'wasdi-toolkit[cli]'",
              file=sys.stderr)
        return 1
    from .main import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
