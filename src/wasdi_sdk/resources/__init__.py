"""One resource class per group of the catalogue."""

from .admin import AdminResource
from .auth import AuthResource
from .console import ConsoleResource
from .credits import CreditsResource
from .events import EventsResource
from .file_buffer import FileBufferResource
from .files import FilesResource
from .images import ImagesResource
from .maps import MapsResource
from .nodes import NodesResource
from .organizations import OrganizationsResource
from .package_manager import PackageManagerResource
from .param_templates import ParamTemplatesResource
from .processes import ProcessesResource
from .processor_media import ProcessorMediaResource
from .processors import ProcessorsResource
from .products import ProductsResource
from .projects import ProjectsResource
from .search import SearchResource
from .styles import StylesResource
from .subscriptions import SubscriptionsResource
from .utility import UtilityResource
from .workflows import WorkflowsResource
from .workspaces import WorkspacesResource

RESOURCES: dict[str, type] = {
    "admin": AdminResource,
    "auth": AuthResource,
    "console": ConsoleResource,
    "credits": CreditsResource,
    "file_buffer": FileBufferResource,
    "files": FilesResource,
    "images": ImagesResource,
    "nodes": NodesResource,
    "organizations": OrganizationsResource,
    "param_templates": ParamTemplatesResource,
    "package_manager": PackageManagerResource,
    "processes": ProcessesResource,
    "processor_media": ProcessorMediaResource,
    "processors": ProcessorsResource,
    "products": ProductsResource,
    "projects": ProjectsResource,
    "search": SearchResource,
    "styles": StylesResource,
    "subscriptions": SubscriptionsResource,
    "utility": UtilityResource,
    "workflows": WorkflowsResource,
    "workspaces": WorkspacesResource,
}

__all__ = [
    "RESOURCES",
    "AdminResource",
    "AuthResource",
    "ConsoleResource",
    "CreditsResource",
    "EventsResource",
    "FileBufferResource",
    "FilesResource",
    "ImagesResource",
    "MapsResource",
    "NodesResource",
    "OrganizationsResource",
    "PackageManagerResource",
    "ParamTemplatesResource",
    "ProcessesResource",
    "ProcessorMediaResource",
    "ProcessorsResource",
    "ProductsResource",
    "ProjectsResource",
    "SearchResource",
    "StylesResource",
    "SubscriptionsResource",
    "UtilityResource",
    "WorkflowsResource",
    "WorkspacesResource",
]
