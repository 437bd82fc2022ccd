"""Notebooks on a workspace (``/console/create``, ``/console/ready``): a JupyterLab per user and workspace,
run in the box like an app, with the official library set up for the workspace (``notebooks``: which
labs run, ``lab``: one lab).  docs/notebooks.md says what a lab may reach."""

from .notebooks import INSTALL, LAUNCH_NOTEBOOK, STARTING_MESSAGE, Notebooks, missing_packages

__all__ = ["INSTALL", "LAUNCH_NOTEBOOK", "STARTING_MESSAGE", "Notebooks", "missing_packages"]
