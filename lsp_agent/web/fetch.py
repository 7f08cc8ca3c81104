"""The network half of ``webfetch`` (``tools/webfetch.py``): one approved fetch, its redirects
and its body, made readable. Imported on the first fetch: httpx and httpcore cost ~100 ms of
start-up that a session without a fetch never needs.
"""

from __future__ import annotations

import asyncio
import codecs
import ssl
from typing import Literal

import attrs
import httpcore
import httpx

from lsp_agent.core.tool_details import FetchDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.web.limits import (
    MAX_REDIRECTS,
    MAX_RESPONSE_BYTES,
    TOO_LARGE,
    USER_AGENT,
    Format,
)
from lsp_agent.web.netguard import Blocked, NetworkGuard, PinnedTransport, Target

ERROR_EXCERPT_CHARS = 500

FALLBACK_USER_AGENT = "lsp-agent"
"""Sent once more after a Cloudflare challenge (403 with ``cf-mitigated: challenge``)."""

ACCEPT: dict[Format, str] = {
    "markdown": "text/markdown;q=1.0, text/x-markdown;q=0.9, text/plain;q=0.8, "
    "text/html;q=0.7, */*;q=0.1",
    "text": "text/plain;q=1.0, text/markdown;q=0.9, text/html;q=0.8, */*;q=0.1",
    "html": "text/html;q=1.0, application/xhtml+xml;q=0.9, text/plain;q=0.8, "
    "text/markdown;q=0.7, */*;q=0.1",
}

_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
_TEXT_TYPES = frozenset(
    {"application/json", "application/xml", "application/javascript", "application/ecmascript"}
    | {"application/x-javascript", "application/yaml", "application/x-yaml", "application/toml"}
    | {"application/x-sh", "application/sql", "application/graphql", "application/x-ndjson"}
    | {"application/x-www-form-urlencoded", "image/svg+xml"}
)
_SNIFF_BYTES = 4096


def default_ssl_context() -> ssl.SSLContext:
    """The default TLS context (certificate checks on)."""
    return httpx.create_ssl_context()


@attrs.frozen(kw_only=True)
class _Response:
    url: str
    status: int
    reason: str
    content_type: str
    charset: str | None
    location: str | None
    cf_mitigated: str | None
    body: bytes


@attrs.define(kw_only=True)
class Fetch:
    """One call: the hops it made, and the outcome."""

    guard: NetworkGuard
    backend: httpcore.AsyncNetworkBackend | None
    ssl_context: ssl.SSLContext
    format: Format
    timeout: float
    url: str
    hops: list[str] = attrs.field(factory=list)

    async def run(self, target: Target) -> ToolOutcome:
        while True:
            self.hops.append(str(target.url))
            response = await self._hop(target)
            if isinstance(response, ToolOutcome):
                return response
            if response.status in _REDIRECTS and response.location is not None:
                if len(self.hops) > MAX_REDIRECTS:
                    return self.error(f"Too many redirects (more than {MAX_REDIRECTS})")
                try:
                    next_url = target.url.join(response.location)
                except httpx.InvalidURL as exc:
                    return self.error(f"Invalid redirect location {response.location!r}: {exc}")
                checked = await self.guard.check(str(next_url))
                if isinstance(checked, Blocked):
                    return self.error(
                        f"Redirect from {target.url} to {next_url} refused. {checked.reason}",
                        blocked=True,
                    )
                target = checked
                continue
            return await self._outcome(response)

    async def _hop(self, target: Target) -> _Response | ToolOutcome:
        """One request to one checked target, connecting only to its checked addresses."""
        transport = PinnedTransport(
            target.pins, network_backend=self.backend, ssl_context=self.ssl_context
        )
        try:
            async with httpx.AsyncClient(
                transport=transport,
                follow_redirects=False,
                trust_env=False,
                timeout=httpx.Timeout(self.timeout),
            ) as client:
                response = await self._get(client, target.url, USER_AGENT)
                if isinstance(response, _Response) and _challenged(response):
                    response = await self._get(client, target.url, FALLBACK_USER_AGENT)
                return response
        except httpx.TimeoutException:
            return self.error(f"Request timed out after {self.timeout:g} seconds")
        except httpx.ConnectError as exc:
            return self.error(f"Could not connect to {target.origin}: {_reason(exc)}")
        except httpx.HTTPError as exc:
            return self.error(f"Request to {target.url} failed: {_reason(exc)}")

    async def _get(
        self, client: httpx.AsyncClient, url: httpx.URL, user_agent: str
    ) -> _Response | ToolOutcome:
        headers = {
            "User-Agent": user_agent,
            "Accept": ACCEPT[self.format],
            "Accept-Language": "en-US,en;q=0.9",
        }
        async with client.stream("GET", url, headers=headers) as response:
            location = response.headers.get("location")
            is_redirect = response.status_code in _REDIRECTS and location is not None
            body = b""
            if not is_redirect:
                limit = MAX_RESPONSE_BYTES if response.status_code < 400 else _SNIFF_BYTES
                declared = response.headers.get("content-length", "")
                if response.status_code < 400 and declared.isdigit() and int(declared) > limit:
                    return self.error(TOO_LARGE, status=response.status_code)
                chunks: list[bytes] = []
                size = 0
                async for chunk in response.aiter_bytes():
                    chunks.append(chunk)
                    size += len(chunk)
                    if size > limit:
                        if response.status_code < 400:
                            return self.error(TOO_LARGE, status=response.status_code)
                        break
                body = b"".join(chunks)
            media_type = response.headers.get("content-type", "").partition(";")[0]
            return _Response(
                url=str(response.url),
                status=response.status_code,
                reason=response.reason_phrase,
                content_type=media_type.strip().lower(),
                charset=response.charset_encoding,
                location=location,
                cf_mitigated=response.headers.get("cf-mitigated"),
                body=body,
            )

    async def _outcome(self, response: _Response) -> ToolOutcome:
        if response.status >= 400:
            excerpt = (await asyncio.to_thread(_readable, response, "text")).strip()
            excerpt = excerpt[:ERROR_EXCERPT_CHARS] + (
                "…" if len(excerpt) > ERROR_EXCERPT_CHARS else ""
            )
            message = f"Request failed with status code {response.status}"
            if response.reason:
                message += f" ({response.reason})"
            return self.error(
                f"{message}\n\n{excerpt}" if excerpt else message, status=response.status
            )
        kind = _kind(response)
        size = len(response.body)
        shown = response.content_type or "unknown type"
        if kind == "image":
            output = f"Image fetched successfully ({shown}, {_size(size)}); it is not shown here."
        elif kind == "binary":
            output = f"Binary content ({shown}, {_size(size)}) was fetched; it is not shown here."
        else:
            output = await asyncio.to_thread(_readable, response, self.format)
            if not output.strip():
                output = "(The response body is empty.)"
        return ToolOutcome(
            output=output,
            title=self.url,
            details=attrs.evolve(
                self._details(),
                status=response.status,
                content_type=response.content_type,
                bytes=size,
                kind=kind,
            ),
        )

    def error(
        self, message: str, *, blocked: bool = False, status: int | None = None
    ) -> ToolOutcome:
        details = attrs.evolve(self._details(), blocked=blocked, status=status)
        return ToolOutcome(output=message, is_error=True, title=self.url, details=details)

    def _details(self) -> FetchDetails:
        return FetchDetails(
            final_url=self.hops[-1] if self.hops else self.url, redirects=tuple(self.hops[1:])
        )


def _challenged(response: _Response) -> bool:
    return response.status == 403 and (response.cf_mitigated or "").lower() == "challenge"


def _kind(response: _Response) -> Literal["html", "text", "image", "binary"]:
    media = response.content_type
    if media in _HTML_TYPES:
        return "html"
    if media.startswith("image/") and media != "image/svg+xml":
        return "image"
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml")):
        return "text"
    if media and media != "application/octet-stream":
        return "binary"
    sample = response.body[:_SNIFF_BYTES]
    if b"\0" in sample:
        return "binary"
    if sample.lstrip()[:15].lower().startswith((b"<!doctype html", b"<html")):
        return "html"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(sample) - 4:  # not just a character cut at the sample's end
            return "binary"
    return "text"


def _readable(response: _Response, format: Format) -> str:
    """The body as the model reads it (runs in a worker thread: HTML parsing is slow)."""
    if _kind(response) != "html":
        return response.body.decode(_codec(response.charset), errors="replace")
    # Imported here: the HTML parser costs start-up time every run that never fetches a page.
    from lsp_agent.web.html_convert import decode_html, html_to_markdown, html_to_text

    html = decode_html(response.body, response.charset)
    if format == "html":
        return html
    if format == "text":
        return html_to_text(html)
    return html_to_markdown(html, base_url=response.url)


def _codec(charset: str | None) -> str:
    if charset:
        try:
            return codecs.lookup(charset).name
        except LookupError:
            pass
    return "utf-8"


def _size(size: int) -> str:
    if size < 1024:
        return f"{size} bytes"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _reason(exc: BaseException) -> str:
    return str(exc).strip() or type(exc).__name__
