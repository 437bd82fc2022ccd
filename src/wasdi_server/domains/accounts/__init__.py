"""Accounts: users and their identity, passwords, sessions, logging in and its throttling, upload (SFTP)
accounts, the deletion of a user, and sharing, the permission rules every domain's resources go through."""
