"""One resource class per group of the catalogue."""

from .auth import AuthResource
from .utility import UtilityResource
from .workspaces import WorkspacesResource

RESOURCES: dict[str, type] = {
    "auth": AuthResource,
    "utility": UtilityResource,
    "workspaces": WorkspacesResource,
}

__all__ = ["RESOURCES", "AuthResource", "UtilityResource", "WorkspacesResource"]
