"""The ``webfetch`` tool: one URL, as Markdown, plain text or raw HTML.

Order of checks: the scheme (http/https only) and the network guard (``netguard.py``: the host
is resolved once and every address must be public, unless ``webfetch.allow_hosts`` names the
host) come before the permission ask, so a refused URL never reaches the user, let alone the
network. Once approved, the request connects only to the addresses the guard checked (DNS
rebinding cannot swap them). Redirects are followed by hand, at most five, and each target is
checked by the guard again (but not asked about again: the user approved the requested URL).

The response may be at most 5 MB (the ``Content-Length`` and the streamed body are both
checked). HTML is converted (``html_convert.py``); other text comes back as it is; images and
other binary bodies are described, not shown. Output limits are the registry's business.
The network half (``web/fetch.py``, with httpx) is imported on the first fetch.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest, literal
from lsp_agent.core.permission.subjects import FetchSubject
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import FetchDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, load_description, one_line_title, refusal
from lsp_agent.web.limits import (
    DEFAULT_TIMEOUT,
    MAX_REDIRECTS,
    MAX_RESPONSE_BYTES,
    MAX_TIMEOUT,
    USER_AGENT,
    Format,
)

if TYPE_CHECKING:  # httpx, httpcore and the guard load on the first fetch, not at start-up
    import httpcore

    from lsp_agent.web.netguard import NetworkGuard, Resolver

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_REDIRECTS",
    "MAX_RESPONSE_BYTES",
    "MAX_TIMEOUT",
    "USER_AGENT",
    "WebfetchParams",
    "WebfetchTool",
]

SCHEME_ERROR = "URL must start with http:// or https://"


class WebfetchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    url: str = Field(description="The URL to fetch: http:// or https:// only.")
    format: Format = Field(
        default="markdown",
        description="How to return the content: markdown (default), text, or html.",
    )
    timeout: float | None = Field(
        default=None,
        gt=0,
        description=f"Timeout in seconds (default {DEFAULT_TIMEOUT:g}, at most {MAX_TIMEOUT:g}).",
    )


class WebfetchTool:
    """Implements ``Tool[WebfetchParams]``.

    ``allow_hosts`` are the ``webfetch.allow_hosts`` entries; ``resolver`` replaces the system
    resolver (``(host, port) -> addresses``); ``transport`` is the network backend the pinned
    connections are made through (default: httpcore's anyio backend) — tests pass one that
    records every address it is asked to connect to.
    """

    name = "webfetch"
    kind: ToolKind = "fetch"
    permission = PermissionKind.WEBFETCH
    mutates = False
    Params = WebfetchParams

    def __init__(
        self,
        *,
        allow_hosts: Sequence[str] = (),
        resolver: Resolver | None = None,
        transport: httpcore.AsyncNetworkBackend | None = None,
    ) -> None:
        self.description = load_description(self.name)
        self._allow_hosts = tuple(allow_hosts)
        self._resolver = resolver
        self._guard: NetworkGuard | None = None
        self._backend = transport
        self._ssl_context: ssl.SSLContext | None = None

    def describe(self, params: WebfetchParams, roots: Sequence[str]) -> str:
        return one_line_title(f"Fetch {params.url}")

    async def run(self, params: WebfetchParams, ctx: ToolRunContext) -> ToolOutcome:
        url = params.url.strip()
        if not url.lower().startswith(("http://", "https://")):
            return _error(SCHEME_ERROR, url=url)
        timeout = min(params.timeout or DEFAULT_TIMEOUT, MAX_TIMEOUT)
        from lsp_agent.web import fetch as network  # httpx: ~100 ms of every start-up
        from lsp_agent.web.netguard import Blocked, NetworkGuard

        if self._guard is None:
            self._guard = NetworkGuard(allow_hosts=self._allow_hosts, resolver=self._resolver)
        try:
            async with asyncio.timeout(timeout):
                target = await self._guard.check(url)
        except TimeoutError:
            return _error(f"Timed out resolving the host after {timeout:g} seconds", url=url)
        if isinstance(target, Blocked):
            return _error(target.reason, url=url, blocked=True)
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission,
                patterns=(url,),
                always=(f"{literal(target.origin)}/*",),
                title=f"Fetch {url}",
                subject=FetchSubject(url=url),
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=url)
        if self._ssl_context is None:  # made once: loading the certificates is slow
            self._ssl_context = network.default_ssl_context()
        fetch = network.Fetch(
            guard=self._guard,
            backend=self._backend,
            ssl_context=self._ssl_context,
            format=params.format,
            timeout=timeout,
            url=url,
        )
        try:
            async with asyncio.timeout(timeout):
                return await fetch.run(target)
        except TimeoutError:
            return fetch.error(f"Request timed out after {timeout:g} seconds")


def _error(message: str, *, url: str, blocked: bool = False) -> ToolOutcome:
    details = FetchDetails(final_url=url, blocked=blocked)
    return ToolOutcome(output=message, is_error=True, title=url, details=details)
