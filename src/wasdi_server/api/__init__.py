"""HTTP resources, one module per group.  Importing this package registers every handler."""

from . import auth, utility, workspaces

__all__ = ["auth", "utility", "workspaces"]
