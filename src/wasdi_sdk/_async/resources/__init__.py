"""Generated from ``wasdi_sdk.resources`` by ``make async``: do not edit.

One resource class per group of the catalogue."""

from __future__ import annotations

from ..events import AsyncEventsResource
from .admin import AsyncAdminResource
from .auth import AsyncAuthResource
from .console import AsyncConsoleResource
from .credits import AsyncCreditsResource
from .file_buffer import AsyncFileBufferResource
from .files import AsyncFilesResource
from .images import AsyncImagesResource
from .maps import AsyncMapsResource
from .nodes import AsyncNodesResource
from .organizations import AsyncOrganizationsResource
from .package_manager import AsyncPackageManagerResource
from .param_templates import AsyncParamTemplatesResource
from .processes import AsyncProcessesResource
from .processor_media import AsyncProcessorMediaResource
from .processors import AsyncProcessorsResource
from .products import AsyncProductsResource
from .projects import AsyncProjectsResource
from .search import AsyncSearchResource
from .styles import AsyncStylesResource
from .subscriptions import AsyncSubscriptionsResource
from .utility import AsyncUtilityResource
from .workflows import AsyncWorkflowsResource
from .workspaces import AsyncWorkspacesResource

"One resource class per group of the catalogue."
RESOURCES: dict[str, type] = {
    "admin": AsyncAdminResource,
    "auth": AsyncAuthResource,
    "console": AsyncConsoleResource,
    "credits": AsyncCreditsResource,
    "file_buffer": AsyncFileBufferResource,
    "files": AsyncFilesResource,
    "images": AsyncImagesResource,
    "nodes": AsyncNodesResource,
    "organizations": AsyncOrganizationsResource,
    "param_templates": AsyncParamTemplatesResource,
    "package_manager": AsyncPackageManagerResource,
    "processes": AsyncProcessesResource,
    "processor_media": AsyncProcessorMediaResource,
    "processors": AsyncProcessorsResource,
    "products": AsyncProductsResource,
    "projects": AsyncProjectsResource,
    "search": AsyncSearchResource,
    "styles": AsyncStylesResource,
    "subscriptions": AsyncSubscriptionsResource,
    "utility": AsyncUtilityResource,
    "workflows": AsyncWorkflowsResource,
    "workspaces": AsyncWorkspacesResource,
}
__all__ = [
    "RESOURCES",
    "AsyncAdminResource",
    "AsyncAuthResource",
    "AsyncConsoleResource",
    "AsyncCreditsResource",
    "AsyncEventsResource",
    "AsyncFileBufferResource",
    "AsyncFilesResource",
    "AsyncImagesResource",
    "AsyncMapsResource",
    "AsyncNodesResource",
    "AsyncOrganizationsResource",
    "AsyncPackageManagerResource",
    "AsyncParamTemplatesResource",
    "AsyncProcessesResource",
    "AsyncProcessorMediaResource",
    "AsyncProcessorsResource",
    "AsyncProductsResource",
    "AsyncProjectsResource",
    "AsyncSearchResource",
    "AsyncStylesResource",
    "AsyncSubscriptionsResource",
    "AsyncUtilityResource",
    "AsyncWorkflowsResource",
    "AsyncWorkspacesResource",
]
