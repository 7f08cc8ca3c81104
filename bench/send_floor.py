"""The floor of a step: encode a request body as JSON and send it through the provider's SDK.

Run as ``python -m bench.send_floor PROVIDER BASE_URL BODY.json N``: sends the body N times,
each as the agent sends it (``json.dumps`` compact, then the SDK's ``post`` of the bytes,
streamed), and prints, per send, when it started (CLOCK_MONOTONIC, to compare with the fake
server's arrival stamp) and how long the encoding took. A fresh process, like the agent's.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any


async def send(provider: str, base_url: str, body: dict[str, Any], times: int) -> list[Any]:
    if provider == "anthropic":
        import anthropic

        client: Any = anthropic.AsyncAnthropic(api_key="bench-key", base_url=base_url,
                                               max_retries=0)  # fmt: skip
        path, stream_cls = "/v1/messages", anthropic.AsyncStream[object]
    else:
        import openai

        client = openai.AsyncOpenAI(api_key="bench-key", base_url=base_url, max_retries=0)
        path, stream_cls = "/chat/completions", openai.AsyncStream[object]
    out = []
    for _ in range(times):
        start = time.monotonic()
        content = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
        encoded = time.monotonic()
        response = await client.post(
            path,
            content=content,
            options={"headers": {"content-type": "application/json"}},
            cast_to=object,
            stream=True,
            stream_cls=stream_cls,
        )
        async with response:
            async for _event in response:
                pass
        out.append({"start": start, "encode_ms": (encoded - start) * 1000})
    return out


def main(argv: list[str]) -> int:
    provider, base_url, body_file, times = argv
    body = json.loads(Path(body_file).read_text())
    print(json.dumps(asyncio.run(send(provider, base_url, body, int(times)))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
