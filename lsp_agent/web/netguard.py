"""The network guard for web fetches: which URLs may be fetched, and connecting only there.

A fetch target is checked in three steps, all before anything is sent:

1. The URL is parsed (``httpx.URL``, cross-checked against ``urllib.parse``) and refused when
   the scheme is not http/https, the two parsers disagree about the host or port, or the host
   is spelled ambiguously (``2130706433``, ``0x7f.1``, ``127.1``: numeric forms that some
   resolvers read as IPv4 addresses).
2. The host is resolved (an injectable async resolver, ``loop.getaddrinfo`` by default) and
   every address is classified. If *any* is loopback, private, link-local, shared (CGNAT),
   multicast, reserved or otherwise not public, the URL is refused: a name that resolves to
   both a public and a private address is an attack, not a choice. ``allow_hosts`` entries
   (``host`` or ``host:port``, case-insensitive) skip the classification for that host.
3. The connection goes to the checked addresses only. :class:`PinnedTransport` hands httpx a
   network backend that connects a ``(host, port)`` to the addresses the guard pinned for it
   and refuses everything else, so a second DNS answer (rebinding) is never asked for. The URL,
   the ``Host`` header, TLS SNI and certificate checks keep the original host name.

Redirects are the caller's job: each target goes through :meth:`NetworkGuard.check` again.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
import socket
import ssl
import urllib.parse
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Iterator,
    Mapping,
    Sequence,
)

import attrs
import httpcore
import httpx

__all__ = [
    "DEFAULT_PORTS",
    "AllowedHost",
    "Blocked",
    "IPAddress",
    "NetworkGuard",
    "PinnedBackend",
    "PinnedTransport",
    "Resolver",
    "Target",
    "classify_address",
    "parse_allow_host",
    "system_resolver",
]

_log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Awaitable[Sequence[str]]]
"""``(host, port) -> addresses`` (IP address strings). Raises ``OSError`` when it cannot."""

DEFAULT_PORTS = {"http": 80, "https": 443}

_ALLOW_HINT = "Add the host to webfetch.allow_hosts to allow it."


async def system_resolver(host: str, port: int) -> list[str]:
    """The system's resolver (``getaddrinfo``), TCP addresses only, in its order."""
    loop = asyncio.get_running_loop()
    infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


# --- classifying addresses ------------------------------------------------------------------


def _v4(table: Iterable[tuple[str, str]]) -> tuple[tuple[ipaddress.IPv4Network, str], ...]:
    return tuple((ipaddress.IPv4Network(net), why) for net, why in table)


def _v6(table: Iterable[tuple[str, str]]) -> tuple[tuple[ipaddress.IPv6Network, str], ...]:
    return tuple((ipaddress.IPv6Network(net), why) for net, why in table)


# First match wins: the more specific entries come first.
_V4_FORBIDDEN = _v4(
    [
        ("0.0.0.0/8", "unspecified ('this network')"),
        ("10.0.0.0/8", "private"),
        ("100.64.0.0/10", "shared address space (carrier-grade NAT)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.169.254/32", "link-local (cloud metadata service)"),
        ("169.254.0.0/16", "link-local"),
        ("172.16.0.0/12", "private"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    ]
)

_V6_FORBIDDEN = _v6(
    [
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::ffff:0:0:0/96", "IPv4-translated"),
        ("64:ff9b:1::/48", "local-use NAT64"),
        ("100::/64", "discard-only"),
        ("2001::/32", "Teredo"),
        ("2001:2::/48", "benchmarking"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "private (unique local)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
        ("::/96", "IPv4-compatible (deprecated)"),
    ]
)

_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")


def classify_address(ip: IPAddress) -> str | None:
    """Why ``ip`` may not be fetched (e.g. ``"loopback"``), or None for a public address.

    IPv6 addresses that carry an IPv4 address (IPv4-mapped ``::ffff:a.b.c.d``, NAT64
    ``64:ff9b::a.b.c.d``, 6to4 ``2002:AABB:CCDD::``) are judged by the embedded address too;
    Teredo (``2001::/32``) is refused whole.
    """
    if isinstance(ip, ipaddress.IPv4Address):
        for net4, why in _V4_FORBIDDEN:
            if ip in net4:
                return why
        if ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global:
            return "not a public address"
        return None
    ip = ipaddress.IPv6Address(ip.packed)  # without a scope id
    embedded = _embedded_v4(ip)
    if embedded is not None:
        kind, v4 = embedded
        inner = classify_address(v4)
        return f"{kind} {v4}: {inner}" if inner else None
    for net6, why in _V6_FORBIDDEN:
        if ip in net6:
            return why
    if ip.is_multicast or ip.is_reserved or ip.is_unspecified or not ip.is_global:
        return "not a public address"
    return None


def _embedded_v4(ip: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped", ip.ipv4_mapped
    if ip in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    if ip in _SIX_TO_FOUR and ip.sixtofour is not None:
        return "6to4", ip.sixtofour
    return None


def _parse_address(text: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


# --- allow_hosts ----------------------------------------------------------------------------


@attrs.frozen
class AllowedHost:
    """One ``webfetch.allow_hosts`` entry: a normalized host, and its port if one was given."""

    host: str
    port: int | None = None

    def matches(self, host: str, port: int) -> bool:
        return self.host == host and self.port in (None, port)

    def __str__(self) -> str:
        shown = f"[{self.host}]" if ":" in self.host else self.host
        return shown if self.port is None else f"{shown}:{self.port}"


def parse_allow_host(entry: str) -> AllowedHost:
    """``host``, ``host:port``, ``[v6]``, ``[v6]:port`` or a bare IPv6 address.

    Raises ``ValueError`` for anything else.
    """
    text = entry.strip()
    port: str | None = None
    if text.startswith("["):
        inside, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise ValueError(f"invalid allow_hosts entry: {entry!r}")
        host, port = inside, (rest[1:] if rest else None)
    elif text.count(":") == 1:
        host, port = text.split(":")
    else:
        host = text
    number: int | None = None
    if port is not None:
        if not port.isascii() or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError(f"invalid port in allow_hosts entry: {entry!r}")
        number = int(port)
    normalized = _normalize_host(host)
    if not normalized or not (
        ":" in normalized or _HOSTNAME.fullmatch(normalized) or _parse_address(normalized)
    ):
        raise ValueError(f"invalid host in allow_hosts entry: {entry!r}")
    return AllowedHost(host=normalized, port=number)


def _normalize_host(host: str) -> str:
    """Lowercase, without brackets or one trailing dot; IPv6 in its compressed form; IDNA."""
    host = host.strip().lower().removeprefix("[").removesuffix("]").removesuffix(".")
    if ":" in host:
        address = _parse_address(host)
        return address.compressed if address is not None else host
    if not host.isascii():
        try:
            host = httpx.URL(f"http://{host}/").raw_host.decode("ascii")
        except (httpx.InvalidURL, UnicodeError):
            return host
    return host


# --- checking a URL -------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Blocked:
    """A URL the guard refuses; ``reason`` is what the model reads."""

    reason: str


@attrs.frozen(kw_only=True)
class Target:
    """A URL the guard admits, with the addresses a connection to it may use."""

    url: httpx.URL
    scheme: str
    host: str
    """Normalized: lowercase, IDNA-encoded, no brackets or trailing dot."""
    port: int
    """The effective port (the scheme's default when the URL has none)."""
    addresses: tuple[str, ...]
    allowed_by: AllowedHost | None = None
    """The ``allow_hosts`` entry that admitted it without classifying its addresses."""

    @property
    def pins(self) -> dict[tuple[str, int], tuple[str, ...]]:
        """``{(host, port): addresses}`` for :class:`PinnedTransport`."""
        return {(self.host, self.port): self.addresses}

    @property
    def origin(self) -> str:
        """``scheme://host`` (with ``:port`` when it is not the default)."""
        shown = f"[{self.host}]" if ":" in self.host else self.host
        if self.port != DEFAULT_PORTS[self.scheme]:
            shown = f"{shown}:{self.port}"
        return f"{self.scheme}://{shown}"


@attrs.frozen(kw_only=True)
class _Parsed:
    url: httpx.URL
    scheme: str
    host: str
    port: int
    address: IPAddress | None


_HOSTNAME = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _parse(raw: str) -> _Parsed | Blocked:
    text = raw.strip()
    if _CONTROL.search(text):
        return Blocked(reason="The URL contains control characters.")
    scheme = text.partition(":")[0].lower()
    if scheme not in DEFAULT_PORTS or not text[len(scheme) + 1 :].startswith("//"):
        return Blocked(reason="URL must start with http:// or https://")
    authority = re.split(r"[/?#]", text[len(scheme) + 3 :], maxsplit=1)[0]
    if "\\" in authority or " " in authority:
        return Blocked(reason="The URL's host part contains a backslash or a space.")
    try:
        url = httpx.URL(text)
        split = urllib.parse.urlsplit(text)
        other_host, other_port = split.hostname or "", split.port
    except (httpx.InvalidURL, ValueError) as exc:
        return Blocked(reason=f"Invalid URL: {exc}")
    host = url.raw_host.decode("ascii")
    if not host:
        return Blocked(reason="The URL has no host.")
    port = DEFAULT_PORTS[scheme] if url.port is None else url.port
    other_port = DEFAULT_PORTS[scheme] if other_port is None else other_port
    # urllib keeps the host as written (Unicode or punycode); httpx has both forms.
    same_host = other_host.lower() in (host.lower(), url.host.lower())
    if not same_host or port != other_port:
        return Blocked(reason="The URL is ambiguous: its host or port can be read two ways.")
    if not 0 < port < 65536:
        return Blocked(reason=f"Invalid port {port}.")
    address: IPAddress | None = None
    if ":" in host:
        address = _parse_address(host)
        if address is None:
            return Blocked(reason=f"Invalid IPv6 address {host!r}.")
        host = address.compressed
    else:
        host = host.removesuffix(".")
        last_label = host.rpartition(".")[2]
        if _NUMERIC_LABEL.fullmatch(last_label):
            # Ends in a number: an IPv4 address, but only the plain dotted-quad spelling is
            # accepted (resolvers read 2130706433, 0x7f.1, 0177.0.0.1 and 127.1 as 127.0.0.1).
            try:
                address = ipaddress.IPv4Address(host)
            except ValueError:
                return Blocked(
                    reason=f"Ambiguous host {host!r}: write IPv4 addresses as four "
                    "decimal numbers (a.b.c.d)."
                )
        elif not _HOSTNAME.fullmatch(host) or len(host) > 253:
            return Blocked(reason=f"Invalid host name {host!r}.")
    return _Parsed(url=url, scheme=scheme, host=host, port=port, address=address)


class NetworkGuard:
    """Decides whether a URL may be fetched, and which addresses a connection may use."""

    def __init__(
        self, *, allow_hosts: Iterable[str] = (), resolver: Resolver | None = None
    ) -> None:
        entries: list[AllowedHost] = []
        for entry in allow_hosts:
            try:
                entries.append(parse_allow_host(entry))
            except ValueError as exc:
                _log.warning("webfetch.allow_hosts: %s (ignored)", exc)
        self.allow_hosts: tuple[AllowedHost, ...] = tuple(entries)
        self._resolve = resolver or system_resolver

    def allowed_by(self, host: str, port: int) -> AllowedHost | None:
        return next((entry for entry in self.allow_hosts if entry.matches(host, port)), None)

    async def check(self, url: str | httpx.URL) -> Target | Blocked:
        """Parse, resolve (once) and classify. Every resolved address must pass."""
        parsed = _parse(str(url))
        if isinstance(parsed, Blocked):
            return parsed
        allowed = self.allowed_by(parsed.host, parsed.port)
        if parsed.address is not None:
            addresses: tuple[str, ...] = (parsed.address.compressed,)
        elif parsed.host == "localhost" or parsed.host.endswith(".localhost"):
            addresses = ("127.0.0.1",)
        else:
            try:
                resolved = await self._resolve(parsed.host, parsed.port)
            except (OSError, UnicodeError) as exc:
                return Blocked(reason=f"Could not resolve {parsed.host}: {_os_error(exc)}")
            addresses = tuple(dict.fromkeys(resolved))
            if not addresses:
                return Blocked(reason=f"Could not resolve {parsed.host}: no addresses.")
        for text in addresses:
            address = _parse_address(text)
            if address is None:
                return Blocked(reason=f"Could not resolve {parsed.host}: {text!r} is not an IP.")
            # An allowed host is admitted whatever its addresses are.
            why = None if allowed is not None else classify_address(address)
            if why is not None:
                return Blocked(reason=_refusal(parsed.host, text, why))
        return Target(
            url=parsed.url,
            scheme=parsed.scheme,
            host=parsed.host,
            port=parsed.port,
            addresses=addresses,
            allowed_by=allowed,
        )


def _refusal(host: str, address: str, why: str) -> str:
    if _parse_address(host) is not None:
        where = f"{host} is not a public address ({why})"
    else:
        where = f"{host} resolves to {address} ({why})"
    return (
        f"Refused: {where}. Web fetches may not reach private, loopback, link-local or other "
        f"non-public addresses. {_ALLOW_HINT}"
    )


def _os_error(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


# --- connecting only to checked addresses ----------------------------------------------------


class PinnedBackend(httpcore.AsyncNetworkBackend):
    """Connects ``(host, port)`` only to the addresses pinned for it, in order.

    ``inner`` makes the actual TCP connections (default: httpcore's anyio backend); it is
    asked for the pinned IP address, never for the host name. Unix sockets are refused.
    """

    def __init__(
        self,
        pins: Mapping[tuple[str, int], Sequence[str]],
        inner: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self._pins = {
            (_normalize_host(host), port): tuple(ips) for (host, port), ips in pins.items()
        }
        for ips in self._pins.values():
            for ip in ips:
                if _parse_address(ip) is None:  # a name would be resolved again
                    raise ValueError(f"not an IP address: {ip!r}")
        self._inner = inner if inner is not None else httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        addresses = self._pins.get((_normalize_host(host), port))
        if not addresses:
            raise httpcore.ConnectError(f"{host}:{port} was not checked by the network guard")
        failure: Exception | None = None
        for address in addresses:
            try:
                return await self._inner.connect_tcp(
                    address,
                    port,
                    timeout=timeout,
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
        assert failure is not None
        raise failure

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("unix sockets are not allowed for web fetches")

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


class PinnedTransport(httpx.AsyncBaseTransport):
    """An httpx transport whose connections go only to pinned addresses (no proxies, HTTP/1.1).

    ``pins`` maps ``(host, port)`` (normalized as in :class:`Target`) to the checked addresses.
    The request keeps its URL, so the ``Host`` header and TLS (SNI, certificate name) use the
    original host name.
    """

    def __init__(
        self,
        pins: Mapping[tuple[str, int], Sequence[str]],
        *,
        network_backend: httpcore.AsyncNetworkBackend | None = None,
        ssl_context: ssl.SSLContext | None = None,
    ) -> None:
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context if ssl_context is not None else httpx.create_ssl_context(),
            network_backend=PinnedBackend(pins, network_backend),
            http1=True,
            http2=False,
            max_connections=4,
        )

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.AsyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


class _ResponseStream(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        closer = getattr(self._stream, "aclose", None)
        if closer is not None:
            with _httpx_errors():
                await closer()


# httpcore's exceptions as httpx's (subclasses first).
_ERRORS: tuple[tuple[type[Exception], type[httpx.TransportError]], ...] = (
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
)


@contextlib.contextmanager
def _httpx_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        for core_type, httpx_type in _ERRORS:
            if isinstance(exc, core_type):
                raise httpx_type(str(exc)) from exc
        raise
