"""``lsp-agent acp``: the process. stdin/stdout carry ACP (newline-delimited JSON-RPC), logs
go to stderr. The SDK's ``Connection`` does the JSON-RPC bookkeeping (ids, concurrent
handlers, answers to our requests) over our transport (``transport.py``); it runs until the
client closes stdin, then running turns are cancelled (recorded as such) and the store is
closed.
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
from lsp_agent.app import open_data_store

_log = logging.getLogger(__name__)


def serve(env: Mapping[str, str]) -> int:
    asyncio.run(_serve(env))
    return 0


async def _serve(env: Mapping[str, str]) -> None:
    reader, writer = await stdio_streams(limit=MAX_LINE_BYTES)
    store = await open_data_store(env)
    peer = AcpPeer()
    host = AcpHost(peer=peer, env=env, store=store)
    connection = Connection(Dispatcher(host), NdjsonStdio(reader, writer), listening=False)
    peer.connect(connection)
    try:
        await connection.main_loop()
    finally:
        try:
            await host.aclose()
        finally:
            await connection.close()
