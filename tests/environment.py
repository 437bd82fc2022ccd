"""What a test needs from the machine, and what happens when it is missing: a skip that says why on a laptop,
a failure under ``CI=true``, where the machine is set up to have everything."""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def on_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip the test with ``reason``, or fail with it under ``CI=true``."""
    if on_ci():
        pytest.fail(f"needed under CI=true: {reason}")
    pytest.skip(reason)


def require(condition: object, reason: str) -> None:
    """``unavailable(reason)`` unless ``condition`` holds."""
    if not condition:
        unavailable(reason)
