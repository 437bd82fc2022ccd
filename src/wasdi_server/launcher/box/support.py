"""What this machine's kernel offers the box, found once per server: the Landlock ABI, the seccomp
filter, the subreaper, the cgroups where runs can go.  ``missing()`` names what a box would lack, which
``app_isolation = required`` turns into a refusal."""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass, field

from . import confine, world
from .cgroups import CgroupPlace, find_places


@dataclass(frozen=True)
class KernelSupport:
    """The confinement mechanisms available here."""

    platform: str
    landlock_abi: int
    seccomp: bool
    subreaper: bool
    cgroups: dict[str, CgroupPlace] = field(default_factory=dict)
    world: world.WorldSupport = field(default_factory=world.probe)
    """Whether runs can get worlds of their own (bubblewrap and the namespaces it needs)."""

    def missing(self) -> list[str]:
        """What the kernel lacks for a box, one phrase each (empty: runs can be boxed)."""
        if self.platform != "linux":
            return [f"this is {self.platform}, not Linux: no Landlock, no seccomp"]
        lacks = []
        if self.landlock_abi < confine.REQUIRED_ABI:
            what = "no Landlock" if self.landlock_abi == 0 else f"Landlock ABI {self.landlock_abi}"
            lacks.append(f"{what} (a box needs ABI {confine.REQUIRED_ABI}, Linux 6.12 or later, with Landlock "
                         "enabled: lsm=...,landlock on the kernel command line)")
        if not self.seccomp:
            lacks.append(f"no seccomp filter for the {confine.machine()} architecture")
        return lacks + self.world.missing()

    @property
    def memory_by(self) -> str:
        return "cgroup" if "memory" in self.cgroups else "rlimit"

    @property
    def processes_by(self) -> str:
        return "cgroup" if "pids" in self.cgroups else "rlimit"


@functools.cache
def kernel_support() -> KernelSupport:
    """This machine's support (probed once per process)."""
    platform = sys.platform
    if platform != "linux":
        return KernelSupport(platform, 0, False, False)
    return KernelSupport(platform, confine.landlock_abi(), confine.seccomp_available(), True, find_places(),
                         world.probe())
