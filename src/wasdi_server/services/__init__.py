"""Business rules, one module per concern, wired together by ``build_services``."""

from __future__ import annotations

from dataclasses import dataclass

from ..providers.mail import MaildirMailer, Mailer, SmtpMailer
from ..settings import Settings
from ..store import Store, open_store
from .identity import UserService
from .messages import MessageLog
from .missions import MissionService
from .nodes import NodeService
from .sessions import SessionService
from .sharing import SharingService
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
    "upload_accounts": "userId",
    "nodes": "nodeCode",
    "metrics": "node",
    "process_workspaces": "processObjId",
    "messages": "messageId",
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
    missions: MissionService
    uploads: UploadAccountService
    messages: MessageLog

    def close(self) -> None:
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
                        settings.metrics_max_age_seconds)
    return Services(
        settings=settings, store=store, mailer=mailer, users=users,
        sessions=SessionService(c("sessions"), users, settings.session_idle_hours, settings.disable_authentication),
        sharing=sharing, nodes=nodes,
        workspaces=WorkspaceService(c("workspaces"), c("process_workspaces"), sharing, nodes, settings.files_root,
                                    settings.cloud_provider, settings.sla_link),
        subscriptions=SubscriptionService(c("subscriptions"), c("projects"), users),
        missions=MissionService(sharing, settings.missions_file),
        uploads=UploadAccountService(c("upload_accounts"), settings.uploads_root, mailer),
        messages=MessageLog(c("messages")),
    )
