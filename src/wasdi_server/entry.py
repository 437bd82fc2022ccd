"""The ``wasdi-server`` script: says which extra to install when the server's libraries are missing."""

from __future__ import annotations

import importlib.util
import sys

NEEDED = ("typer", "rich", "falcon", "waitress", "defusedxml", "asyncssh")


def main() -> int:
    missing = [name for name in NEEDED if importlib.util.find_spec(name) is None]
    if missing:
        print(f"wasdi-server needs the server extra ({', '.join(missing)} missing): "
              "pip install 'wasdi-toolkit[server]'", file=sys.stderr)
        return 1
    from .cli import main as run

    return run()


if __name__ == "__main__":
    sys.exit(main())
