"""Network interfaces and the host name: the network section.

Names only (``/sys/class/net`` on Linux, ``socket.if_nameindex`` elsewhere), never an
address: what ``NCCL_SOCKET_IFNAME`` / ``GLOO_SOCKET_IFNAME`` must name is an interface that
exists on every node. Standard library, file reads only.
"""

from __future__ import annotations

import os

from stackcheck.models.snapshot import NetInterface, NetworkSection

SYS_CLASS_NET = "/sys/class/net"  # a module attribute so tests can point it at a fake tree
MAX_INTERFACES = 512  # bounded: a host with thousands of veth pairs still gives a small section


def collect(ctx=None) -> NetworkSection:
    sec = NetworkSection(status="ok", source="sysfs", hostname=_hostname())
    try:
        names = sorted(os.listdir(SYS_CLASS_NET))
    except OSError:
        import socket

        sec.source = "socket"
        try:
            names = sorted(name for _, name in socket.if_nameindex())
        except (OSError, AttributeError) as exc:
            sec.status, sec.error = "failed", f"{type(exc).__name__}: {exc}"
            return sec
        sec.interfaces = [NetInterface(name=n, loopback=n == "lo") for n in names[:MAX_INTERFACES]]
        return sec
    sec.interfaces = [_sysfs_interface(name) for name in names[:MAX_INTERFACES]]
    return sec


def _hostname() -> str:
    """What ``socket.gethostname()`` answers; on POSIX that is uname's node name (gethostname(2)
    reads it), which spares importing socket (about 1.5 ms, more than the rest of the section)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


def _sysfs_interface(name: str) -> NetInterface:
    state = _read(os.path.join(SYS_CLASS_NET, name, "operstate"))
    kind = _read(os.path.join(SYS_CLASS_NET, name, "type"))
    up = {"up": True, "down": False, "lowerlayerdown": False, "notpresent": False}.get(state)
    return NetInterface(name=name, up=up, loopback=kind == "772")  # ARPHRD_LOOPBACK


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as fh:
            return fh.read(64).strip()
    except OSError:
        return ""
