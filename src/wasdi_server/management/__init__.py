"""Operator tasks of ``wasdi-server``: user accounts, the local catalogue, the local admin channel."""
