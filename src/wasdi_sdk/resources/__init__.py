"""One resource class per group of the catalogue."""

from .admin import AdminResource
from .auth import AuthResource
from .credits import CreditsResource
from .file_buffer import FileBufferResource
from .files import FilesResource
from .images import ImagesResource
from .nodes import NodesResource
from .organizations import OrganizationsResource
from .processes import ProcessesResource
from .processors import ProcessorsResource
from .products import ProductsResource
from .projects import ProjectsResource
from .search import SearchResource
from .styles import StylesResource
from .subscriptions import SubscriptionsResource
from .utility import UtilityResource
from .workspaces import WorkspacesResource

RESOURCES: dict[str, type] = {
    "admin": AdminResource,
    "auth": AuthResource,
    "credits": CreditsResource,
    "file_buffer": FileBufferResource,
    "files": FilesResource,
    "images": ImagesResource,
    "nodes": NodesResource,
    "organizations": OrganizationsResource,
    "processes": ProcessesResource,
    "processors": ProcessorsResource,
    "products": ProductsResource,
    "projects": ProjectsResource,
    "search": SearchResource,
    "styles": StylesResource,
    "subscriptions": SubscriptionsResource,
    "utility": UtilityResource,
    "workspaces": WorkspacesResource,
}

__all__ = [
    "RESOURCES",
    "AdminResource",
    "AuthResource",
    "CreditsResource",
    "FileBufferResource",
    "FilesResource",
    "ImagesResource",
    "NodesResource",
    "OrganizationsResource",
    "ProcessesResource",
    "ProcessorsResource",
    "ProductsResource",
    "ProjectsResource",
    "SearchResource",
    "StylesResource",
    "SubscriptionsResource",
    "UtilityResource",
    "WorkspacesResource",
]
