"""The fake server on its own event loop in a background thread, for synchronous tests."""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator

from lsp_agent.testing.fake_llm.http_io import DEFAULT_MAX_BODY_BYTES, DEFAULT_REQUEST_TIMEOUT
from lsp_agent.testing.fake_llm.script import ScriptLike
from lsp_agent.testing.fake_llm.server import FakeLLMServer


@contextlib.contextmanager
def running_fake_llm(
    script: ScriptLike | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout: float = 10.0,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    record_delta_times: bool = False,
) -> Iterator[FakeLLMServer]:
    """Run a ``FakeLLMServer`` on its own event loop in a background thread.

    For synchronous tests, e.g. ones that run ``lsp-agent`` as a subprocess with
    ``ANTHROPIC_BASE_URL=server.anthropic_base_url`` and then inspect
    ``server.requests``.
    """
    server = FakeLLMServer(
        script,
        host=host,
        port=port,
        request_timeout=request_timeout,
        max_body_bytes=max_body_bytes,
        record_delta_times=record_delta_times,
    )
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(server.start())
            except BaseException as err:
                failure.append(err)
                return
            finally:
                ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
    thread.start()
    if not ready.wait(startup_timeout):
        raise RuntimeError("fake LLM server did not start in time")
    if failure:
        thread.join(startup_timeout)
        raise failure[0]
    try:
        yield server
    finally:
        future = asyncio.run_coroutine_threadsafe(server.stop(), loop)
        try:
            future.result(startup_timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(startup_timeout)
