"""Load: one ``lsp-agent serve``, 20 sessions x 20 steps at once (bench/load.py).

Asserts correctness only: every turn completes, each session's updates arrive in order with
no gap in ``seq``, every step ran its tool, and a full replay through ``agent/session/load``
is the live stream exactly. The latency figures are printed and written to a JSON file,
never asserted (regenerate the documented ones with ``python bench/reliability.py``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from bench import load

SESSIONS = 20
STEPS = 20


async def test_twenty_sessions_of_twenty_steps_complete_in_order_and_replay_exactly(
    tmp_path: Path,
) -> None:
    result = await load.run(SESSIONS, STEPS, timeout=240.0)
    assert len(result.sessions) == SESSIONS
    assert result.model_requests == SESSIONS * STEPS
    for run in result.sessions:
        assert run.stop_reason == "end_turn", run.session_id
        seqs = [u["seq"] for u in run.live]
        assert seqs == list(range(1, run.last_seq + 1)), run.session_id
        assert run.replayed == run.live, run.session_id
        bodies = [u["update"] for u in run.live]
        done = [
            b
            for b in bodies
            if b.get("sessionUpdate") == "tool_call_update" and b.get("status") == "completed"
        ]
        assert len(done) == STEPS - 1, run.session_id
        text = "".join(
            b.get("text", "") for b in bodies if b.get("sessionUpdate") == "agent_message_chunk"
        )
        tokens = [int(t) for t in re.findall(r"t(\d{2}) ", text)]
        assert tokens == list(range(STEPS - 1)), run.session_id  # the steps, in order
        assert text.endswith("done")
    assert result.missing == 0
    figures = load.figures(result, SESSIONS, STEPS)
    (tmp_path / "load.json").write_text(json.dumps(figures))
    print(json.dumps(figures))
