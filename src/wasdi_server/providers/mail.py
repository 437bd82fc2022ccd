"""Mail providers: a Maildir outbox under the data directory (default), or SMTP."""

from __future__ import annotations

import email
import email.policy
import logging
import mailbox
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid
from pathlib import Path
from typing import Protocol

from ..settings import SmtpSettings

log = logging.getLogger("wasdi_server.mail")


class Mailer(Protocol):
    """Sends one plain-text message."""

    def send(self, to: str, subject: str, body: str) -> None: ...


def build_message(sender: str, to: str, subject: str, body: str) -> EmailMessage:
    message = EmailMessage()
    message["From"] = sender
    message["To"] = to
    message["Subject"] = subject
    message["Date"] = formatdate(localtime=False)
    message["Message-ID"] = make_msgid(domain="wasdi.local")
    message.set_content(body)
    return message


class MaildirMailer:
    """Writes every message into ``<dir>/outbox`` (a Maildir: one file per message, written atomically).

    Any mail client or ``python -m mailbox`` tooling can read it; tests read it to follow links.
    """

    def __init__(self, directory: Path, sender: str) -> None:
        self.directory = directory
        self.sender = sender
        directory.mkdir(parents=True, exist_ok=True)
        self.outbox = mailbox.Maildir(directory / "outbox", create=True)

    def send(self, to: str, subject: str, body: str) -> None:
        self.outbox.add(mailbox.MaildirMessage(build_message(self.sender, to, subject, body)))

    def messages(self) -> list[EmailMessage]:
        """Every message in the outbox, oldest first."""
        found: list[tuple[float, str, EmailMessage]] = []
        for key in self.outbox.iterkeys():
            delivered = self.outbox.get_message(key).get_date()
            parsed = email.message_from_bytes(self.outbox.get_bytes(key), policy=email.policy.default)
            assert isinstance(parsed, EmailMessage)
            found.append((delivered, key, parsed))
        return [message for _, _, message in sorted(found, key=lambda item: (item[0], item[1]))]


class SmtpMailer:
    """Sends through an SMTP server (STARTTLS by default)."""

    def __init__(self, settings: SmtpSettings) -> None:
        self.settings = settings

    def send(self, to: str, subject: str, body: str) -> None:
        s = self.settings
        with smtplib.SMTP(s.host, s.port, timeout=30) as smtp:
            if s.starttls:
                smtp.starttls(context=ssl.create_default_context())
            if s.username:
                smtp.login(s.username, s.password)
            smtp.send_message(build_message(s.sender, to, subject, body))


def send_quietly(mailer: Mailer, to: str, subject: str, body: str) -> bool:
    """Send, logging instead of failing: a notification must not undo the action it reports."""
    try:
        mailer.send(to, subject, body)
    except Exception:
        log.exception("could not send mail %r to %s", subject, to)
        return False
    return True
