"""Models of /packageManager: the package environment of a processor."""

from __future__ import annotations

from ._base import WasdiModel


class PackageViewModel(WasdiModel):
    """One package installed in a processor's environment."""

    manager_name: str | None = None
    package_name: str | None = None
    current_version: str | None = None
    current_build: str | None = None
    latest_version: str | None = None
    type: str | None = None
    channel: str | None = None


class PackageManagerViewModel(WasdiModel):
    """The package manager of a processor and its version."""

    name: str | None = None
    version: str | None = None
    major: int | None = None
    minor: int | None = None
    patch: int | None = None


class PackageManagerFullInfoViewModel(WasdiModel):
    """The stored package record of a processor: its manager and packages by state."""

    package_manager: PackageManagerViewModel | None = None
    outdated: list[PackageViewModel] | None = None
    uptodate: list[PackageViewModel] | None = None
    all: list[PackageViewModel] | None = None
