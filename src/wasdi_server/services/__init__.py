"""Business rules, one module per concern, wired together by ``build_services``."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..launcher import Launcher
from ..providers.mail import MaildirMailer, Mailer, SmtpMailer
from ..providers.mapserver import make_map_server
from ..providers.payments import PaymentProviders
from ..providers.search import SearchProviders
from ..settings import Settings
from ..store import Store, open_store
from ..store.logs import RunLogs
from .credits import CreditService
from .identity import UserService
from .images import ImageService
from .login import LoginService
from .messages import MessageLog
from .missions import MissionService
from .nodes import NodeService
from .organizations import OrganizationService
from .process_logs import ProcessLogService
from .process_stats import ProcessStatistics
from .processes import ProcessService
from .products import ProductService
from .projects import ProjectService
from .search import SearchService
from .sessions import SessionService
from .sharing import SharingService
from .styles import StyleService
from .subscriptions import SubscriptionService
from .uploads import UploadAccountService
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
    search: SearchService = field(init=False)
    login: LoginService = field(init=False)
    launcher: Launcher = field(init=False)

    def __post_init__(self) -> None:
        self.launcher = Launcher(self, self.settings.launcher_workers, self.settings.launcher_poll_seconds)

    def start(self) -> None:
        """Start the background work (the launcher)."""
        self.launcher.start()

    def close(self) -> None:
        """Stop the background work and release the store."""
        self.launcher.stop()
        self.store.close()


def default_mailer(settings: Settings) -> Mailer:
    if settings.smtp.host:
        return SmtpMailer(settings.smtp)
    return MaildirMailer(settings.mail_dir, settings.mail_sender)


def build_services(settings: Settings, store: Store | None = None, mailer: Mailer | None = None) -> Services:
    """Open the store under ``settings.data_dir`` (unless given) and wire every service."""
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = store or open_store(settings.data_dir)
    for name, key in COLLECTIONS.items():
        store.declare(name, key)
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
    organizations = OrganizationService(c("organizations"), c("subscriptions"), sharing)
    subscriptions = SubscriptionService(c("subscriptions"), c("projects"), users, sharing, organizations, messages)
    images = ImageService(settings.images_root, c("processors"), c("organizations"), c("styles"), sharing)
    styles = StyleService(c("styles"), sharing, images, settings.styles_root, settings.node_code)
    missions = MissionService(sharing, settings.missions_file)
    processes = ProcessService(c("process_workspaces"), messages, workspaces, users, settings.node_code)
    map_server = make_map_server(settings.map_server, settings.data_dir, settings.styles_root,
                                 settings.layer_max_pixels)
    styles.publishers.append(map_server)
    products = ProductService(c("products"), c("layers"), workspaces, processes, messages, subscriptions, missions,
                              map_server, settings)
    workspaces.delete_hooks.append(products.on_workspace_delete)
    process_logs = ProcessLogService(RunLogs(settings.data_dir / "logs"), processes)
    workspaces.delete_hooks.append(process_logs.remove_for_workspace)
    services = Services(
        settings=settings, store=store, mailer=mailer, users=users,
        sessions=SessionService(c("sessions"), users, settings.session_idle_hours, settings.disable_authentication),
        sharing=sharing, nodes=nodes,
        workspaces=workspaces,
        subscriptions=subscriptions, organizations=organizations,
        projects=ProjectService(c("projects"), subscriptions, users),
        payments=payments, credits=CreditService(c("credit_packages"), payments),
        missions=missions,
        uploads=UploadAccountService(c("upload_accounts"), settings.uploads_root, mailer),
        messages=messages,
        processes=processes, process_logs=process_logs, products=products,
        process_stats=ProcessStatistics(processes, workspaces, c("subscriptions"), sharing, nodes, settings.node_code),
        images=images, styles=styles,
    )
    services.search = SearchService(missions, SearchProviders.from_settings(settings))
    services.login = LoginService(users, services.sessions)
    return services
