"""``python -m wasdi_cli``: the same entry as the ``wasdi`` script (the cli extra named when it is missing)."""

from .entry import main

raise SystemExit(main())
