"""Outbound HTTP on behalf of users: the one guard every user-supplied URL goes through.

A user who may import a URL must not be able to make the server read its own loopback services, the
private network it sits in, or a cloud metadata address, and then download the answer as a product.
So, deny by default:

* the host is resolved once, and every address it resolves to is judged; the connection goes to the
  address that was judged (the URL is rewritten to it, with the original ``Host`` header and TLS server
  name), so a DNS answer that changes between the check and the connect cannot slip through;
* loopback, private, link-local, multicast, reserved and unspecified addresses are refused, IPv4-mapped
  and 6to4/Teredo-embedded IPv4 addresses judged as the IPv4 address they carry;
* redirects are followed by hand, each hop judged the same way, at most ``MAX_REDIRECTS``;
* operators name the hosts (names, addresses or networks) their users may import from anyway in the
  ``import_allowed_hosts`` setting.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

if TYPE_CHECKING:
    import httpx

MAX_REDIRECTS = 10
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundRefused(Exception):
    """The URL may not be fetched; the message is a sentence for the user's run log."""


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    if isinstance(address, ipaddress.IPv6Address):
        return address.ipv4_mapped or address.sixtofour or (address.teredo[1] if address.teredo else None)
    return None


def refusal_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not a public internet address, or ``None`` when it is."""
    inner = _embedded_ipv4(address)
    if inner is not None:
        return refusal_reason(inner)
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None


@dataclass(frozen=True)
class OutboundPolicy:
    """Which non-public hosts an operator allows (everything public is allowed)."""

    allowed_names: frozenset[str] = frozenset()
    allowed_networks: tuple[IPNetwork, ...] = field(default=())

    @classmethod
    def from_hosts(cls, hosts: Iterable[str]) -> OutboundPolicy:
        """Host names, addresses (``10.0.0.5``) or networks (``10.0.0.0/24``) as written in the settings."""
        names: set[str] = set()
        networks: list[IPNetwork] = []
        for raw in hosts:
            entry = str(raw).strip().lower().strip("[]")
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(entry.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    def allows_name(self, host: str) -> bool:
        return host.lower().rstrip(".") in self.allowed_names

    def allows_address(self, address: IPAddress) -> bool:
        return any(address in network for network in self.allowed_networks)


def lookup(host: str, port: int) -> list[IPAddress]:
    """Every address ``host`` (a name or an address literal) stands for, as the server's resolver answers."""
    try:
        literal: IPAddress | None = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        literal = None
    if literal is not None:
        return [literal]
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        raise OutboundRefused(f"the host {host[:100]} cannot be resolved ({e})") from e
    candidates = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not candidates:
        raise OutboundRefused(f"the host {host[:100]} has no address")
    return candidates


def judge(host: str, candidates: list[IPAddress], policy: OutboundPolicy, *, what: str = "imports from",
          setting: str = "import_allowed_hosts") -> str:
    """The address to connect to among ``candidates`` (what ``host`` resolved to): every one must be allowed.

    ``what`` names the traffic in the refusal ("imports from", "exports to"), ``setting`` the setting that
    allows a host anyway.
    """
    if policy.allows_name(host):
        return str(candidates[0])
    for address in candidates:
        # Every answer is judged, not just the first: a name resolving to one public and one private
        # address would otherwise reach the private one on a retry.
        reason = refusal_reason(address)
        if reason is not None and not policy.allows_address(address):
            raise OutboundRefused(
                f"{what} {host[:100]} are refused: it is {reason} ({address}); an operator may allow "
                f"the host with the {setting} setting")
    return str(candidates[0])


def resolve(host: str, port: int, policy: OutboundPolicy, *, what: str = "imports from") -> str:
    """The address to connect to for ``host``: every address it resolves to must be allowed.

    ``what`` names the traffic in the refusal ("imports from", "exports to").
    """
    return judge(host, lookup(host, port), policy, what=what)


def _pinned(url: str, policy: OutboundPolicy) -> tuple[str, str, str]:
    """(URL aimed at the checked address, Host header, TLS server name) for ``url``."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        raise OutboundRefused(f"only http and https URLs can be imported, not {parts.scheme or 'this'!r}")
    host = parts.hostname or ""
    if not host:
        raise OutboundRefused("the URL has no host")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as e:
        raise OutboundRefused(f"the URL has an invalid port: {e}") from e
    address = resolve(host, port, policy)
    shown = f"[{address}]" if ":" in address else address
    netloc = f"{shown}:{parts.port}" if parts.port else shown
    host_header = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, "")), host_header, host


@contextmanager
def open_stream(client: httpx.Client, url: str, policy: OutboundPolicy, *, headers: dict[str, str] | None = None,
                hop_headers: Callable[[str], dict[str, str]] | None = None) -> Iterator[httpx.Response]:
    """GET ``url`` through the guard, following redirects by hand; the final response, streamed.

    ``hop_headers(url)`` adds headers for each hop by its URL (credentials for one host never follow a redirect
    to another).

    ``client`` must not follow redirects itself (``follow_redirects=False``, the httpx default).
    """
    current = url
    for _ in range(MAX_REDIRECTS + 1):
        target, host_header, server_name = _pinned(current, policy)
        extra = hop_headers(current) if hop_headers is not None else {}
        request = client.build_request("GET", target, headers={**(headers or {}), **extra, "Host": host_header},
                                       extensions={"sni_hostname": server_name})
        response = client.send(request, stream=True, follow_redirects=False)
        if response.is_redirect and response.headers.get("location"):
            location = response.headers["location"]
            response.close()
            current = urljoin(current, location)
            continue
        try:
            yield response
        finally:
            response.close()
        return
    raise OutboundRefused(f"more than {MAX_REDIRECTS} redirects")


@contextmanager
def open_request(client: httpx.Client, method: str, url: str, policy: OutboundPolicy, *,
                 headers: dict[str, str] | None = None, content: Any = None) -> Iterator[httpx.Response]:
    """Send one request through the guard (any method, a body as bytes or an iterator of them); the response,
    streamed.  Redirects are not followed: a redirect is the answer (node-to-node calls expect none)."""
    target, host_header, server_name = _pinned(url, policy)
    request = client.build_request(method, target, headers={**(headers or {}), "Host": host_header},
                                   content=content, extensions={"sni_hostname": server_name})
    response = client.send(request, stream=True, follow_redirects=False)
    try:
        yield response
    finally:
        response.close()


def redact(url: str) -> str:
    """``url`` without its query, fragment and credentials: what may appear in a log or a message.

    Signed URLs carry their secret in the query string, and basic-auth URLs before the host.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an invalid URL>"
    host = parts.netloc.rsplit("@", 1)[-1]
    shown = urlunsplit((parts.scheme, host, parts.path, "", ""))
    return shown[:200] + ("?…" if parts.query else "")
