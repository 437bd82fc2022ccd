"""Processes: the record of every queued operation and its states, statistics over many of them, the cleaning
of the queue, run logs, and what the session of an app run may reach (its scope)."""
