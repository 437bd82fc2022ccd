"""Business rules, one module per concern, wired together by ``build_services``."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..json_reader import JsonReader
from ..launcher import Launcher
from ..providers.mail import MaildirMailer, Mailer, SmtpMailer
from ..providers.mapserver import make_map_server
from ..providers.payments import PaymentProviders
from ..providers.search import SearchProviders
from ..settings import Settings
from ..store import Store, open_store
from ..store.logs import RunLogs
from .admin_lookups import AdminLookups
from .admin_users import AdminUsers
from .app_environments import AppEnvironmentService
from .app_payments import AppPaymentService
from .app_records import AppRecords
from .app_store import AppStoreService
from .apps import AppService
from .credits import CreditService
from .identity import UserService
from .images import ImageService
from .intents import INTENTS, IntentLog
from .login import LoginService
from .maps import MapService
from .messages import MessageLog
from .metrics import MetricsRecorder, MetricsService
from .missions import MissionService
from .nodes import NodeService
from .organizations import OrganizationService
from .param_templates import ParamTemplateService
from .paths import empty_folder
from .process_cleaning import ProcessCleaning
from .process_logs import ProcessLogService
from .process_stats import ProcessStatistics
from .processes import ProcessService
from .products import ProductService
from .projects import ProjectService
from .resource_types import ResourceTypes
from .reviews import ReviewService
from .search import SearchService
from .sessions import SessionService
from .sharing import SharingService
from .styles import StyleService
from .subscriptions import SubscriptionService
from .uploads import UploadAccountService
from .user_deletion import UserDeletion
from .workflows import WorkflowService
from .workspaces import WorkspaceService

COLLECTIONS: dict[str, str] = {
    # collection name: key field
    "users": "userId",
    "sessions": "sessionId",
    "sharings": "sharingId",
    "workspaces": "workspaceId",
    "subscriptions": "subscriptionId",
    "projects": "projectId",
    "organizations": "organizationId",
    "upload_accounts": "userId",
    "nodes": "nodeCode",
    "metrics": "node",
    "process_workspaces": "processObjId",
    "messages": "messageId",
    "credit_packages": "creditPackageId",
    "checkout_sessions": "sessionId",
    "products": "productId",
    "layers": "layerId",
    "styles": "styleId",
    "processors": "processorId",
    "processor_parameter_templates": "templateId",
    "reviews": "reviewId",
    "review_comments": "commentId",
    "app_payments": "appPaymentId",
    "workflows": "workflowId",
    INTENTS: "intentId",
}

COLLECTION_INDEXES: dict[str, tuple[str, ...]] = {
    # collection name: the fields its services filter on with find/count(**equals)
    "users": ("activeProjectId",),
    "sessions": ("userId",),
    "sharings": ("resourceId", "userId"),
    "workspaces": ("userId",),
    "subscriptions": ("userId", "organizationId"),
    "projects": ("subscriptionId",),
    "organizations": ("userId",),
    "credit_packages": ("userId",),
    "process_workspaces": ("workspaceId", "userId", "status", "parentId", "nodeCode"),
    "products": ("workspaceId",),
    "layers": ("workspaceId",),
    "styles": ("name",),
    "processors": ("userId", "name"),
}


@dataclass
class Services:
    """Everything a resource handler may call."""

    settings: Settings
    store: Store
    mailer: Mailer
    users: UserService
    sessions: SessionService
    sharing: SharingService
    nodes: NodeService
    workspaces: WorkspaceService
    subscriptions: SubscriptionService
    organizations: OrganizationService
    projects: ProjectService
    payments: PaymentProviders
    credits: CreditService
    missions: MissionService
    uploads: UploadAccountService
    messages: MessageLog
    processes: ProcessService
    process_logs: ProcessLogService
    process_stats: ProcessStatistics
    products: ProductService
    images: ImageService
    styles: StyleService
    param_templates: ParamTemplateService
    reviews: ReviewService
    app_store: AppStoreService
    app_payments: AppPaymentService
    workflows: WorkflowService
    intents: IntentLog
    user_deletion: UserDeletion
    resource_types: ResourceTypes
    admin_lookups: AdminLookups
    admin_users: AdminUsers
    metrics: MetricsService
    search: SearchService = field(init=False)
    apps: AppService = field(init=False)
    app_environments: AppEnvironmentService = field(init=False)
    login: LoginService = field(init=False)
    launcher: Launcher = field(init=False)
    maps: MapService = field(init=False)
    process_cleaning: ProcessCleaning = field(init=False)
    metrics_recorder: MetricsRecorder = field(init=False)

    def __post_init__(self) -> None:
        self.launcher = Launcher(self, self.settings.launcher_workers, self.settings.launcher_poll_seconds)
        self.process_cleaning = ProcessCleaning(self.processes, self.messages, self.launcher.is_alive,
                                                self.settings.stale_process_minutes,
                                                self.settings.stale_process_grace_seconds)
        self.metrics_recorder = MetricsRecorder(self.metrics, self.settings.metrics_interval_seconds)

    def start(self) -> None:
        """Finish the changes a crash interrupted, then start the background work (launcher, metrics)."""
        self.intents.resume_pending()
        self.workspaces.remove_unrecorded_folders()
        self.apps.recover_folders()
        self.styles.remove_unrecorded_files()
        self.workflows.remove_unrecorded_files()
        # What requests were receiving when the server stopped: no record names these half-received files.
        for staging in (self.styles.staging, self.workflows.staging, self.images.staging,
                        self.settings.apps_root / ".incoming"):
            empty_folder(staging)
        self.launcher.start()
        self.metrics_recorder.start()

    def close(self) -> None:
        """Stop the background work and release the store."""
        self.metrics_recorder.stop()
        self.launcher.stop()
        self.users.later.close()
        self.maps.close()
        self.store.close()


def default_mailer(settings: Settings) -> Mailer:
    if settings.smtp.host:
        return SmtpMailer(settings.smtp)
    return MaildirMailer(settings.mail_dir, settings.mail_sender)


def build_services(settings: Settings, store: Store | None = None, mailer: Mailer | None = None) -> Services:
    """Open the store under ``settings.data_dir`` (unless given) and wire every service."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = store or open_store(settings.data_dir, settings.store_engine)
    for name, key in COLLECTIONS.items():
        store.declare(name, key, COLLECTION_INDEXES.get(name, ()))
    c = store.collection
    mailer = mailer or default_mailer(settings)
    users = UserService(c("users"), mailer, settings.public_url)
    sharing = SharingService(c("sharings"), users, mailer, settings.public_url)
    nodes = NodeService(c("nodes"), c("metrics"), c("process_workspaces"), settings.node_code,
                        settings.metrics_max_age_seconds, sharing=sharing, cloud_provider=settings.cloud_provider)
    payments = PaymentProviders(settings.payments, c("checkout_sessions"))
    workspaces = WorkspaceService(c("workspaces"), c("process_workspaces"), sharing, nodes, settings.files_root,
                                  settings.cloud_provider, settings.sla_link)
    messages = MessageLog(c("messages"))
    organizations = OrganizationService(c("organizations"), c("subscriptions"), sharing, atomic=store.atomic)
    subscriptions = SubscriptionService(c("subscriptions"), c("projects"), users, sharing, organizations, messages,
                                        atomic=store.atomic)
    images = ImageService(settings.images_root, c("processors"), c("organizations"), c("styles"), sharing)
    styles = StyleService(c("styles"), sharing, images, settings.styles_root, settings.node_code,
                          atomic=store.atomic)
    missions = MissionService(sharing, settings.missions_file)
    processes = ProcessService(c("process_workspaces"), messages, workspaces, users, settings.node_code)
    map_server = make_map_server(settings.map_server, settings.data_dir, settings.styles_root,
                                 settings.layer_max_pixels, settings.map_cache_bytes, settings.map_draw_workers,
                                 settings.map_draw_seconds, settings.threads)
    styles.publishers.append(map_server)
    products = ProductService(c("products"), c("layers"), workspaces, processes, messages, subscriptions, missions,
                              map_server, settings)
    workspaces.delete_hooks.append(products.on_workspace_delete)
    app_records = AppRecords(c("processors"), sharing)
    reviews = ReviewService(c("reviews"), c("review_comments"), app_records, atomic=store.atomic)
    app_store = AppStoreService(app_records, users, sharing, reviews, images, c("process_workspaces"),
                                settings.app_categories_file)
    json_reader = JsonReader.of(settings)
    app_payments = AppPaymentService(c("app_payments"), c("credit_packages"), app_records, sharing, payments,
                                     json_reader)
    param_templates = ParamTemplateService(c("processor_parameter_templates"), app_records, sharing, json_reader)
    process_logs = ProcessLogService(RunLogs(settings.data_dir / "logs"), processes)
    workspaces.delete_hooks.append(process_logs.remove_for_workspace)
    workflows = WorkflowService(c("workflows"), sharing, products, settings.workflows_root, settings.node_code,
                                settings.public_url)
    sessions = SessionService(c("sessions"), users, settings.session_idle_hours, settings.disable_authentication)
    uploads = UploadAccountService(c("upload_accounts"), settings.uploads_root, mailer)
    credits = CreditService(c("credit_packages"), payments)
    projects = ProjectService(c("projects"), subscriptions, users)
    intents = IntentLog(c(INTENTS))
    workspaces.use_intents(intents)
    workflows.use_intents(intents)
    # What deleting a user removes, in this order; services wired elsewhere (apps, workflows, parameter
    # templates) add their own delete_all_of_user with services.user_deletion.register(...).
    user_deletion = UserDeletion(users, intents)
    user_deletion.disable_hooks.append(sessions.forget_user)
    for name, cleanup in (("sessions", sessions.delete_all_of_user), ("workspaces", workspaces.delete_all_of_user),
                          ("processes", process_logs.delete_all_of_user), ("styles", styles.delete_all_of_user),
                          ("subscriptions", subscriptions.delete_all_of_user),
                          ("organizations", organizations.delete_all_of_user),
                          ("credit packages", credits.delete_all_of_user),
                          ("upload account", uploads.delete_all_of_user),
                          ("images", images.delete_all_of_user), ("sharings", sharing.delete_all_of_user)):
        user_deletion.register(name, cleanup)
    # The admin console changes permissions through each type's own rules; apps, workflows and
    # parameter templates register theirs with services.resource_types.register_rules(...).
    resource_types = ResourceTypes()
    resource_types.register_rules("WORKSPACE", workspaces.share, workspaces.unshare)
    resource_types.register_rules("ORGANIZATION", organizations.share, organizations.unshare)
    resource_types.register_rules("SUBSCRIPTION", subscriptions.share, subscriptions.unshare)
    resource_types.register_rules("STYLE", styles.share, styles.unshare)
    resource_types.register_rules("NODE", nodes.share, nodes.unshare)
    services = Services(
        settings=settings, store=store, mailer=mailer, users=users,
        sessions=sessions,
        sharing=sharing, nodes=nodes,
        workspaces=workspaces,
        subscriptions=subscriptions, organizations=organizations,
        projects=projects,
        payments=payments, credits=credits,
        missions=missions,
        uploads=uploads,
        messages=messages,
        processes=processes, process_logs=process_logs, products=products,
        process_stats=ProcessStatistics(processes, workspaces, c("subscriptions"), sharing, nodes, settings.node_code),
        param_templates=param_templates, reviews=reviews, app_store=app_store, app_payments=app_payments,
        workflows=workflows,
        images=images, styles=styles, intents=intents, user_deletion=user_deletion, resource_types=resource_types,
        admin_lookups=AdminLookups(store, sharing, workspaces, resource_types),
        admin_users=AdminUsers(users, sessions, subscriptions, organizations, nodes, user_deletion),
        metrics=MetricsService(c("metrics"), settings.node_code, settings.data_dir),
    )
    services.search = SearchService(missions, SearchProviders.from_settings(settings))
    services.maps = MapService(c("layers"), workspaces, styles, map_server)
    services.apps = AppService(app_records, settings, workspaces, processes, products)
    services.app_environments = AppEnvironmentService(services.apps)
    services.apps.use_intents(intents)
    # The groups built above the admin console plug their own rules into it: what deleting a user
    # removes, and how permissions on their resources change.
    for name, cleanup in (("apps", services.apps.delete_all_of_user), ("workflows", workflows.delete_all_of_user),
                          ("parameter templates", param_templates.delete_all_of_user),
                          ("reviews", reviews.delete_all_of_user), ("app payments", app_payments.delete_all_of_user)):
        user_deletion.register(name, cleanup)
    resource_types.register_rules("PROCESSOR", app_store.share, app_store.unshare)
    resource_types.register_rules("WORKFLOW", workflows.share, workflows.unshare)
    resource_types.register_rules("PARAMETER", param_templates.share, param_templates.unshare)
    services.apps.run_guards.append(app_payments.authorize_run)
    services.apps.delete_checks.append(app_payments.check_app_delete)
    services.apps.delete_hooks.extend((app_payments.on_app_delete, param_templates.on_app_delete,
                                       reviews.on_app_delete))
    services.login = LoginService(users, services.sessions)
    return services
