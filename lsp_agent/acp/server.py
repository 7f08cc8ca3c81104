"""``lsp-agent acp``: the process. stdin/stdout carry ACP (newline-delimited JSON-RPC), logs
go to stderr. The SDK's ``Connection`` does the JSON-RPC bookkeeping (ids, concurrent
handlers, answers to our requests) over our transport (``transport.py``); it runs until the
client closes stdin. Then, in this order: running turns are cancelled (each records its end),
the requests still being served finish and answer (``Dispatcher.drain``), the sessions' MCP
servers stop, and only then is the store closed (the runtime's order) — no request ever
meets a closed store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping

from acp.connection import Connection
from acp.stdio import stdio_streams

from lsp_agent.acp.dispatch import Dispatcher
from lsp_agent.acp.host import AcpHost
from lsp_agent.acp.peer import AcpPeer
from lsp_agent.acp.transport import MAX_LINE_BYTES, NdjsonStdio

_log = logging.getLogger(__name__)

DRAIN_WAIT = 20.0
"""How long the end of input waits for the requests still being served to answer."""


def serve(env: Mapping[str, str]) -> int:
    asyncio.run(_serve(env))
    return 0


async def _serve(env: Mapping[str, str]) -> None:
    reader, writer = await stdio_streams(limit=MAX_LINE_BYTES)
    peer = AcpPeer()
    host = await AcpHost.open(peer=peer, env=env)
    dispatcher = Dispatcher(host)
    connection = Connection(dispatcher, NdjsonStdio(reader, writer), listening=False)
    peer.connect(connection)
    try:
        await connection.main_loop()
    finally:
        try:
            await host.stop_turns()
            await dispatcher.drain(DRAIN_WAIT)
            await host.aclose()
        finally:
            await connection.close()
