"""One resource class per group of the catalogue."""

from .auth import AuthResource
from .credits import CreditsResource
from .file_buffer import FileBufferResource
from .files import FilesResource
from .images import ImagesResource
from .nodes import NodesResource
from .organizations import OrganizationsResource
from .package_manager import PackageManagerResource
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
    "auth": AuthResource,
    "credits": CreditsResource,
    "file_buffer": FileBufferResource,
    "files": FilesResource,
    "images": ImagesResource,
    "nodes": NodesResource,
    "organizations": OrganizationsResource,
    "package_manager": PackageManagerResource,
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
    "AuthResource",
    "CreditsResource",
    "FileBufferResource",
    "FilesResource",
    "ImagesResource",
    "NodesResource",
    "OrganizationsResource",
    "PackageManagerResource",
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
