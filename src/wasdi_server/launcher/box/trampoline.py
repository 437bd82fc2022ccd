"""The box's trampoline: ``python -I -S trampoline.py REPORT_FD RUN_ID`` with a job on standard input.

A script is compiled each time it runs, so this one only puts its folder on the path and hands over to
``supervisor.py`` (compiled once, like any module).  Standard library only: see ``supervisor.py``."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# ``typing.TYPE_CHECKING`` would import typing: mypy takes any name ``TYPE_CHECKING`` as true all the same.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from wasdi_server.launcher.box import supervisor
else:
    import supervisor

sys.exit(supervisor.main())
