"""``python -m wasdi_cli``."""

from .main import main

raise SystemExit(main())
