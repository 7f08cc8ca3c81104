"""The webfetch tool against an HTTP server on 127.0.0.1.

Names are answered by an injected resolver; connections go through a recording network
backend that connects loopback addresses, routes the one "public" test address to the local
server (it is never contacted) and refuses everything else without touching the network.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path

import attrs
import httpcore
import pytest
from pydantic import ValidationError

from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission.subjects import FetchSubject
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.permissions import RecordingAsk, deny
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.webfetch import (
    MAX_RESPONSE_BYTES,
    USER_AGENT,
    WebfetchParams,
    WebfetchTool,
)

PUBLIC_IP = "93.184.216.34"
"""A public address the fake network routes to the local server; never contacted."""

TOO_LARGE = "Response too large (exceeds 5 MB limit)"

pytestmark = pytest.mark.usefixtures("no_system_dns")  # tests/unit/conftest.py


# --- the local server -------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Seen:
    path: str
    headers: dict[str, str]


@attrs.frozen(kw_only=True)
class Reply:
    status: int = 200
    reason: str = "OK"
    headers: dict[str, str] = attrs.field(factory=dict)
    body: bytes = b""
    chunks: int = 0
    """Send ``chunks`` chunks of ``body`` with chunked encoding instead of one body."""
    delay: float = 0.0
    declared_length: int | None = None


Route = Reply | Callable[[Seen], Reply]


class Server:
    def __init__(self) -> None:
        self.routes: dict[str, Route] = {}
        self.seen: list[Seen] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
            request_line, *lines = head.split("\r\n")
            headers = {}
            for line in lines:
                if ":" in line:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
            seen = Seen(path=request_line.split(" ")[1], headers=headers)
            self.seen.append(seen)
            route = self.routes.get(seen.path, Reply(status=404, reason="Not Found"))
            reply = route(seen) if callable(route) else route
            await self._send(writer, reply)
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def _send(self, writer: asyncio.StreamWriter, reply: Reply) -> None:
        if reply.delay:
            await asyncio.sleep(reply.delay)
        headers = {"Connection": "close", **reply.headers}
        if reply.chunks:
            headers["Transfer-Encoding"] = "chunked"
        else:
            length = reply.declared_length
            headers["Content-Length"] = str(len(reply.body) if length is None else length)
        head = f"HTTP/1.1 {reply.status} {reply.reason}\r\n"
        head += "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        writer.write(head.encode("latin-1"))
        if reply.chunks:
            for _ in range(reply.chunks):
                writer.write(f"{len(reply.body):x}\r\n".encode() + reply.body + b"\r\n")
                await writer.drain()
            writer.write(b"0\r\n\r\n")
        else:
            writer.write(reply.body)
        await writer.drain()


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    running = Server()
    await running.start()
    yield running
    await running.stop()


class FakeNetwork(httpcore.AsyncNetworkBackend):
    """Records every (address, port) it is asked for. Loopback is connected as asked;
    ``PUBLIC_IP`` is routed to the local server; anything else is refused untouched."""

    def __init__(self, server: Server) -> None:
        self.connects: list[tuple[str, int]] = []
        self._server = server
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
        if host == PUBLIC_IP:
            return await self._inner.connect_tcp("127.0.0.1", self._server.port, timeout=timeout)
        if ipaddress.ip_address(host).is_loopback:
            return await self._inner.connect_tcp(host, port, timeout=timeout)
        raise httpcore.ConnectError(f"test network: no route to {host}")

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise AssertionError("no unix sockets")

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def private(self) -> list[tuple[str, int]]:
        return [(h, p) for h, p in self.connects if h != PUBLIC_IP and h != "127.0.0.1"]


class FakeDns:
    """Answers ``table[name]``; a name with several answers gives them one per call (the last
    repeats). Records every question."""

    def __init__(self, table: dict[str, list[list[str]]] | None = None) -> None:
        self.table = table or {}
        self.calls: list[tuple[str, int]] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.calls.append((host, port))
        answers = self.table.get(host)
        if not answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return answers.pop(0) if len(answers) > 1 else answers[0]


@attrs.define
class Harness:
    server: Server
    network: FakeNetwork
    dns: FakeDns
    ask: RecordingAsk
    ws: Path

    async def fetch(
        self,
        url: str,
        *,
        allow_hosts: Sequence[str] = (),
        format: str = "markdown",
        timeout: float | None = None,
    ) -> ToolOutcome:
        tool = WebfetchTool(allow_hosts=allow_hosts, resolver=self.dns, transport=self.network)
        params = WebfetchParams.model_validate({"url": url, "format": format, "timeout": timeout})
        return await tool.run(params, tool_context(self.ws, ask=self.ask))

    async def local(
        self, path: str, *, format: str = "markdown", timeout: float | None = None
    ) -> ToolOutcome:
        """Fetch ``path`` from the local server, its address allowed."""
        allow = [f"127.0.0.1:{self.server.port}"]
        return await self.fetch(
            f"{self.server.base}{path}", allow_hosts=allow, format=format, timeout=timeout
        )


@pytest.fixture
def h(server: Server, ws: Path) -> Harness:
    return Harness(
        server=server, network=FakeNetwork(server), dns=FakeDns(), ask=RecordingAsk(), ws=ws
    )


PAGE = b"""<!doctype html>
<html><head><title>The Page</title>
<style>body { color: red; }</style>
<script>alert("SCRIPT-RAN")</script>
<link rel="stylesheet" href="/s.css"></head>
<body>
<h1>Welcome</h1>
<p>Some <b>bold</b> text and a <a href="/docs/intro">relative link</a>.</p>
<ul><li>first</li><li>second</li></ul>
<pre><code class="language-python">def answer():
    return 42
</code></pre>
<noscript>NOSCRIPT-TEXT</noscript>
<iframe src="https://ads.example/">IFRAME-TEXT</iframe>
<script type="application/json">{"secret": "JSON-IN-SCRIPT"}</script>
</body></html>
"""


def html(body: bytes = PAGE) -> Reply:
    return Reply(headers={"Content-Type": "text/html; charset=utf-8"}, body=body)


def redirect(location: str, status: int = 302) -> Reply:
    return Reply(status=status, reason="Found", headers={"Location": location})


# --- formats ------------------------------------------------------------------------------


async def test_html_becomes_markdown_without_scripts_styles_or_frames(h: Harness) -> None:
    h.server.routes["/page"] = html()

    outcome = await h.local("/page")

    assert not outcome.is_error, outcome.output
    text = outcome.output
    assert "# Welcome" in text
    assert "Some **bold** text" in text
    assert f"[relative link]({h.server.base}/docs/intro)" in text
    assert "- first\n- second" in text
    assert "```python\ndef answer():\n    return 42\n```" in text
    for hidden in ("SCRIPT-RAN", "color: red", "NOSCRIPT-TEXT", "IFRAME-TEXT", "JSON-IN-SCRIPT"):
        assert hidden not in text
    assert outcome.title == f"{h.server.base}/page"
    assert outcome.details.status == 200
    assert outcome.details.content_type == "text/html"
    assert outcome.details.kind == "html"


async def test_html_as_text_and_as_raw_html(h: Harness) -> None:
    h.server.routes["/page"] = html()

    text = await h.local("/page", format="text")
    raw = await h.local("/page", format="html")

    assert "Welcome\n\nSome bold text and a relative link." in text.output
    assert "first\nsecond" in text.output
    assert "    return 42" in text.output
    assert "**" not in text.output
    assert "#" not in text.output
    for hidden in ("SCRIPT-RAN", "color: red", "NOSCRIPT-TEXT", "IFRAME-TEXT"):
        assert hidden not in text.output
    assert raw.output == PAGE.decode()


async def test_the_accept_header_follows_the_format(h: Harness) -> None:
    h.server.routes["/page"] = html()

    await h.local("/page", format="markdown")
    await h.local("/page", format="html")

    assert h.server.seen[0].headers["accept"].startswith("text/markdown")
    assert h.server.seen[1].headers["accept"].startswith("text/html")
    assert h.server.seen[0].headers["user-agent"] == USER_AGENT


async def test_other_text_comes_back_as_it_is(h: Harness) -> None:
    body = '{"a": 1, "html": "<b>x</b>"}'
    h.server.routes["/data.json"] = Reply(
        headers={"Content-Type": "application/json"}, body=body.encode()
    )
    h.server.routes["/latin1.txt"] = Reply(
        headers={"Content-Type": "text/plain; charset=iso-8859-1"}, body="café".encode("latin-1")
    )
    h.server.routes["/untyped"] = Reply(body=b"just some text\n")

    assert (await h.local("/data.json")).output == body
    assert (await h.local("/latin1.txt")).output == "café"
    untyped = await h.local("/untyped")
    assert untyped.output == "just some text\n"
    assert untyped.details.kind == "text"


async def test_images_and_binaries_are_described_not_shown(h: Harness) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    h.server.routes["/logo.png"] = Reply(headers={"Content-Type": "image/png"}, body=png)
    h.server.routes["/doc.pdf"] = Reply(
        headers={"Content-Type": "application/pdf"}, body=b"%PDF-1.7\x00\x01"
    )
    h.server.routes["/blob"] = Reply(body=b"\x00\x01\x02binary")
    h.server.routes["/icon.svg"] = Reply(
        headers={"Content-Type": "image/svg+xml"}, body=b"<svg><circle r='1'/></svg>"
    )

    image = await h.local("/logo.png")
    pdf = await h.local("/doc.pdf")
    blob = await h.local("/blob")
    svg = await h.local("/icon.svg")

    assert not image.is_error
    assert image.output.startswith("Image fetched successfully (image/png, 1.0 KB)")
    assert "PNG" not in image.output
    assert pdf.output.startswith("Binary content (application/pdf, 10 bytes)")
    assert blob.details.kind == "binary"
    assert svg.output == "<svg><circle r='1'/></svg>"


# --- limits -------------------------------------------------------------------------------


async def test_a_declared_length_over_5_mb_is_refused(h: Harness) -> None:
    h.server.routes["/big"] = Reply(body=b"x" * 10, declared_length=MAX_RESPONSE_BYTES + 1)

    outcome = await h.local("/big")

    assert outcome.is_error
    assert outcome.output == TOO_LARGE


async def test_a_streamed_body_over_5_mb_is_cut_off(h: Harness) -> None:
    h.server.routes["/stream"] = Reply(body=b"y" * (1024 * 1024), chunks=6)
    h.server.routes["/fits"] = Reply(body=b"z" * (1024 * 1024), chunks=5)

    outcome = await h.local("/stream")
    fits = await h.local("/fits")

    assert outcome.is_error
    assert outcome.output == TOO_LARGE
    assert not fits.is_error
    assert fits.details.bytes == MAX_RESPONSE_BYTES


async def test_a_slow_server_times_out(h: Harness) -> None:
    h.server.routes["/slow"] = Reply(body=b"late", delay=10)

    started = time.monotonic()
    outcome = await h.local("/slow", timeout=0.3)

    assert outcome.is_error
    assert "timed out after 0.3 seconds" in outcome.output
    assert time.monotonic() - started < 10  # it never waited for the reply


def test_params_reject_bad_formats_and_timeouts() -> None:
    with pytest.raises(ValidationError):
        WebfetchParams.model_validate({"url": "http://x/", "format": "pdf"})
    with pytest.raises(ValidationError):
        WebfetchParams.model_validate({"url": "http://x/", "timeout": 0})
    with pytest.raises(ValidationError):
        WebfetchParams.model_validate({"url": "http://x/", "extra": 1})
    assert WebfetchParams(url="http://x/").format == "markdown"


# --- errors -------------------------------------------------------------------------------


async def test_http_errors_carry_a_short_excerpt(h: Harness) -> None:
    h.server.routes["/missing"] = Reply(
        status=404,
        reason="Not Found",
        headers={"Content-Type": "text/html"},
        body=b"<html><body><h1>Nothing here</h1><script>x()</script>" + b"w" * 3000 + b"</html>",
    )
    h.server.routes["/broken"] = Reply(status=500, reason="Internal Server Error")

    missing = await h.local("/missing")
    broken = await h.local("/broken")

    assert missing.is_error
    first, _, excerpt = missing.output.partition("\n\n")
    assert first == "Request failed with status code 404 (Not Found)"
    assert excerpt.startswith("Nothing here")
    assert "x()" not in excerpt
    assert len(excerpt) <= 501
    assert missing.details.status == 404
    assert broken.output == "Request failed with status code 500 (Internal Server Error)"


async def test_a_refused_connection_is_an_error(h: Harness) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]

    outcome = await h.fetch(
        f"http://127.0.0.1:{closed_port}/", allow_hosts=[f"127.0.0.1:{closed_port}"]
    )

    assert outcome.is_error
    assert outcome.output.startswith(f"Could not connect to http://127.0.0.1:{closed_port}")


async def test_a_cloudflare_challenge_is_retried_once_with_a_plain_user_agent(
    h: Harness,
) -> None:
    def challenge(seen: Seen) -> Reply:
        if seen.headers["user-agent"] == USER_AGENT:
            return Reply(status=403, reason="Forbidden", headers={"cf-mitigated": "challenge"})
        return Reply(body=b"past the challenge")

    h.server.routes["/cf"] = challenge

    outcome = await h.local("/cf")

    assert outcome.output == "past the challenge"
    assert [s.headers["user-agent"] for s in h.server.seen] == [USER_AGENT, "lsp-agent"]


# --- before the ask -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://example.com/x", "javascript:alert(1)", "example.com", ""],
)
async def test_non_http_schemes_are_refused_before_asking(h: Harness, url: str) -> None:
    outcome = await h.fetch(url)

    assert outcome.is_error
    assert outcome.output == "URL must start with http:// or https://"
    assert h.ask.requests == []
    assert h.dns.calls == []
    assert h.network.connects == []


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://10.0.0.1/", "private"),
        ("http://169.254.169.254/latest/meta-data/", "cloud metadata"),
        ("http://[::1]:8080/", "loopback"),
        ("http://localhost:8080/", "loopback"),
        ("http://2130706433/", "Ambiguous host"),
        ("http://evil.test/", "evil.test resolves to 127.0.0.1"),
        ("http://mixed.test/", "mixed.test resolves to 10.0.0.5"),
        ("http://meta.test/", "cloud metadata"),
    ],
)
async def test_private_targets_are_refused_before_asking(h: Harness, url: str, reason: str) -> None:
    h.dns.table.update(
        {
            "evil.test": [["127.0.0.1"]],
            "mixed.test": [[PUBLIC_IP, "10.0.0.5"]],
            "meta.test": [["169.254.169.254"]],
        }
    )

    outcome = await h.fetch(url)

    assert outcome.is_error
    assert reason in outcome.output
    assert outcome.details.blocked is True
    assert h.ask.requests == []
    assert h.network.connects == []


async def test_the_permission_request(h: Harness) -> None:
    h.server.routes["/page"] = html()
    url = f"{h.server.base}/page?q=1"

    await h.local("/page?q=1")

    assert h.ask.requests == [
        PermissionRequest(
            permission="webfetch",
            patterns=(url,),
            always=(f"{h.server.base}/*",),
            title=f"Fetch {url}",
            subject=FetchSubject(url=url),
        )
    ]


async def test_a_refused_permission_sends_nothing(h: Harness, server: Server) -> None:
    h.ask = RecordingAsk(lambda _r: deny("no fetching today", stop_turn=True))
    server.routes["/page"] = html()

    outcome = await h.local("/page")

    assert outcome.is_error
    assert outcome.output == "no fetching today"
    assert outcome.stop_turn is True
    assert outcome.title == f"{server.base}/page"
    assert server.seen == []
    assert h.network.connects == []


# --- allow_hosts, redirects and pinning --------------------------------------------------


async def test_allow_hosts_admit_the_local_server_by_name(h: Harness) -> None:
    h.dns.table["test.local"] = [["127.0.0.1"]]
    h.server.routes["/hello"] = Reply(body=b"hello")

    outcome = await h.fetch(f"http://test.local:{h.server.port}/hello", allow_hosts=["Test.Local"])

    assert outcome.output == "hello"
    assert h.server.seen[0].headers["host"] == f"test.local:{h.server.port}"
    assert h.network.connects == [("127.0.0.1", h.server.port)]
    assert h.dns.calls == [("test.local", h.server.port)]
    assert h.ask.requests[0].always == (f"http://test.local:{h.server.port}/*",)


async def test_the_same_server_is_refused_by_a_name_that_is_not_allowed(h: Harness) -> None:
    h.dns.table["other.local"] = [["127.0.0.1"]]

    outcome = await h.fetch(f"http://other.local:{h.server.port}/", allow_hosts=["test.local"])

    assert outcome.is_error
    assert "other.local resolves to 127.0.0.1 (loopback)" in outcome.output
    assert h.network.connects == []


@pytest.mark.parametrize(
    "location",
    [
        "http://10.0.0.1/",
        "http://169.254.169.254/latest/meta-data/iam/",
        "http://[fd00::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://internal.test/admin",
        "http://0x0a000001/",
    ],
)
async def test_a_redirect_from_an_allowed_host_to_a_private_address_is_refused(
    h: Harness, location: str
) -> None:
    h.dns.table["internal.test"] = [["10.1.2.3"]]
    h.server.routes["/go"] = redirect(location)

    outcome = await h.local("/go")

    assert outcome.is_error
    assert outcome.output.startswith(f"Redirect from {h.server.base}/go to ")
    assert "refused" in outcome.output
    assert outcome.details.blocked is True
    assert h.network.connects == [("127.0.0.1", h.server.port)]
    assert h.network.private() == []
    assert [s.path for s in h.server.seen] == ["/go"]


async def test_redirects_are_followed_and_each_hop_is_checked(h: Harness) -> None:
    h.dns.table["public.test"] = [[PUBLIC_IP]]
    h.server.routes["/one"] = redirect("/two", status=301)
    h.server.routes["/two"] = redirect("http://public.test/three", status=307)
    h.server.routes["/three"] = Reply(body=b"arrived")

    outcome = await h.local("/one")

    assert outcome.output == "arrived"
    assert list(outcome.details.redirects) == [f"{h.server.base}/two", "http://public.test/three"]
    assert outcome.details.final_url == "http://public.test/three"
    assert len(h.ask.requests) == 1  # the redirects are not asked about again
    assert h.dns.calls == [("public.test", 80)]
    assert h.network.connects == [
        ("127.0.0.1", h.server.port),
        ("127.0.0.1", h.server.port),
        (PUBLIC_IP, 80),
    ]
    assert h.server.seen[-1].headers["host"] == "public.test"


async def test_more_than_five_redirects_are_refused(h: Harness) -> None:
    h.server.routes["/loop"] = redirect("/loop")

    outcome = await h.local("/loop")

    assert outcome.is_error
    assert outcome.output == "Too many redirects (more than 5)"
    assert len(h.server.seen) == 6


async def test_a_redirect_to_another_scheme_is_refused(h: Harness) -> None:
    h.server.routes["/ftp"] = redirect("ftp://example.com/file")

    outcome = await h.local("/ftp")

    assert outcome.is_error
    assert "URL must start with http:// or https://" in outcome.output
    assert h.dns.calls == []


@pytest.mark.parametrize(
    ("location", "message"),
    [
        ("http://[::1", "Invalid URL in location header"),
        ("http://exa mple/", "Invalid host name"),
        ("//10.0.0.1:99999/", "Port out of range"),
    ],
)
async def test_a_malformed_redirect_is_an_error(h: Harness, location: str, message: str) -> None:
    h.server.routes["/bad"] = redirect(location)

    outcome = await h.local("/bad")

    assert outcome.is_error
    assert message in outcome.output
    assert h.network.private() == []


async def test_a_slow_resolver_times_out_before_asking(h: Harness) -> None:
    async def slow(host: str, port: int) -> list[str]:
        await asyncio.sleep(5)
        return [PUBLIC_IP]

    tool = WebfetchTool(resolver=slow, transport=h.network)
    params = WebfetchParams(url="http://slow.test/", timeout=0.2)

    outcome = await tool.run(params, tool_context(h.ws, ask=h.ask))

    assert outcome.is_error
    assert outcome.output == "Timed out resolving the host after 0.2 seconds"
    assert h.ask.requests == []
    assert h.network.connects == []


async def test_dns_rebinding_cannot_swap_the_checked_address(h: Harness) -> None:
    # The first answer is public; every later one is loopback.
    h.dns.table["rebind.test"] = [[PUBLIC_IP], ["127.0.0.1"]]
    h.server.routes["/"] = Reply(body=b"public content")

    outcome = await h.fetch("http://rebind.test/")

    assert outcome.output == "public content"
    assert h.dns.calls == [("rebind.test", 80)]  # resolved once, by the guard
    assert h.network.connects == [(PUBLIC_IP, 80)]  # connected to exactly that address


async def test_dns_rebinding_on_a_redirect_is_caught_at_the_next_hop(h: Harness) -> None:
    h.dns.table["rebind.test"] = [[PUBLIC_IP], ["127.0.0.1"]]
    h.server.routes["/"] = redirect("/next")
    h.server.routes["/next"] = Reply(body=b"must not be fetched")

    outcome = await h.fetch("http://rebind.test/")

    assert outcome.is_error
    assert "rebind.test resolves to 127.0.0.1 (loopback)" in outcome.output
    assert h.dns.calls == [("rebind.test", 80), ("rebind.test", 80)]  # once per hop
    assert h.network.connects == [(PUBLIC_IP, 80)]
    assert [s.path for s in h.server.seen] == ["/"]


async def test_a_public_name_is_fetched_through_its_checked_address(h: Harness) -> None:
    h.dns.table["www.public.test"] = [[PUBLIC_IP]]
    h.server.routes["/page"] = html(b"<h2>Public</h2>")

    outcome = await h.fetch("http://WWW.Public.Test./page", format="markdown")

    assert outcome.output == "## Public"
    assert h.network.connects == [(PUBLIC_IP, 80)]
    assert h.ask.requests[0].always == ("http://www.public.test/*",)
