"""What the kernel offers to confine a process, and applying it to the calling process.

Standard library only (``ctypes``), because the trampoline imports it in an interpreter started with
``-I -S``: no site-packages, nothing of the server.  Four mechanisms, each applied by the process to
itself just before it executes the code it confines, and inherited by everything that code starts:

- capabilities: the bounding and ambient sets emptied and the effective, permitted and inheritable
  sets cleared, so code running as root keeps none of root's powers (reading any file, raw sockets,
  signalling any process) and cannot get them back through an ``execve``;
- ``PR_SET_NO_NEW_PRIVS``: set-user-id programs and file capabilities grant nothing;
- a seccomp filter: IP sockets are TCP only (Landlock's network rules cover TCP alone, so UDP, raw and
  SCTP sockets are refused instead of left open), packet and other exotic socket families are refused,
  and io_uring (which would create sockets behind the filter's back) is refused;
- Landlock: the only file hierarchies that may be read or written, the only TCP ports that may be
  connected to or bound, and the scoping that stops signals and abstract UNIX sockets from reaching
  any process outside the box.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing would slow the trampoline down
if TYPE_CHECKING:
    from collections.abc import Iterable

# -- Landlock (include/uapi/linux/landlock.h) ------------------------------------------------------------
FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
FS_REMOVE_DIR = 1 << 4
FS_REMOVE_FILE = 1 << 5
FS_MAKE_CHAR = 1 << 6
FS_MAKE_DIR = 1 << 7
FS_MAKE_REG = 1 << 8
FS_MAKE_SOCK = 1 << 9
FS_MAKE_FIFO = 1 << 10
FS_MAKE_BLOCK = 1 << 11
FS_MAKE_SYM = 1 << 12
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6
RULE_PATH_BENEATH = 1
RULE_NET_PORT = 2
CREATE_RULESET_VERSION = 1

FS_ALL_BY_ABI = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1, 4: (1 << 15) - 1, 5: (1 << 16) - 1}
FILE_RIGHTS = FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_TRUNCATE | FS_IOCTL_DEV
"""The rights that apply to a file itself (a rule on a file, not a folder, may only hold these)."""
READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR
WRITE = (READ | FS_WRITE_FILE | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK
         | FS_MAKE_FIFO | FS_MAKE_SYM | FS_REFER | FS_TRUNCATE)
DEVICE = FS_READ_FILE | FS_WRITE_FILE | FS_IOCTL_DEV
REQUIRED_ABI = 6
"""Filesystem rules (1), renames and links between allowed folders (2), truncation (3), TCP ports (4),
device ioctls (5), and the signal and abstract-socket scoping (6): below 6 a box would leave a door open."""

SYS_LANDLOCK = {"x86_64": (444, 445, 446), "aarch64": (444, 445, 446)}

# -- prctl, capabilities, seccomp -------------------------------------------------------------------------
PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_SECUREBITS = 28
PR_SET_CHILD_SUBREAPER = 36
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECURE_ALL = 0xEF
"""NOROOT, NO_SETUID_FIXUP and NO_CAP_AMBIENT_RAISE set, KEEP_CAPS clear, each of them locked."""
CAPABILITY_VERSION_3 = 0x20080522

AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
SYS_SOCKET = {"x86_64": 41, "aarch64": 198}
SYS_IO_URING = (425, 426, 427)
X32_BIT = 0x40000000
AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 1, 2, 10, 16
SOCK_STREAM, SOCK_TYPE_MASK, IPPROTO_TCP = 1, 0xF, 6
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000


class ConfineError(OSError):
    """A confinement step failed: the process must not go on to run the code it was meant to confine."""


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise ConfineError(code, f"{what}: {os.strerror(code)}")
    return result


def _prctl(libc: ctypes.CDLL, option: int, arg: int = 0, what: str = "prctl") -> int:
    return _check(libc.prctl(option, ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                             ctypes.c_ulong(0)), what)


def machine() -> str:
    return os.uname().machine.lower()


def landlock_abi() -> int:
    """The Landlock ABI version the kernel offers (0: none, or not Linux)."""
    numbers = SYS_LANDLOCK.get(machine())
    if numbers is None or not hasattr(os, "sched_getaffinity"):
        return 0
    libc = _libc()
    version = libc.syscall(ctypes.c_long(numbers[0]), None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return max(0, int(version))


def seccomp_available() -> bool:
    """Whether this architecture's filter is known here (the kernel's support is checked when it is applied)."""
    return machine() in AUDIT_ARCH and os.path.exists("/proc/self/status")


# -- applying -----------------------------------------------------------------------------------------------
def set_subreaper() -> None:
    """Orphans of every descendant come back to this process instead of escaping to init."""
    _prctl(_libc(), PR_SET_CHILD_SUBREAPER, 1, "PR_SET_CHILD_SUBREAPER")


def set_parent_death_signal(signal_number: int) -> None:
    _prctl(_libc(), PR_SET_PDEATHSIG, signal_number, "PR_SET_PDEATHSIG")


def set_not_dumpable() -> None:
    """No core file and no /proc/<pid>/mem for this process (it holds the run's environment)."""
    _prctl(_libc(), PR_SET_DUMPABLE, 0, "PR_SET_DUMPABLE")


def drop_capabilities() -> None:
    """Empty every capability set for good (a process without capabilities has nothing to drop)."""
    libc = _libc()
    last = 40
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
            last = int(handle.read().strip())
    except (OSError, ValueError):
        pass
    privileged = _has_capabilities()
    for cap in range(last + 1):
        if libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), ctypes.c_ulong(0), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)) < 0 and privileged and ctypes.get_errno() not in (errno.EINVAL,):
            raise ConfineError(ctypes.get_errno(), f"cannot drop capability {cap} from the bounding set")
    libc.prctl(PR_CAP_AMBIENT, ctypes.c_ulong(PR_CAP_AMBIENT_CLEAR_ALL), ctypes.c_ulong(0), ctypes.c_ulong(0),
               ctypes.c_ulong(0))
    if privileged:
        # root keeps its uid: without these bits an execve would hand it a full permitted set again
        # (capped by the now empty bounding set, but the bits make that explicit and locked).
        libc.prctl(PR_SET_SECUREBITS, ctypes.c_ulong(SECURE_ALL), ctypes.c_ulong(0), ctypes.c_ulong(0),
                   ctypes.c_ulong(0))
    header = struct.pack("Ii", CAPABILITY_VERSION_3, 0)
    data = bytes(24)  # two (effective, permitted, inheritable) triples of zeros
    header_buffer = ctypes.create_string_buffer(header, len(header))
    data_buffer = ctypes.create_string_buffer(data, len(data))
    _check(libc.capset(header_buffer, data_buffer), "capset")
    if _has_capabilities():
        raise ConfineError(errno.EPERM, "capabilities are still held after dropping them")


def _has_capabilities() -> bool:
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith(("CapEff:", "CapPrm:", "CapBnd:", "CapAmb:")) and int(line.split()[1], 16):
                    return True
    except OSError:
        return os.geteuid() == 0
    return False


def set_no_new_privileges() -> None:
    _prctl(_libc(), PR_SET_NO_NEW_PRIVS, 1, "PR_SET_NO_NEW_PRIVS")


def _bpf(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


LD_W_ABS, JEQ_K, JGE_K, AND_K, RET_K = 0x20, 0x15, 0x35, 0x54, 0x06


def socket_filter(arch: str) -> bytes:
    """The seccomp program: TCP only for IP sockets, only the UNIX, IP and netlink families, no io_uring."""
    deny_socket = RET_ERRNO | errno.EACCES
    deny_other = RET_ERRNO | errno.EPERM
    # Each step's comment gives its index; a jump goes to (index + 1 + offset).
    program = [
        _bpf(LD_W_ABS, 0, 0, 4),                               # 0: arch
        _bpf(JEQ_K, 1, 0, AUDIT_ARCH[arch]),                   # 1: this ABI? -> 3
        _bpf(RET_K, 0, 0, deny_other),                         # 2: another ABI (i386 through int 0x80)
        _bpf(LD_W_ABS, 0, 0, 0),                               # 3: syscall number
        _bpf(JGE_K, 0, 1, X32_BIT),                            # 4: x32? -> 5 else 6
        _bpf(RET_K, 0, 0, deny_other),                         # 5
        _bpf(JEQ_K, 5, 0, SYS_SOCKET[arch]),                   # 6: socket -> 12
        _bpf(JEQ_K, 3, 0, SYS_IO_URING[0]),                    # 7: io_uring_* -> 11
        _bpf(JEQ_K, 2, 0, SYS_IO_URING[1]),                    # 8
        _bpf(JEQ_K, 1, 0, SYS_IO_URING[2]),                    # 9
        _bpf(RET_K, 0, 0, RET_ALLOW),                          # 10: everything else
        _bpf(RET_K, 0, 0, deny_other),                         # 11: io_uring
        _bpf(LD_W_ABS, 0, 0, 16),                              # 12: domain (args[0])
        _bpf(JEQ_K, 4, 0, AF_INET),                            # 13 -> 18
        _bpf(JEQ_K, 3, 0, AF_INET6),                           # 14 -> 18
        _bpf(JEQ_K, 1, 0, AF_UNIX),                            # 15 -> 17
        _bpf(JEQ_K, 0, 7, AF_NETLINK),                         # 16 -> 17 else 24
        _bpf(RET_K, 0, 0, RET_ALLOW),                          # 17
        _bpf(LD_W_ABS, 0, 0, 24),                              # 18: type (args[1])
        _bpf(AND_K, 0, 0, SOCK_TYPE_MASK),                     # 19
        _bpf(JEQ_K, 0, 3, SOCK_STREAM),                        # 20 -> 21 else 24
        _bpf(LD_W_ABS, 0, 0, 32),                              # 21: protocol (args[2])
        _bpf(JEQ_K, 2, 0, 0),                                  # 22: default (TCP) -> 25
        _bpf(JEQ_K, 1, 0, IPPROTO_TCP),                        # 23 -> 25
        _bpf(RET_K, 0, 0, deny_socket),                        # 24
        _bpf(RET_K, 0, 0, RET_ALLOW),                          # 25
    ]
    return b"".join(program)


def install_socket_filter() -> None:
    """Install ``socket_filter`` (needs ``PR_SET_NO_NEW_PRIVS`` first)."""
    arch = machine()
    if arch not in AUDIT_ARCH:
        raise ConfineError(errno.ENOSYS, f"no seccomp filter for the {arch} architecture")
    code = socket_filter(arch)
    filters = ctypes.create_string_buffer(code, len(code))

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    program = Program(len(code) // 8, ctypes.addressof(filters))
    libc = _libc()
    _check(libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(program), ctypes.c_ulong(0),
                      ctypes.c_ulong(0)), "seccomp")


def restrict_with_landlock(read: Iterable[str], write: Iterable[str], devices: Iterable[str],
                           connect_ports: Iterable[int], bind_ports: Iterable[int]) -> int:
    """Apply a Landlock domain to this process; the ABI used.  Paths that do not exist are skipped."""
    abi = landlock_abi()
    if abi < REQUIRED_ABI:
        raise ConfineError(errno.EOPNOTSUPP, f"Landlock ABI {abi} is below the {REQUIRED_ABI} a box needs")
    create, add_rule, restrict_self = SYS_LANDLOCK[machine()]
    libc = _libc()
    handled_fs = FS_ALL_BY_ABI.get(abi, FS_ALL_BY_ABI[5])
    attr = struct.pack("QQQ", handled_fs, NET_BIND_TCP | NET_CONNECT_TCP,
                       SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL)
    attr_buffer = ctypes.create_string_buffer(attr, len(attr))
    ruleset = _check(libc.syscall(ctypes.c_long(create), attr_buffer, ctypes.c_size_t(len(attr)),
                                  ctypes.c_uint32(0)), "landlock_create_ruleset")
    try:
        for paths, rights in ((read, READ), (write, WRITE), (devices, DEVICE)):
            for path in paths:
                _add_path_rule(libc, add_rule, ruleset, path, rights & handled_fs)
        for ports, right in ((connect_ports, NET_CONNECT_TCP), (bind_ports, NET_BIND_TCP)):
            for port in sorted(set(int(p) for p in ports)):
                rule = struct.pack("QQ", right, port)
                buffer = ctypes.create_string_buffer(rule, len(rule))
                _check(libc.syscall(ctypes.c_long(add_rule), ctypes.c_int(ruleset), ctypes.c_int(RULE_NET_PORT),
                                    buffer, ctypes.c_uint32(0)), f"landlock rule for TCP port {port}")
        _check(libc.syscall(ctypes.c_long(restrict_self), ctypes.c_int(ruleset), ctypes.c_uint32(0)),
               "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _add_path_rule(libc: ctypes.CDLL, add_rule: int, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        return
    try:
        if not os.path.isdir(f"/proc/self/fd/{fd}"):
            rights &= FILE_RIGHTS
        rule = struct.pack("=Qi", rights, fd)
        buffer = ctypes.create_string_buffer(rule, len(rule))
        _check(libc.syscall(ctypes.c_long(add_rule), ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), buffer,
                            ctypes.c_uint32(0)), f"landlock rule for {path}")
    finally:
        os.close(fd)
