"""File-transfer (upload) accounts: one per user, with a folder under the uploads root."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import BadRequest, ServerFailure
from ..providers.mail import Mailer, send_quietly
from ..store import Collection, DuplicateKeyError
from .identity import User, now_ms, valid_email
from .passwords import hash_password, random_password
from .paths import inside, remove_tree, safe_id


class UploadAccountService:
    """The ``upload_accounts`` collection: ``{userId, email, login, passwordHash, createdDate}``."""

    def __init__(self, accounts: Collection, root: Path, mailer: Mailer) -> None:
        self.accounts = accounts
        self.root = root
        self.mailer = mailer

    def folder(self, user_id: str) -> Path:
        return inside(self.root, safe_id(user_id, "user id"))

    def exists(self, user: User) -> bool:
        return self.accounts.get(user.user_id) is not None

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
                            f"Your WASDI file-transfer account is ready.\n\nUSER: {user.user_id} - "
                            f"PASSWORD: {password}\n"):
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
                            f"USER: {user.user_id} - PASSWORD: {password}\n"):
            self.accounts.update(user.user_id, {"passwordHash": current["passwordHash"], "email": current["email"]})
            raise ServerFailure("the new password could not be mailed")

    def remove(self, user: User) -> None:
        """Remove the account (done already is fine); the files already uploaded stay where they are."""
        self.accounts.delete(user.user_id)

    def delete_all_of_user(self, user_id: str) -> None:
        """The upload account and the files uploaded through it."""
        self.accounts.delete(user_id)
        remove_tree(self.folder(user_id))

    def list_files(self, user: User) -> list[str]:
        folder = self.folder(user.user_id)
        if not folder.is_dir():
            return []
        return sorted(p.name for p in folder.iterdir() if p.is_file())

    def record(self, user_id: str) -> dict[str, Any] | None:
        return self.accounts.get(user_id)
