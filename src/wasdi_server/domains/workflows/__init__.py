"""Workflows: SNAP graph XML read safely, graph workflows' records and sharing, and queuing their runs."""
