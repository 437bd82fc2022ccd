"""The business rules, one package per domain of the contract; ``wasdi_server.composition`` builds and wires them.

A rule may import another domain's rules (never in a loop), ``providers``, ``store`` and the small shared kernel
(settings, errors, dates, caches, the path guard); where it needs the machinery (messages, nodes, the launcher)
it declares a small ``Protocol`` in its own package that the machinery satisfies and the composition root passes in.
"""
