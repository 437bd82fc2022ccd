"""Removing an app's engine folder, the same way for every engine."""

from __future__ import annotations

import shutil

from ...domains.apps.engines import AppLayout


def remove_home(app: AppLayout) -> None:
    """Remove the app's environment, build log and history (nothing to do when they are gone)."""
    shutil.rmtree(app.home, ignore_errors=True)
