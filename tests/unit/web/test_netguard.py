"""The network guard: address classification, URL spellings, resolution, pinned connections.

Nothing here touches a non-loopback address: names are answered by injected resolvers, the
system resolver is replaced by one that refuses every call, and connections go to servers
on 127.0.0.1 (or, in the network-namespace test, nowhere at all).
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator, Iterable, Sequence
from pathlib import Path

import httpcore
import httpx
import pytest

from lsp_agent.web.netguard import (
    AllowedHost,
    Blocked,
    NetworkGuard,
    PinnedBackend,
    PinnedTransport,
    Target,
    classify_address,
    parse_allow_host,
    system_resolver,
)

REPO = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.usefixtures("no_system_dns")  # tests/unit/conftest.py


class FakeDns:
    """Answers from a table and records every question; unknown names do not resolve."""

    def __init__(self, table: dict[str, list[str]]) -> None:
        self.table = table
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        if host not in self.table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.table[host]


# --- classification ---------------------------------------------------------------------

FORBIDDEN = {
    "127.0.0.1": "loopback",
    "127.255.255.254": "loopback",
    "10.0.0.1": "private",
    "172.16.0.1": "private",
    "172.31.255.255": "private",
    "192.168.1.1": "private",
    "169.254.169.254": "cloud metadata",
    "169.254.1.1": "link-local",
    "100.64.0.1": "carrier-grade NAT",
    "100.127.255.254": "carrier-grade NAT",
    "0.0.0.0": "unspecified",
    "0.1.2.3": "unspecified",
    "224.0.0.1": "multicast",
    "239.255.255.250": "multicast",
    "255.255.255.255": "broadcast",
    "240.0.0.1": "reserved",
    "192.0.0.1": "IETF",
    "192.0.2.1": "documentation",
    "198.51.100.7": "documentation",
    "203.0.113.9": "documentation",
    "198.18.0.1": "benchmarking",
    "::1": "loopback",
    "::": "unspecified",
    "fe80::1": "link-local",
    "fc00::1": "unique local",
    "fd12:3456::1": "unique local",
    "fec0::1": "site-local",
    "ff02::1": "multicast",
    "ff0e::1": "multicast",
    "2001:db8::1": "documentation",
    "3fff::1": "documentation",
    "100::1": "discard",
    "2001::1": "Teredo",
    "2001:2::1": "benchmarking",
    "::127.0.0.1": "IPv4-compatible",
    "::ffff:127.0.0.1": "IPv4-mapped 127.0.0.1: loopback",
    "::ffff:10.0.0.1": "IPv4-mapped 10.0.0.1: private",
    "::ffff:169.254.169.254": "cloud metadata",
    "::ffff:0:7f00:1": "IPv4-translated",
    "64:ff9b::10.0.0.1": "NAT64 10.0.0.1: private",
    "64:ff9b::127.0.0.1": "NAT64 127.0.0.1: loopback",
    "64:ff9b:1::1": "local-use NAT64",
    "2002:7f00:1::1": "6to4 127.0.0.1: loopback",
    "2002:a9fe:a9fe::1": "6to4 169.254.169.254",
    "2002:c0a8:101::1": "6to4 192.168.1.1: private",
}

PUBLIC = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "172.32.0.1",
    "100.128.0.1",
    "11.0.0.1",
    "2606:4700:4700::1111",
    "2001:4860:4860::8888",
    "::ffff:93.184.216.34",
    "64:ff9b::93.184.216.34",
    "2002:5db8:d822::1",
]


@pytest.mark.parametrize(("address", "reason"), FORBIDDEN.items())
def test_non_public_addresses_are_refused_with_a_reason(address: str, reason: str) -> None:
    why = classify_address(ipaddress.ip_address(address))

    assert why is not None
    assert reason in why


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert classify_address(ipaddress.ip_address(address)) is None


def test_a_scope_id_does_not_hide_a_link_local_address() -> None:
    assert classify_address(ipaddress.ip_address("fe80::1%eth0")) == "link-local"


# --- URL spellings ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://2130706433/", "Ambiguous host"),
        ("http://0x7f.1/", "Ambiguous host"),
        ("http://0x7f000001/", "Ambiguous host"),
        ("http://0177.0.0.1/", "Invalid IPv4 address"),
        ("http://127.1/", "Ambiguous host"),
        ("http://127.0.1/", "Ambiguous host"),
        ("http://1.2.3.4.5/", "Ambiguous host"),
        ("http://foo.0x10/", "Ambiguous host"),
        ("http://127.0.0.1/", "loopback"),
        ("http://127.0.0.1./", "loopback"),
        ("HTTP://127.0.0.1:8080/x", "loopback"),
        ("http://[::1]/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://[0:0:0:0:0:0:0:1]/", "loopback"),
        ("http://[::ffff:127.0.0.1]/", "IPv4-mapped 127.0.0.1"),
        ("http://[::FFFF:7F00:1]/", "IPv4-mapped 127.0.0.1"),
        ("http://[64:ff9b::a9fe:a9fe]/", "cloud metadata"),
        ("http://[fe80::1%25eth0]/", "link-local"),
        ("http://localhost/", "loopback"),
        ("http://LOCALHOST.:3000/", "loopback"),
        ("http://api.localhost/", "loopback"),
        ("http://a@127.0.0.1/", "loopback"),
        ("http://user:pw@10.0.0.1:8080/x", "private"),
        ("http://example.com@169.254.169.254/", "cloud metadata"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://10.0.0.1/", "private"),
        ("https://100.64.0.1/", "carrier-grade NAT"),
        ("http://0.0.0.0:8000/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://224.0.0.251/", "multicast"),
        ("http://127.0.0.1\\@example.com/", "backslash"),
        ("http://example.com\\@127.0.0.1/", "backslash"),
        ("http://exa mple.com/", "space"),
        ("http://example.com%2e/", "Invalid host name"),
        ("http://exa\tmple.com/", "control characters"),
        ("http://example.com:0/", "Invalid port"),
        ("http://example.com:99999/", "Invalid URL"),
        ("http:///path", "no host"),
        ("http:/example.com/", "must start with http"),
        ("ftp://example.com/", "must start with http"),
        ("file:///etc/passwd", "must start with http"),
        ("gopher://127.0.0.1:6379/_INFO", "must start with http"),
        ("//example.com/", "must start with http"),
        ("javascript:alert(1)", "must start with http"),
    ],
)
async def test_tricky_spellings_are_refused_without_resolving(url: str, message: str) -> None:
    dns = FakeDns({})

    verdict = await NetworkGuard(resolver=dns).check(url)

    assert isinstance(verdict, Blocked), verdict
    assert message in verdict.reason
    assert dns.calls == []


async def test_a_literal_public_address_is_admitted_without_resolving() -> None:
    dns = FakeDns({})

    target = await NetworkGuard(resolver=dns).check("https://[2606:4700:4700::1111]:8443/a?b")

    assert isinstance(target, Target)
    assert (target.scheme, target.host, target.port) == ("https", "2606:4700:4700::1111", 8443)
    assert target.addresses == ("2606:4700:4700::1111",)
    assert target.origin == "https://[2606:4700:4700::1111]:8443"
    assert dns.calls == []


async def test_names_are_normalized_and_resolved_once_on_the_effective_port() -> None:
    dns = FakeDns({"example.com": ["93.184.216.34"], "xn--bcher-kva.de": ["1.1.1.1"]})
    guard = NetworkGuard(resolver=dns)

    plain = await guard.check("http://EXAMPLE.com./page")
    tls = await guard.check("https://example.com/")
    idna = await guard.check("http://bücher.de/")

    assert isinstance(plain, Target)
    assert (plain.host, plain.port, plain.addresses) == ("example.com", 80, ("93.184.216.34",))
    assert plain.origin == "http://example.com"
    assert isinstance(tls, Target)
    assert tls.port == 443
    assert isinstance(idna, Target)
    assert idna.host == "xn--bcher-kva.de"
    assert dns.calls == [("example.com", 80), ("example.com", 443), ("xn--bcher-kva.de", 80)]


# --- resolution ---------------------------------------------------------------------------


async def test_a_name_resolving_to_loopback_is_refused() -> None:
    guard = NetworkGuard(resolver=FakeDns({"evil.test": ["127.0.0.1"]}))

    verdict = await guard.check("http://evil.test/")

    assert isinstance(verdict, Blocked)
    assert "evil.test resolves to 127.0.0.1 (loopback)" in verdict.reason
    assert "webfetch.allow_hosts" in verdict.reason


@pytest.mark.parametrize(
    "answer",
    [
        ["93.184.216.34", "10.0.0.7"],
        ["10.0.0.7", "93.184.216.34"],
        ["2606:4700:4700::1111", "::1"],
        ["93.184.216.34", "169.254.169.254"],
        ["93.184.216.34", "::ffff:192.168.0.1"],
    ],
)
async def test_a_name_resolving_to_public_and_private_is_refused(answer: list[str]) -> None:
    guard = NetworkGuard(resolver=FakeDns({"mixed.test": answer}))

    verdict = await guard.check("https://mixed.test/")

    assert isinstance(verdict, Blocked)
    assert "mixed.test resolves to" in verdict.reason


async def test_a_name_with_only_public_addresses_is_pinned_to_all_of_them() -> None:
    guard = NetworkGuard(resolver=FakeDns({"multi.test": ["93.184.216.34", "1.1.1.1"]}))

    target = await guard.check("http://multi.test:8080/")

    assert isinstance(target, Target)
    assert target.pins == {("multi.test", 8080): ("93.184.216.34", "1.1.1.1")}
    assert target.allowed_by is None


@pytest.mark.parametrize(
    ("answer", "message"),
    [(None, "Name or service not known"), ([], "no addresses"), (["evil.test"], "not an IP")],
)
async def test_unresolvable_names_are_refused(answer: list[str] | None, message: str) -> None:
    table: dict[str, list[str]] = {}
    if answer is not None:
        table["gone.test"] = answer

    verdict = await NetworkGuard(resolver=FakeDns(table)).check("http://gone.test/")

    assert isinstance(verdict, Blocked)
    assert message in verdict.reason


async def test_the_system_resolver_returns_addresses_in_order_without_duplicates() -> None:
    # A numeric host: getaddrinfo answers it without asking any DNS server.
    assert await system_resolver("127.0.0.1", 80) == ["127.0.0.1"]
    assert await system_resolver("::1", 443) == ["::1"]


# --- allow_hosts --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "expected"),
    [
        ("Test.Local", AllowedHost("test.local")),
        ("test.local.", AllowedHost("test.local")),
        ("127.0.0.1:8080", AllowedHost("127.0.0.1", 8080)),
        ("[::1]:8080", AllowedHost("::1", 8080)),
        ("[::1]", AllowedHost("::1")),
        ("::1", AllowedHost("::1")),
        ("0:0::1", AllowedHost("::1")),
        ("Intranet.Corp:443", AllowedHost("intranet.corp", 443)),
        ("bücher.de", AllowedHost("xn--bcher-kva.de")),
    ],
)
def test_allow_host_entries(entry: str, expected: AllowedHost) -> None:
    assert parse_allow_host(entry) == expected


@pytest.mark.parametrize(
    "entry", ["", "a:b", "host:0", "host:99999", "[::1", "[::1]x", "a b", "http://x/", "host:-1"]
)
def test_invalid_allow_host_entries_raise(entry: str) -> None:
    with pytest.raises(ValueError, match="allow_hosts"):
        parse_allow_host(entry)


def test_invalid_entries_are_skipped_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    guard = NetworkGuard(allow_hosts=["ok.test", "bad entry"])

    assert guard.allow_hosts == (AllowedHost("ok.test"),)
    assert "bad entry" in caplog.text


async def test_allow_hosts_admit_a_private_host_by_name_any_port_any_case() -> None:
    dns = FakeDns({"test.local": ["127.0.0.1"]})
    guard = NetworkGuard(allow_hosts=["TEST.local"], resolver=dns)

    target = await guard.check("http://Test.Local.:8123/x")

    assert isinstance(target, Target)
    assert target.addresses == ("127.0.0.1",)
    assert target.allowed_by == AllowedHost("test.local")
    assert dns.calls == [("test.local", 8123)]


async def test_an_allow_host_with_a_port_admits_only_that_port() -> None:
    guard = NetworkGuard(allow_hosts=["127.0.0.1:8080", "[::1]:9000"], resolver=FakeDns({}))

    assert isinstance(await guard.check("http://127.0.0.1:8080/"), Target)
    assert isinstance(await guard.check("http://[::1]:9000/"), Target)
    assert isinstance(await guard.check("http://127.0.0.1:8081/"), Blocked)
    assert isinstance(await guard.check("http://127.0.0.1/"), Blocked)
    assert isinstance(await guard.check("http://[::1]/"), Blocked)


async def test_allowing_one_host_does_not_admit_another_with_the_same_address() -> None:
    dns = FakeDns({"test.local": ["127.0.0.1"], "other.local": ["127.0.0.1"]})
    guard = NetworkGuard(allow_hosts=["test.local"], resolver=dns)

    assert isinstance(await guard.check("http://test.local/"), Target)
    assert isinstance(await guard.check("http://other.local/"), Blocked)
    assert isinstance(await guard.check("http://127.0.0.1/"), Blocked)


# --- pinned connections -------------------------------------------------------------------


class RecordingBackend(httpcore.AsyncNetworkBackend):
    """Records what it is asked to connect to; connects loopback only, refuses the rest."""

    def __init__(self, fail: Iterable[str] = ()) -> None:
        self.connects: list[tuple[str, int]] = []
        self._fail = set(fail)
        self._inner = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        self.connects.append((host, port))
        if host in self._fail or not ipaddress.ip_address(host).is_loopback:
            raise httpcore.ConnectError(f"test network: no route to {host}")
        return await self._inner.connect_tcp(host, port, timeout=timeout)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class EchoServer:
    """Answers every request with 200 and records the Host header (and the TLS SNI name)."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.sni: list[str | None] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def start(self, ssl_context: ssl.SSLContext | None = None) -> None:
        if ssl_context is not None:
            ssl_context.sni_callback = self._record_sni
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=ssl_context)
        self.port = self._server.sockets[0].getsockname()[1]

    def _record_sni(self, _sock: ssl.SSLObject, name: str | None, _ctx: ssl.SSLContext) -> None:
        self.sni.append(name)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            writer.close()
            return
        for line in head.decode("latin-1").split("\r\n")[1:]:
            name, _, value = line.partition(":")
            if name.lower() == "host":
                self.hosts.append(value.strip())
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()


@pytest.fixture
async def echo() -> AsyncIterator[EchoServer]:
    server = EchoServer()
    await server.start()
    yield server
    await server.stop()


async def test_the_backend_connects_to_the_pinned_address_not_the_name() -> None:
    inner = RecordingBackend(fail=["127.0.0.2"])
    backend = PinnedBackend({("test.local", 1): ["127.0.0.2", "127.0.0.3"]}, inner)

    with pytest.raises(httpcore.ConnectError):
        await backend.connect_tcp("TEST.local.", 1)

    assert inner.connects == [("127.0.0.2", 1), ("127.0.0.3", 1)]


def test_the_backend_takes_only_ip_addresses_as_pins() -> None:
    with pytest.raises(ValueError, match="not an IP address"):
        PinnedBackend({("test.local", 80): ["test.local"]})


async def test_an_allowed_host_must_still_resolve_to_ip_addresses() -> None:
    guard = NetworkGuard(allow_hosts=["test.local"], resolver=FakeDns({"test.local": ["x.y"]}))

    verdict = await guard.check("http://test.local/")

    assert isinstance(verdict, Blocked)
    assert "not an IP" in verdict.reason


async def test_the_backend_refuses_what_was_not_checked() -> None:
    inner = RecordingBackend()
    backend = PinnedBackend({("test.local", 80): ["127.0.0.1"]}, inner)

    for host, port in [("test.local", 81), ("other.local", 80), ("127.0.0.1", 80)]:
        with pytest.raises(httpcore.ConnectError, match="not checked by the network guard"):
            await backend.connect_tcp(host, port)
    with pytest.raises(httpcore.ConnectError, match="unix sockets"):
        await backend.connect_unix_socket("/run/docker.sock")

    assert inner.connects == []


async def test_the_transport_keeps_the_host_header_and_connects_to_the_pin(
    echo: EchoServer,
) -> None:
    inner = RecordingBackend()
    pins = {("test.local", echo.port): ("127.0.0.1",)}
    async with httpx.AsyncClient(
        transport=PinnedTransport(pins, network_backend=inner), trust_env=False
    ) as client:
        response = await client.get(f"http://test.local:{echo.port}/")
        with pytest.raises(httpx.ConnectError, match="not checked"):
            await client.get(f"http://elsewhere.local:{echo.port}/")

    assert response.text == "ok"
    assert echo.hosts == [f"test.local:{echo.port}"]
    assert inner.connects == [("127.0.0.1", echo.port)]


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A self-signed certificate for ``test.local`` only (no IP address in it)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed: cannot make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    command = ["openssl", "req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=test.local"]
    command += ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1"]
    command += ["-addext", "subjectAltName=DNS:test.local", "-keyout", str(key), "-out", str(cert)]
    subprocess.run(
        command,
        check=True,
        capture_output=True,
    )
    return cert, key


@pytest.fixture
async def tls_echo(certificate: tuple[Path, Path]) -> AsyncIterator[EchoServer]:
    cert, key = certificate
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = EchoServer()
    await server.start(context)
    yield server
    await server.stop()


async def test_tls_uses_the_original_name_for_sni_and_the_certificate(
    tls_echo: EchoServer, certificate: tuple[Path, Path]
) -> None:
    trusting = ssl.create_default_context(cafile=str(certificate[0]))
    inner = RecordingBackend()
    port = tls_echo.port
    pins = {("test.local", port): ("127.0.0.1",), ("other.local", port): ("127.0.0.1",)}
    transport = PinnedTransport(pins, network_backend=inner, ssl_context=trusting)
    async with httpx.AsyncClient(transport=transport, trust_env=False) as client:
        response = await client.get(f"https://test.local:{port}/")
        # The same address under a name the certificate does not carry: verification fails.
        with pytest.raises(httpx.ConnectError, match="certificate verify failed"):
            await client.get(f"https://other.local:{port}/")

    assert response.status_code == 200
    assert tls_echo.sni[:2] == ["test.local", "other.local"]
    assert tls_echo.hosts == [f"test.local:{port}"]
    assert inner.connects == [("127.0.0.1", port), ("127.0.0.1", port)]


# --- inside a network namespace with only loopback --------------------------------------

_NETNS_SCRIPT = textwrap.dedent(
    """
    import asyncio, json, socket, sys, tempfile

    import httpcore

    from lsp_agent.testing.permissions import RecordingAsk
    from lsp_agent.testing.tools import tool_context
    from lsp_agent.tools.webfetch import WebfetchParams, WebfetchTool

    attempts = []
    real_connect = socket.socket.connect

    def connect(self, address):
        attempts.append(str(address[0]))
        return real_connect(self, address)

    socket.socket.connect = connect

    class Recording(httpcore.AnyIOBackend):
        def __init__(self):
            super().__init__()
            self.asked = []

        async def connect_tcp(self, host, port, *args, **kwargs):
            self.asked.append(host)
            return await super().connect_tcp(host, port, *args, **kwargs)

    async def fetch(url, allow_hosts=()):
        backend = Recording()
        ask = RecordingAsk()
        tool = WebfetchTool(allow_hosts=allow_hosts, transport=backend)
        with tempfile.TemporaryDirectory() as ws:
            outcome = await tool.run(WebfetchParams(url=url, timeout=5), tool_context(ws, ask=ask))
        return {"error": outcome.is_error, "output": outcome.output, "asked": backend.asked,
                "asks": len(ask.requests)}

    async def main():
        results = {}
        for url in ["http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/",
                    "http://[fe80::1]/", "http://[::ffff:10.0.0.1]/"]:
            results[url] = await fetch(url)
        results["socket_attempts_before_control"] = list(attempts)
        # Control: the same fetch with the host allowed does try to connect, and fails,
        # because this namespace has no route anywhere.
        results["control"] = await fetch("http://10.0.0.1/", allow_hosts=["10.0.0.1"])
        results["socket_attempts"] = attempts
        print(json.dumps(results))

    asyncio.run(main())
    """
)


def _unshare_prefix() -> list[str] | None:
    if shutil.which("unshare") is None:
        return None
    candidates = [["unshare", "--net"], ["unshare", "--net", "--map-root-user"]]
    for prefix in candidates:
        probe = subprocess.run([*prefix, "true"], capture_output=True, check=False)
        if probe.returncode == 0:
            return prefix
    return None


def test_inside_a_fresh_network_namespace_the_guard_refuses_before_any_connect() -> None:
    prefix = _unshare_prefix()
    if prefix is None:
        pytest.skip("unshare is unavailable or may not create a network namespace here")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _NETNS_SCRIPT],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads(done.stdout)
    for url in [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://[::ffff:10.0.0.1]/",
    ]:
        assert results[url]["error"] is True
        assert "Refused" in results[url]["output"]
        assert results[url]["asked"] == []
        assert results[url]["asks"] == 0
    assert results["socket_attempts_before_control"] == []
    control = results["control"]
    assert control["error"] is True
    assert control["asked"] == ["10.0.0.1"]
    assert results["socket_attempts"] == ["10.0.0.1"]
