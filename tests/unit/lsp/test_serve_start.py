"""Issue 38 §4: ``serve`` answers ``initialize`` soon after a bare pygls server would. The
protocol's hundred-odd models are declared when the server is built, but each one's
validator is built when it is first used (``defer_build``): building all of them up front
was most of what ``serve`` added to pygls before it could answer. A fresh interpreter, so
nothing else built them."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json
from lsp_agent.lsp import protocol
from lsp_agent.lsp.features import build_server

build_server({})
models = [v for v in vars(protocol).values()
          if isinstance(v, type) and issubclass(v, protocol.Model) and v is not protocol.Model]
built = [m.__name__ for m in models if m.__pydantic_complete__]
print(json.dumps({"models": len(models), "built": built}))
"""


def test_building_the_server_builds_no_protocol_validator_it_does_not_use() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    seen = json.loads(done.stdout)
    assert seen["models"] > 50
    assert len(seen["built"]) <= 5, seen["built"]


def test_a_deferred_model_still_validates_and_dumps() -> None:
    from lsp_agent.lsp.protocol import ClientConfig, Model

    class Probe(Model):
        session_id: str

    assert Probe.model_validate({"sessionId": "ses_1"}).dump() == {"sessionId": "ses_1"}
    assert ClientConfig.model_validate({"model": "a/b", "other": 1}).model_extra == {"other": 1}
