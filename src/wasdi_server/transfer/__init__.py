"""File transfers: the built-in SFTP service of the upload accounts, copies into their folders, and exports.

- ``sftp_server.py``: the SFTP service ``wasdi-server serve`` runs beside the API (AsyncSSH);
- ``confined_folder.py``: an account's folder as its SFTP client sees it, and its quota;
- ``host_key.py``: the service's host key, made once and kept in the data directory;
- ``address.py``: where clients reach the service (what the account mails say);
- ``requests.py``: ``copytosfpt`` and ``upload/ftp`` checked and queued as operations;
- ``operations.py``: the COPYTOSFTP and FTPUPLOAD operations the launcher runs;
- ``ftp_export.py``: sending a file to an FTP, FTPS or SFTP server through the outbound guard.
"""

from . import operations  # noqa: F401  (registers COPYTOSFTP and FTPUPLOAD with the launcher)
from .requests import TransferRequests

__all__ = ["TransferRequests"]
