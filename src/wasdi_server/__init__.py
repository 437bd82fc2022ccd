"""wasdi_server: a compact, self-hostable implementation of the WASDI service contract."""

from .app import create_app
from .settings import Settings, load_settings

__all__ = ["Settings", "create_app", "load_settings"]
