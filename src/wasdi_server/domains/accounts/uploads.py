"""File-transfer (upload) accounts: one per user, with a folder under the uploads root.

The account's password (mailed, stored as a scrypt hash) opens the built-in SFTP service
(``transfer/sftp_server.py``).  Removing an account or changing its password ends the SFTP sessions
open under it (``session_enders``), so the change takes effect at once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...dates import now_ms
from ...errors import BadRequest, ServerFailure
from ...paths import folder_size, inside, remove_tree, safe_id
from ...providers.mail import Mailer, send_quietly
from ...store import Collection, DuplicateKeyError
from .identity import User, UserService, normalise_user_id, valid_email
from .passwords import hash_password, random_password, verify_password


class UploadAccountService:
    """The ``upload_accounts`` collection: ``{userId, email, login, passwordHash, createdDate}``."""

    def __init__(self, accounts: Collection, root: Path, mailer: Mailer, users: UserService | None = None,
                 quota_bytes: int = 0, sftp_address: str = "") -> None:
        self.accounts = accounts
        self.root = root
        self.mailer = mailer
        self.users = users
        self.quota_bytes = quota_bytes
        """Most bytes one account's folder may hold; 0: no limit."""
        self.sftp_address = sftp_address
        """``host:port`` of the SFTP service, told in the mails (empty: not told)."""
        self.session_enders: list[Callable[[str], None]] = []
        """Called with the user id when an account is removed or its password changes: open sessions end."""

    def folder(self, user_id: str) -> Path:
        return inside(self.root, safe_id(user_id, "user id"))

    def exists(self, user: User) -> bool:
        return self.accounts.get(user.user_id) is not None

    def _mail_text(self, user_id: str, password: str) -> str:
        text = f"USER: {user_id} - PASSWORD: {password}\n"
        if self.sftp_address:
            host, _, port = self.sftp_address.rpartition(":")
            text += (f"\nConnect with any SFTP client to {host}, port {port},\nwith this user and password, "
                     f"e.g.:\n\n  sftp -P {port} '{user_id}'@{host}\n")
        return text

    def create(self, user: User, email: str) -> None:
        address = email.strip()
        if not valid_email(address):
            raise BadRequest("a valid recipient e-mail is required")
        password = random_password()
        record = {"userId": user.user_id, "email": address, "login": user.user_id,
                  "passwordHash": hash_password(password), "createdDate": now_ms()}
        try:
            self.accounts.insert(record)
        except DuplicateKeyError as e:
            raise BadRequest("an upload account already exists for this user") from e
        self.folder(user.user_id).mkdir(parents=True, exist_ok=True)
        if not send_quietly(self.mailer, address, "WASDI: your file-transfer account",
                            "Your WASDI file-transfer account is ready.\n\n"
                            + self._mail_text(user.user_id, password)):
            self.accounts.delete(user.user_id)
            raise ServerFailure("the credentials could not be mailed")

    def update_password(self, user: User, email: str) -> None:
        address = email.strip()
        if not valid_email(address):
            raise BadRequest("a valid recipient e-mail is required")
        current = self.accounts.get(user.user_id)
        if current is None:
            raise BadRequest("the user has no upload account")
        password = random_password()
        self.accounts.update(user.user_id, {"passwordHash": hash_password(password), "email": address})
        if not send_quietly(self.mailer, address, "WASDI: your new file-transfer password",
                            self._mail_text(user.user_id, password)):
            self.accounts.update(user.user_id, {"passwordHash": current["passwordHash"], "email": current["email"]})
            raise ServerFailure("the new password could not be mailed")
        self._end_sessions(user.user_id)

    def remove(self, user: User) -> None:
        """Remove the account (done already is fine) and end its open sessions; the files uploaded stay."""
        self.accounts.delete(user.user_id)
        self._end_sessions(user.user_id)

    def delete_all_of_user(self, user_id: str) -> None:
        """The upload account and the files uploaded through it."""
        self.accounts.delete(user_id)
        self._end_sessions(user_id)
        remove_tree(self.folder(user_id))

    def _end_sessions(self, user_id: str) -> None:
        for end in self.session_enders:
            end(user_id)

    def authenticate(self, login: str | None, password: str | None) -> str | None:
        """The user id whose account ``login``/``password`` open (an active user's), or ``None``."""
        user_id = normalise_user_id(login)
        record = self.accounts.get(user_id) if user_id else None
        if record is None or not verify_password(password or "", record.get("passwordHash")):
            return None
        if self.users is not None and self.users.active_user(user_id) is None:
            return None
        return user_id

    def has_account(self, user_id: str) -> bool:
        return self.accounts.get(user_id) is not None

    def used_bytes(self, user_id: str) -> int:
        """Disk the account's folder takes now (its files' blocks): what its quota counts."""
        return folder_size(self.folder(user_id), on_disk=True)

    def list_files(self, user: User) -> list[str]:
        """The files at the top of the account's folder that can be ingested (no links, no hidden files:
        partial copies are hidden until complete)."""
        folder = self.folder(user.user_id)
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir()
                      if p.is_file() and not p.is_symlink() and not p.name.startswith("."))

    def record(self, user_id: str) -> dict[str, Any] | None:
        return self.accounts.get(user_id)
