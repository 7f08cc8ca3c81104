"""The wire form of a conversation's messages, kept from one request to the next.

A step's request repeats every earlier message unchanged (``core/history``: a prefix, byte
for byte), and the core hands the same ``Message`` objects again (``FoldCache``). So each
message is converted to the provider's JSON and encoded once, when it first appears; a
request is its new messages plus a join of the kept encodings — byte for byte what encoding
the whole body would give, at a cost that follows what is new, not the session's length.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from lsp_agent.core.history import common_prefix
from lsp_agent.core.messages import Message

WireItems = list[dict[str, Any]]


def compact_json(value: Any) -> str:
    """The request encoding: compact, unicode as is (what ``request_body`` sends)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@attrs.frozen
class Wired:
    """One message's wire items (what it adds to the request's list) and their JSON."""

    items: tuple[dict[str, Any], ...]
    texts: tuple[str, ...]


class WireCache:
    """Wire items and their encodings per message, for the messages of the last few
    requests (a side request between two steps — a title, a compaction's summary, another
    session's step on the same provider — must not make the next step convert everything
    again). A request that starts with an earlier one's messages (the same objects) takes
    that prefix whole; only the rest is looked up or converted. The items are shared between
    requests: never mutate them (copy one to change it, as the cache marks do)."""

    def __init__(self, requests: int = 4) -> None:
        self._requests = requests
        self._kept: list[tuple[list[Message], list[Wired]]] = []
        """The messages of each of the last ``requests`` requests and their wire forms."""

    def wire(
        self, messages: Sequence[Message], convert: Callable[[Message], WireItems]
    ) -> list[Wired]:
        messages = list(messages)
        start, out = 0, []
        for kept, wired in reversed(self._kept):
            common = common_prefix(kept, messages)
            if common > start:
                start, out = common, wired[:common]
        for message in messages[start:]:
            out.append(self._find(message) or _wired(message, convert))
        self._kept = [*self._kept[1 - self._requests :], (messages, out)]
        return out

    def _find(self, message: Message) -> Wired | None:
        for kept, wired in reversed(self._kept):
            for index in range(len(kept) - 1, max(len(kept) - 8, -1), -1):  # a short tail
                if kept[index] is message:
                    return wired[index]
        return None


def _wired(message: Message, convert: Callable[[Message], WireItems]) -> Wired:
    items = convert(message)
    return Wired(tuple(items), tuple(compact_json(i) for i in items))


_SLOT = f"lsp-agent-list-{uuid.uuid4().hex}"


def encode_with_list(params: Mapping[str, Any], key: str, texts: Sequence[str]) -> bytes:
    """``compact_json(params)`` with ``params[key]`` the list whose items encode as
    ``texts``: the rest is encoded, the list joined in (the same bytes, in key order)."""
    text = compact_json({**params, key: _SLOT})
    return text.replace(f'"{_SLOT}"', "[" + ",".join(texts) + "]", 1).encode()
