"""Every model of the service contract, with its exact wire names.

``MODELS`` maps a contract model name (as the catalogue writes it) to its class.
"""

from __future__ import annotations

from types import ModuleType

from . import (
    admin,
    auth,
    common,
    credits,
    file_buffer,
    nodes,
    organizations,
    package_manager,
    param_templates,
    processes,
    processor_media,
    processors,
    products,
    projects,
    search,
    styles,
    subscriptions,
    utility,
    workflows,
    workspaces,
)
from ._base import WasdiModel
from .admin import (
    FullUserViewModel,
    GenericResourceViewModel,
    MetricsEntry,
    UserListViewModel,
    UserResourcePermissionViewModel,
    UsersSummaryViewModel,
)
from .auth import (
    ChangeUserPasswordViewModel,
    ClientConfig,
    LoginInfo,
    Mission,
    OrbitSearch,
    PrivateMissionViewModel,
    RegistrationInfoViewModel,
    SkinViewModel,
    UserViewModel,
)
from .common import ErrorResponse, PrimitiveResult, StringResult, SuccessResponse
from .credits import CreditsPackageViewModel
from .file_buffer import ImageImportViewModel, PublishBandResultViewModel, RabbitMessageViewModel
from .nodes import NodeFullViewModel, NodeSharingViewModel, NodeViewModel
from .organizations import (
    OrganizationEditorViewModel,
    OrganizationListViewModel,
    OrganizationSharingViewModel,
    OrganizationViewModel,
)
from .package_manager import PackageManagerFullInfoViewModel, PackageManagerViewModel, PackageViewModel
from .param_templates import (
    ProcessorParametersTemplateDetailViewModel,
    ProcessorParametersTemplateListViewModel,
    ProcessorParametersTemplateSharingViewModel,
)
from .processes import (
    AppStatsViewModel,
    ComputingTimeViewModel,
    NodeScoreByProcessWorkspaceViewModel,
    ProcessHistoryViewModel,
    ProcessWorkspaceAggregatedViewModel,
    ProcessWorkspaceSummaryViewModel,
    ProcessWorkspaceViewModel,
)
from .processor_media import (
    AppCategoryViewModel,
    CommentDetailViewModel,
    CommentListViewModel,
    ListReviewsViewModel,
    PublisherFilterViewModel,
    ReviewViewModel,
)
from .processors import (
    AppDetailViewModel,
    AppFilterViewModel,
    AppListViewModel,
    AppPaymentViewModel,
    DeployedProcessorViewModel,
    ProcessorLogViewModel,
    ProcessorSharingViewModel,
    RunningProcessorViewModel,
)
from .products import (
    AttributeViewModel,
    BandViewModel,
    GeorefProductViewModel,
    MetadataViewModel,
    NodeGroupViewModel,
    ProductViewModel,
)
from .projects import ProjectEditorViewModel, ProjectListViewModel, ProjectViewModel
from .search import DataProviderViewModel, QueryResultViewModel, QueryViewModel
from .styles import StyleSharingViewModel, StyleViewModel
from .subscriptions import (
    PaymentDetail,
    SubscriptionListViewModel,
    SubscriptionSharingViewModel,
    SubscriptionTypeViewModel,
    SubscriptionViewModel,
)
from .utility import FeedbackViewModel
from .workflows import SnapWorkflowViewModel, WorkflowSharingViewModel
from .workspaces import WorkspaceEditorViewModel, WorkspaceListInfoViewModel, WorkspaceSharingViewModel

_GROUP_MODULES: tuple[ModuleType, ...] = (
    common,
    auth,
    utility,
    workspaces,
    admin,
    processor_media,
    file_buffer,
    organizations,
    param_templates,
    processes,
    credits,
    nodes,
    search,
    styles,
    subscriptions,
    products,
    workflows,
    projects,
    processors,
    package_manager,
)


def _collect() -> dict[str, type[WasdiModel]]:
    found: dict[str, type[WasdiModel]] = {}
    for module in _GROUP_MODULES:
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, WasdiModel) and value is not WasdiModel:
                found[value.__name__] = value
    return found


MODELS: dict[str, type[WasdiModel]] = _collect()

__all__ = [
    "MODELS",
    "AppCategoryViewModel",
    "AppDetailViewModel",
    "AppFilterViewModel",
    "AppListViewModel",
    "AppPaymentViewModel",
    "AppStatsViewModel",
    "AttributeViewModel",
    "BandViewModel",
    "ChangeUserPasswordViewModel",
    "ClientConfig",
    "CommentDetailViewModel",
    "CommentListViewModel",
    "ComputingTimeViewModel",
    "CreditsPackageViewModel",
    "DataProviderViewModel",
    "DeployedProcessorViewModel",
    "ErrorResponse",
    "FeedbackViewModel",
    "FullUserViewModel",
    "GenericResourceViewModel",
    "GeorefProductViewModel",
    "ImageImportViewModel",
    "ListReviewsViewModel",
    "LoginInfo",
    "MetadataViewModel",
    "MetricsEntry",
    "Mission",
    "NodeFullViewModel",
    "NodeGroupViewModel",
    "NodeScoreByProcessWorkspaceViewModel",
    "NodeSharingViewModel",
    "NodeViewModel",
    "OrbitSearch",
    "OrganizationEditorViewModel",
    "OrganizationListViewModel",
    "OrganizationSharingViewModel",
    "OrganizationViewModel",
    "PackageManagerFullInfoViewModel",
    "PackageManagerViewModel",
    "PackageViewModel",
    "PaymentDetail",
    "PrimitiveResult",
    "PrivateMissionViewModel",
    "ProcessHistoryViewModel",
    "ProcessWorkspaceAggregatedViewModel",
    "ProcessWorkspaceSummaryViewModel",
    "ProcessWorkspaceViewModel",
    "ProcessorLogViewModel",
    "ProcessorParametersTemplateDetailViewModel",
    "ProcessorParametersTemplateListViewModel",
    "ProcessorParametersTemplateSharingViewModel",
    "ProcessorSharingViewModel",
    "ProductViewModel",
    "ProjectEditorViewModel",
    "ProjectListViewModel",
    "ProjectViewModel",
    "PublishBandResultViewModel",
    "PublisherFilterViewModel",
    "QueryResultViewModel",
    "QueryViewModel",
    "RabbitMessageViewModel",
    "RegistrationInfoViewModel",
    "ReviewViewModel",
    "RunningProcessorViewModel",
    "SkinViewModel",
    "SnapWorkflowViewModel",
    "StringResult",
    "StyleSharingViewModel",
    "StyleViewModel",
    "SubscriptionListViewModel",
    "SubscriptionSharingViewModel",
    "SubscriptionTypeViewModel",
    "SubscriptionViewModel",
    "SuccessResponse",
    "UserListViewModel",
    "UserResourcePermissionViewModel",
    "UserViewModel",
    "UsersSummaryViewModel",
    "WasdiModel",
    "WorkflowSharingViewModel",
    "WorkspaceEditorViewModel",
    "WorkspaceListInfoViewModel",
    "WorkspaceSharingViewModel",
]
