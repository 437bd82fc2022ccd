"""Packages and code the tests hand to the server as if users had written them (``reaches.py``: hostile
attempts; ``hostile_build``: an sdist whose build code runs them)."""

from pathlib import Path


def reaches_path() -> Path:
    return Path(__file__).with_name("reaches.py")
