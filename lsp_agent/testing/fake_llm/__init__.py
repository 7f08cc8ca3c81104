"""A scripted fake LLM server speaking the real Anthropic and OpenAI streaming wire formats.

The server is a minimal HTTP/1.1 server written on ``asyncio`` streams. It answers

* ``POST /v1/messages`` in the Anthropic Messages format (SSE when ``"stream": true``),
* ``POST /v1/chat/completions`` in the OpenAI Chat Completions format (SSE when
  ``"stream": true``),
* ``POST /v1/messages/count_tokens`` with a token estimate,

from a *script*: a list of turns, each describing one model response (text, thinking,
tool calls, an HTTP error, a dropped connection, delays...). Requests that offer no tools
are *side requests* (e.g. title generation): they get a fixed short answer and do not
consume the script. See ``docs/fake-llm.md`` for the script and log formats.

Control endpoints: ``GET /_health``, ``GET /_log`` (the request log as JSON) and
``POST /_script`` (replace the script at run time).

Use it in-process (``async with FakeLLMServer(script) as server``), from synchronous
tests (``with running_fake_llm(script) as server``, which runs the server's loop in a
background thread) or as a separate process
(``python -m lsp_agent.testing.fake_llm --script FILE.json``).

One module per job: the script and its checks (``script``), one turn rendered for either
wire format (``completion``), the two wire formats (``anthropic_wire``, ``openai_wire``),
scripted HTTP errors (``error_bodies``), the request log (``records``), the script's
progress and the log behind one lock (``progress``), a model request answered as scripted
(``responses``), HTTP on asyncio streams (``http_io``), the server (``server``), the thread
runner (``running``) and the command line (``cli``).
"""

from lsp_agent.testing.fake_llm.cli import main
from lsp_agent.testing.fake_llm.records import RequestRecord
from lsp_agent.testing.fake_llm.running import running_fake_llm
from lsp_agent.testing.fake_llm.script import (
    DEFAULT_SIDE_TEXT,
    FimAnswer,
    Inject,
    Script,
    ScriptError,
    StreamError,
    ToolCall,
    Turn,
    TurnUsage,
    load_script,
    parse_script,
)
from lsp_agent.testing.fake_llm.server import FakeLLMServer

__all__ = [
    "DEFAULT_SIDE_TEXT",
    "FakeLLMServer",
    "FimAnswer",
    "Inject",
    "RequestRecord",
    "Script",
    "ScriptError",
    "StreamError",
    "ToolCall",
    "Turn",
    "TurnUsage",
    "load_script",
    "main",
    "parse_script",
    "running_fake_llm",
]
