"""The composition root: the store, the providers and every service, built and wired together once.

It sits above ``services``, ``launcher``, ``nodes`` and ``providers`` (which never import it at module level), so
importing any of them never starts an import cycle."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .consoles import Notebooks
from .domains.accounts.identity import UserService
from .domains.accounts.login import LoginService
from .domains.accounts.sessions import SessionService
from .domains.accounts.sharing import SharingService
from .domains.accounts.uploads import UploadAccountService
from .domains.accounts.user_deletion import UserDeletion
from .domains.admin.admin_lookups import AdminLookups
from .domains.admin.admin_users import AdminUsers
from .domains.admin.resource_types import ResourceTypes
from .domains.apps.app_environments import AppEnvironmentService
from .domains.apps.app_payments import AppPaymentService
from .domains.apps.app_records import AppRecords
from .domains.apps.app_store import AppStoreService
from .domains.apps.apps import AppService
from .domains.apps.param_templates import ParamTemplateService
from .domains.apps.reviews import ReviewService
from .domains.commerce.credits import CreditService
from .domains.commerce.organizations import OrganizationService
from .domains.commerce.projects import ProjectService
from .domains.commerce.subscriptions import SubscriptionService
from .domains.platform.main_node import MAIN_NODE
from .domains.platform.metrics import MetricsRecorder, MetricsService
from .domains.platform.nodes import NodeService
from .domains.processes.process_cleaning import ProcessCleaning
from .domains.processes.process_logs import ProcessLogService
from .domains.processes.process_stats import ProcessStatistics
from .domains.processes.processes import ProcessService
from .domains.products.images import ImageService
from .domains.products.maps import MapService
from .domains.products.missions import MissionService
from .domains.products.search import SearchService
from .domains.products.service import ProductService
from .domains.products.service.imports import DownloadSlots
from .domains.products.styles import StyleService
from .domains.workflows.workflows import WorkflowService
from .domains.workspaces.workspaces import WorkspaceService
from .json_reader import JsonReader
from .launcher import (
    ops_apps,  # noqa: F401  (registers DEPLOYPROCESSOR, RUNPROCESSOR, ENVIRONMENTUPDATE ... : the apps)
    ops_graph,  # noqa: F401  (registers GRAPH)
    ops_products,  # noqa: F401  (registers INGEST, READMETADATA, DOWNLOAD, SHARE, PUBLISHBAND, DELETE)
)
from .launcher.box.doors import DoorService
from .launcher.box.proxy import OutboundProxy
from .launcher.box.readers import ReaderPool
from .launcher.engines import Engine, engine_for
from .launcher.ops_apps import api_ports
from .launcher.pool import Launcher
from .messages import Messages, build_messages
from .messages.relay import Fanout, MainNodeRelay
from .nodes.app_install import AppInstaller
from .nodes.client import NodeClient
from .nodes.forwarding import Forwarder
from .nodes.graphs import graph_reader
from .nodes.identity import NodeIdentity
from .nodes.locator import PROCESS_NODES, ProcessLocator
from .nodes.merges import Merges
from .nodes.outbox import OUTBOX, Outbox
from .nodes.propagation import Propagation
from .paths import empty_folder
from .providers.mail import MaildirMailer, Mailer, SmtpMailer
from .providers.mapserver import make_map_server
from .providers.package_index import PackageIndex
from .providers.payments import PaymentProviders
from .providers.search import SearchProviders
from .settings import Settings
from .store import Collection, SplitStore, Store, open_shared_store, open_store
from .store.intents import INTENTS, IntentLog
from .store.logs import RunLogs
from .transfer import TransferRequests
from .transfer.address import sftp_address

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
    "transfer_secrets": "processObjId",
    "nodes": "nodeCode",
    "metrics": "node",
    "process_workspaces": "processObjId",
    PROCESS_NODES: "processObjId",
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
    OUTBOX: "itemId",
}

NODE_LOCAL_COLLECTIONS = ("process_workspaces", "messages", INTENTS, OUTBOX)
"""In a deployment of several nodes, what each node keeps in its own store (gaps §8: the work it runs, what it
says about it, and its own unfinished changes); every other collection is in the database the nodes share."""

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
    PROCESS_NODES: ("workspaceId",),
    "products": ("workspaceId",),
    "layers": ("workspaceId",),
    "styles": ("name",),
    "processors": ("userId", "name"),
    OUTBOX: ("node", "file"),
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
    transfers: TransferRequests
    messages: Messages
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
    apps: AppService[Engine] = field(init=False)
    app_environments: AppEnvironmentService = field(init=False)
    login: LoginService = field(init=False)
    launcher: Launcher = field(init=False)
    maps: MapService = field(init=False)
    notebooks: Notebooks = field(init=False)
    process_cleaning: ProcessCleaning = field(init=False)
    metrics_recorder: MetricsRecorder = field(init=False)
    identity: NodeIdentity = field(default_factory=NodeIdentity)
    """This node of its deployment (``nodes.identity``)."""
    node_client: NodeClient | None = None
    app_installer: AppInstaller | None = None
    """On a compute node of a deployment: this node's copies of the main node's apps (``nodes.app_install``)."""
    forwarder: Forwarder | None = None
    """Sends the calls of a workspace held by another node there; ``None`` on a lone server."""
    merges: Merges = field(init=False)
    outbox: Outbox | None = None
    door_proxy: DoorService | None = None
    """The outbound proxy behind each boxed run's proxy door (``launcher/box/doors.py``); ``None``: no proxy door."""
    propagation: Propagation = field(init=False)

    def __post_init__(self) -> None:
        self.launcher = Launcher(self, self.settings.launcher_workers, self.settings.launcher_poll_seconds)
        self.process_cleaning = ProcessCleaning(self.processes, self.messages, self.launcher.is_alive,
                                                self.settings.stale_process_minutes,
                                                self.settings.stale_process_grace_seconds)
        self.metrics_recorder = MetricsRecorder(self.metrics, self.settings.metrics_interval_seconds)

    def start(self) -> None:
        """Finish the changes a crash interrupted, then start the background work (launcher, metrics, outbox)."""
        self.register_node()
        self.intents.resume_pending()
        self.transfers.forget_finished()
        self.workspaces.remove_unrecorded_folders()
        self.apps.recover_folders()
        self.styles.remove_unrecorded_files()
        self.workflows.remove_unrecorded_files()
        # What requests were receiving when the server stopped: no record names these half-received files.
        for staging in (self.styles.staging, self.workflows.staging, self.images.staging,
                        self.settings.apps_root / ".incoming"):
            empty_folder(staging)
        self.messages.start()
        self.notebooks.start()
        self.launcher.start()
        self.maps.start_readers(self.settings.map_draw_workers)
        self.metrics_recorder.start()
        if self.outbox is not None:
            self.outbox.remove_unreferenced_files()
            self.outbox.start()

    def register_node(self) -> None:
        """The main node of a deployment records its own address, where compute nodes call it."""
        identity = self.identity
        if not (identity.in_deployment and identity.is_main and identity.own_url):
            return
        nodes = self.nodes.nodes
        existing = nodes.get(MAIN_NODE)
        if existing is None:
            nodes.upsert({"nodeCode": MAIN_NODE, "cloudProvider": self.settings.cloud_provider,
                          "apiUrl": identity.own_url, "nodeDescription": "main node", "nodeGeoserverAddress": "",
                          "active": True, "shared": True})
        elif existing.get("apiUrl") != identity.own_url:
            nodes.update(MAIN_NODE, {"apiUrl": identity.own_url})

    def close(self) -> None:
        """Stop the background work and release the store."""
        self.metrics_recorder.stop()
        if self.outbox is not None:
            self.outbox.stop()
        self.notebooks.close()
        self.launcher.stop()
        self.messages.close()
        self.merges.close()
        if self.node_client is not None:
            self.node_client.close()
        self.users.later.close()
        self.maps.close()
        self.store.close()


def default_mailer(settings: Settings) -> Mailer:
    if settings.smtp.host:
        return SmtpMailer(settings.smtp)
    return MaildirMailer(settings.mail_dir, settings.mail_sender)


def _retire_message_log(store: Store) -> None:
    # Servers before the message brokers kept every message in a collection nobody read: emptied once.
    old = store.declare("messages", "messageId")
    if old.count():
        old.delete_where()


def open_node_store(settings: Settings) -> Store:
    """This node's store: the embedded one of ``data_dir``; in a deployment (``store_url``) split between it
    and the shared database (``NODE_LOCAL_COLLECTIONS`` stay here)."""
    local = open_store(settings.data_dir, settings.store_engine)
    if not settings.store_url:
        return local
    try:
        shared = open_shared_store(settings.store_url, max_connections=settings.threads + settings.launcher_workers + 8,
                                   timeout_seconds=settings.store_timeout_seconds)
    except BaseException:
        local.close()
        raise
    return SplitStore(shared, local, NODE_LOCAL_COLLECTIONS)


def build_services(settings: Settings, store: Store | None = None, mailer: Mailer | None = None) -> Services:
    """Open the store under ``settings.data_dir`` (unless given) and wire every service."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    identity = NodeIdentity.from_settings(settings.node_code, settings.public_url, settings.store_url,
                                          settings.node_secret, settings.main_url)
    store = store or open_node_store(settings)
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
    messages = build_messages(settings)
    _retire_message_log(store)
    organizations = OrganizationService(c("organizations"), c("subscriptions"), sharing, atomic=store.atomic)
    subscriptions = SubscriptionService(c("subscriptions"), c("projects"), users, sharing, organizations, messages,
                                        atomic=store.atomic)
    images = ImageService(settings.images_root, c("processors"), c("organizations"), c("styles"), sharing)
    styles = StyleService(c("styles"), sharing, images, settings.styles_root, settings.node_code,
                          atomic=store.atomic)
    missions = MissionService(sharing, settings.missions_file)
    processes = ProcessService(c("process_workspaces"), messages, workspaces, users, settings.node_code)
    # users' rasters are read only by boxed readers (a world of the workspace's folder, no network)
    reads = ReaderPool(settings.map_draw_workers, settings.map_draw_seconds, settings.map_wait_seconds,
                       settings.map_queue, boxed=settings.app_isolation != "off",
                       spares=settings.map_spare_readers, spare_root=settings.data_dir / "readers")
    map_server = make_map_server(settings.map_server, settings.data_dir, reads, settings.styles_root,
                                 settings.layer_max_pixels, settings.map_cache_bytes)
    styles.publishers.append(map_server)
    products = ProductService(c("products"), c("layers"), workspaces, processes, messages, subscriptions, missions,
                              map_server, settings, reads)
    workspaces.delete_hooks.append(products.on_workspace_delete)
    app_records = AppRecords(c("processors"), sharing)
    reviews = ReviewService(c("reviews"), c("review_comments"), app_records, atomic=store.atomic)
    app_store = AppStoreService(app_records, users, sharing, reviews, images, c("process_workspaces"),
                                settings.app_categories_file, settings.app_account_scope_apps)
    json_reader = JsonReader.of(settings)
    app_payments = AppPaymentService(c("app_payments"), c("credit_packages"), app_records, sharing, payments,
                                     json_reader)
    param_templates = ParamTemplateService(c("processor_parameter_templates"), app_records, sharing, json_reader)
    process_logs = ProcessLogService(RunLogs(settings.data_dir / "logs"), processes)
    workspaces.delete_hooks.append(process_logs.remove_for_workspace)
    workflows = WorkflowService(c("workflows"), sharing, products, settings.workflows_root, settings.node_code,
                                settings.public_url)
    sessions = SessionService(c("sessions"), users, settings.session_idle_hours, settings.disable_authentication)
    uploads = UploadAccountService(c("upload_accounts"), settings.uploads_root, mailer, users,
                                   quota_bytes=settings.sftp_quota_bytes, sftp_address=sftp_address(settings))
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
        transfers=TransferRequests(products, processes, uploads, c("transfer_secrets")),
        messages=messages,
        processes=processes, process_logs=process_logs, products=products,
        process_stats=ProcessStatistics(processes, workspaces, c("subscriptions"), sharing, nodes, settings.node_code),
        param_templates=param_templates, reviews=reviews, app_store=app_store, app_payments=app_payments,
        workflows=workflows,
        images=images, styles=styles, intents=intents, user_deletion=user_deletion, resource_types=resource_types,
        admin_lookups=AdminLookups(store, sharing, workspaces, resource_types),
        admin_users=AdminUsers(users, sessions, subscriptions, organizations, nodes, user_deletion),
        metrics=MetricsService(c("metrics"), settings.node_code, settings.data_dir,
                               unfinished=lambda: len(processes.active_on_node())),
        identity=identity,
    )
    services.search = SearchService(missions, SearchProviders.from_settings(settings))
    products.searched_links = services.search
    products.download_slots = DownloadSlots(settings.import_downloads_per_provider)
    services.maps = MapService(c("layers"), workspaces, styles, map_server)
    services.apps = AppService(app_records, settings, workspaces, processes, products,
                               lambda app_type: engine_for(app_type, settings))
    index = PackageIndex(settings.package_index_url, timeout=settings.package_index_timeout_seconds,
                         cache_seconds=settings.package_index_cache_seconds,
                         allowed_hosts=settings.import_allowed_hosts) if settings.package_index_url else None
    services.app_environments = AppEnvironmentService(services.apps, index)
    # Boxed runs reach the network only through this proxy (their proxy door), the outbound guard as a service.
    services.door_proxy = OutboundProxy.from_settings(settings)
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
    services.notebooks = Notebooks(settings, sessions, workspaces, messages, lambda: services.apps.server_url,
                                   api_ports)
    workspaces.delete_hooks.insert(0, services.notebooks.stop_workspace)
    wire_nodes(services, c)
    return services


def wire_nodes(services: Services, c: Callable[[str], Collection]) -> None:
    """The deployment's parts (``nodes/``): on a lone server only merges and propagation that do nothing."""
    identity, settings = services.identity, services.settings
    if identity.in_deployment:
        identity.main_url_lookup = lambda: str((c("nodes").get(MAIN_NODE) or {}).get("apiUrl") or "")
        services.node_client = NodeClient(identity, c("nodes"), settings.node_call_timeout_seconds,
                                          settings.node_urls)
        locator = ProcessLocator(c(PROCESS_NODES), identity.code)
        services.processes.locator = locator
        services.workspaces.delete_hooks.append(locator.forget_workspace)
        services.forwarder = Forwarder(identity, services.node_client, c("workspaces"), services.processes.processes,
                                       locator)
        services.styles.shared_records = True
        services.workflows.fetch_graph = graph_reader(services.node_client, services.sessions.open,
                                                      services.sessions.close)
        if identity.is_main:
            services.outbox = Outbox(c(OUTBOX), services.node_client, settings.data_dir / "outbox",
                                     services.sessions.open, services.sessions.close, services.store.atomic)
        else:
            services.app_installer = AppInstaller(identity, services.node_client, services.apps)
            services.apps.installer = services.app_installer
            if not settings.broker_url:  # built-in brokers: the main node's hears every node's messages
                relay = MainNodeRelay(services.node_client, settings.broker_queue_messages,
                                      min_backoff=min(0.5, settings.broker_retry_seconds),
                                      max_backoff=settings.broker_retry_seconds)
                services.messages.backend = Fanout(services.messages.backend, relay)
    services.merges = Merges(identity, services.node_client)
    if services.forwarder is not None:
        services.merges.locator = services.forwarder.locator
    services.propagation = Propagation(identity, services.outbox)
    # Last: the compute nodes are told once every shared record of the user is gone.
    services.user_deletion.register("compute nodes", services.propagation.user_deleted)
