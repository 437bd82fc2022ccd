"""Workspaces: creation, listing, editing, deletion and sharing of workspaces, and their folders on disk."""
