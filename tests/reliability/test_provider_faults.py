"""Provider faults through the fake LLM, end to end (``lsp-agent run`` as a process, the real
SDKs): each ends in a completed turn or a clear error, never a hang, never a tool run twice.

Tools that must run at most once append a line to ``log.txt`` with ``bash``; the file's line
count is the number of executions. Event positions in the fake's streams are listed in
``TEXT_EVENTS`` / ``TOOL_EVENTS`` (docs/fake-llm.md, "Wire details").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.fake_llm import running_fake_llm
from tests.reliability.conftest import (
    IDLE_TIMEOUT,
    Agent,
    fast_config,
    no_traceback,
    statuses,
    tool_calls,
    write_user_config,
)

BOTH = pytest.mark.parametrize("provider", ["anthropic", "openai"])
WORDS = "alpha beta gamma delta epsilon"
APPEND = {"name": "bash", "input": {"command": "echo ran >> log.txt"}}

# Where things are in the fake's stream of a five-word text turn / a one-call tool turn.
TEXT_EVENTS = {
    # message_start, ping, block_start, 5 deltas (3-7), block_stop, message_delta, message_stop
    "anthropic": {"after_two_words": 5, "first_delta": 3, "block_start": 2, "count": 11},
    # role chunk, 5 content chunks (1-5), finish chunk, usage chunk, [DONE]
    "openai": {"after_two_words": 3, "first_delta": 1, "count": 9},
}
TOOL_EVENTS = {
    # message_start, ping, block_start, "" delta, 3 fragments (4-6), block_stop, message_delta,
    # message_stop
    "anthropic": {"mid_arguments": 5, "call_complete": 8},
    # role chunk, call start, 3 fragments (2-4), finish chunk, usage chunk, [DONE]
    "openai": {"mid_arguments": 3, "call_complete": 6},
}


def runs(agent: Agent) -> int:
    log = agent.workspace / "log.txt"
    return len(log.read_text().splitlines()) if log.exists() else 0


def model_records(server: Any) -> list[Any]:
    return [r for r in server.requests if r.turn != "side"]


# -- rate limits and server errors -------------------------------------------------------


@BOTH
def test_a_storm_shorter_than_the_retries_completes_the_turn(agent: Agent, provider: str) -> None:
    script = [
        {
            "status": 429,
            "retry_after_ms": 5,
            "then": {"status": 503, "then": {"tool_calls": [APPEND]}},
        },
        {"text": "done"},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        records = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("done")
    assert [r.status for r in records] == [429, 503, 200, 200]
    assert records[0].body == records[1].body == records[2].body  # the same request re-sent
    assert runs(agent) == 1


@pytest.mark.parametrize(
    ("provider", "error"),
    [("anthropic", "rate_limit"), ("anthropic", "overloaded"), ("openai", "server_error")],
)
def test_a_storm_longer_than_the_retries_fails_with_a_clear_error(
    agent: Agent, provider: str, error: str
) -> None:
    script = [{"error": error, "times": 6, "retry_after_ms": 5}]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        records = model_records(server)
    assert result.returncode == 1
    assert len(records) == 3  # the first try and max_retries (2) retries, not one more
    expected = {
        "rate_limit": "rate limited",
        "overloaded": "the provider is overloaded",
        "server_error": "server error",
    }
    assert f"error: {expected[error]}" in result.stderr
    assert result.stderr.count("retrying at") == 2
    no_traceback(result.stderr)


@pytest.mark.parametrize(
    ("provider", "hint"),
    [("anthropic", {"retry_after": 0.4}), ("openai", {"retry_after_ms": 400})],
)
def test_retry_after_is_waited_for(agent: Agent, provider: str, hint: dict[str, float]) -> None:
    agent.configure(initial_delay=0.0)  # without the hint there would be no wait at all
    script = [{"status": 429, **hint, "then": {"text": "after the wait"}}]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        first, second = model_records(server)
    assert result.returncode == 0, result.stderr
    assert second.arrived_monotonic - first.ended_monotonic >= 0.4


def test_an_error_event_inside_the_stream_resends_the_request_once(agent: Agent) -> None:
    """Anthropic's ``overloaded_error`` event mid-answer: the partial answer is dropped and
    the same request goes once more (as for a dropped connection), for both wire formats."""
    for provider in ("anthropic", "openai"):
        script = [
            {"text": WORDS, "stream_error": {"after": 4, "type": "overloaded_error"}},
            {"text": WORDS},
        ]
        with running_fake_llm(script) as server:
            result = agent.run(server, provider, prompt=f"via {provider}")
            first, second = model_records(server)
        assert result.returncode == 0, (provider, result.stderr)
        assert result.stdout.strip().endswith(WORDS)
        assert first.body == second.body


# -- stalls ------------------------------------------------------------------------------


@BOTH
def test_a_stream_that_stalls_mid_text_times_out_and_is_sent_again(
    agent: Agent, provider: str
) -> None:
    script = [
        {"text": WORDS, "stall_after": TEXT_EVENTS[provider]["after_two_words"]},
        {"text": WORDS},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        first, second = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(WORDS)
    assert first.stalled
    assert first.error == "client disconnected"  # the agent gave up on it
    assert first.body == second.body
    assert second.arrived_monotonic - first.arrived_monotonic >= IDLE_TIMEOUT
    assert statuses(agent.session(result)) == [
        ("user", "completed"),
        ("assistant", "interrupted"),
        ("assistant", "completed"),
    ]


def test_a_stream_that_stalls_twice_fails_naming_the_timeout(agent: Agent) -> None:
    script = [{"text": WORDS, "stall_after": 5}] * 2
    with running_fake_llm(script) as server:
        result = agent.run(server, "anthropic")
        records = model_records(server)
    assert result.returncode == 1
    assert len(records) == 2
    assert "stalled" in result.stderr
    assert "retry.stream_idle_timeout" in result.stderr
    no_traceback(result.stderr)


@BOTH
def test_a_server_that_never_sends_an_event_is_retried_then_fails(
    agent: Agent, provider: str
) -> None:
    agent.configure(max_retries=1)
    # Headers then silence; then no headers at all (the answer is 30 s late).
    script = [{"text": WORDS, "stall_after": 0}, {"text": WORDS, "delay": 30}]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        records = model_records(server)
    assert result.returncode == 1
    assert len(records) == 2
    assert "did not answer" in result.stderr
    no_traceback(result.stderr)


# -- dropped connections -----------------------------------------------------------------


@BOTH
@pytest.mark.parametrize("where", ["mid_arguments", "call_complete"])
def test_a_drop_during_a_tool_call_never_runs_the_tool_twice(
    agent: Agent, provider: str, where: str
) -> None:
    script = [
        {"tool_calls": [APPEND], "drop_after": TOOL_EVENTS[provider][where]},
        {"tool_calls": [APPEND]},
        {"text": "done"},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        records = model_records(server)
    assert result.returncode == 0, result.stderr
    assert records[0].dropped
    assert records[0].body == records[1].body
    assert runs(agent) == 1
    session = agent.session(result)
    assert statuses(session) == [
        ("user", "completed"),
        ("assistant", "interrupted"),
        ("assistant", "completed"),
        ("assistant", "completed"),
    ]
    calls = [(c["toolName"], c["status"]) for c in tool_calls(session)]
    assert calls == [("bash", "cancelled"), ("bash", "completed")]


def test_a_drop_mid_text_twice_fails_and_runs_nothing(agent: Agent) -> None:
    script = [{"text": WORDS, "tool_calls": [APPEND], "drop_after": 5}] * 2
    with running_fake_llm(script) as server:
        result = agent.run(server, "openai")
    assert result.returncode == 1
    assert "broke off twice" in result.stderr
    no_traceback(result.stderr)
    assert runs(agent) == 0


# -- malformed streams -------------------------------------------------------------------


@BOTH
def test_lines_that_are_not_server_sent_events_are_ignored(agent: Agent, provider: str) -> None:
    garbage = [
        {"before": 2, "raw": "this line is not an SSE field\n\n"},
        {"before": 2, "raw": ": a comment, as proxies send to keep a connection alive\n\n"},
        {"before": 3, "raw": "event-ish line\nanother: unknown field\n\n"},
    ]
    with running_fake_llm([{"text": WORDS, "inject": garbage}]) as server:
        result = agent.run(server, provider)
        (record,) = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(WORDS)
    assert record.events_sent == TEXT_EVENTS[provider]["count"] + len(garbage)


TRUNCATED = {
    "anthropic": 'event: content_block_delta\ndata: {"type": "content_block_delta", "ind\n\n',
    "openai": 'data: {"id": "chatcmpl-fake", "object": "chat.completion.chu\n\n',
}


@BOTH
def test_a_truncated_json_event_resends_the_request_once(agent: Agent, provider: str) -> None:
    where = TEXT_EVENTS[provider]["after_two_words"]
    script = [
        {"text": WORDS, "inject": [{"before": where, "raw": TRUNCATED[provider]}]},
        {"text": WORDS},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        first, second = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(WORDS)
    assert first.body == second.body


@BOTH
def test_a_malformed_event_before_any_content_resends_the_request_once(
    agent: Agent, provider: str
) -> None:
    """Nothing had arrived yet, so nothing is lost, but the stream is broken all the same:
    sent once more (it used to fail the turn with the JSON parser's message)."""
    script = [
        {"text": WORDS, "inject": [{"before": 0, "raw": TRUNCATED[provider]}]},
        {"text": WORDS},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        first, second = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(WORDS)
    assert first.body == second.body


def test_a_text_delta_before_its_block_started_is_not_silently_lost(agent: Agent) -> None:
    """Anthropic events out of order: the response is malformed, so it is sent once more
    (the translator used to drop the orphan delta and answer with the text cut short)."""
    order = list(range(TEXT_EVENTS["anthropic"]["count"]))
    order[2], order[3] = order[3], order[2]  # the first delta before its content_block_start
    script = [{"text": WORDS, "event_order": order}, {"text": WORDS}]
    with running_fake_llm(script) as server:
        result = agent.run(server, "anthropic")
        records = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(WORDS)
    assert len(records) == 2


def test_a_tool_call_after_the_finish_chunk_is_never_left_pending(agent: Agent) -> None:
    """OpenAI chunks out of order (the call after ``finish_reason``): no call may stay
    pending in a completed message; the response is sent once more and the tool runs once."""
    # role, finish, call start, 3 fragments, usage, [DONE]
    script = [
        {"tool_calls": [APPEND], "event_order": [0, 5, 1, 2, 3, 4, 6, 7]},
        {"tool_calls": [APPEND]},
        {"text": "done"},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, "openai")
    assert result.returncode == 0, result.stderr
    assert runs(agent) == 1
    calls = [c["status"] for c in tool_calls(agent.session(result))]
    assert calls == ["cancelled", "completed"]


@pytest.mark.parametrize(
    ("provider", "kept"),
    [("anthropic", 10), ("openai", 6)],  # up to message_stop / up to the finish chunk
)
def test_a_stream_that_ends_before_its_final_event_is_sent_again(
    agent: Agent, provider: str, kept: int
) -> None:
    """The body ends cleanly but the response never said it was complete."""
    script = [{"text": WORDS, "event_order": list(range(kept))}, {"text": WORDS}]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        records = model_records(server)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith(WORDS)
    assert len(records) == 2


# -- what the model asks for -------------------------------------------------------------


def tool_results(body: dict[str, Any]) -> list[str]:
    """The tool results in a request body, as text, for both wire formats."""
    found: list[str] = []
    for message in body["messages"]:
        if message["role"] == "tool":
            found.append(str(message["content"]))
        elif isinstance(message.get("content"), list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    found.append(str(block.get("content", "")))
    return found


@pytest.mark.parametrize(
    ("provider", "raw", "said"),
    [
        ("anthropic", '{"command": "echo ran >> log.t', "not valid JSON"),
        ("openai", '{"command": "echo ran >> log.t', "not valid JSON"),
        ("openai", "[1, 2]", "JSON object"),
    ],
)
def test_invalid_tool_arguments_are_an_error_the_model_reads(
    agent: Agent, provider: str, raw: str, said: str
) -> None:
    script = [
        {"tool_calls": [{"name": "bash", "arguments_raw": raw}]},
        {"tool_calls": [APPEND]},
        {"text": "recovered"},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        bodies = server.model_bodies()
    assert result.returncode == 0, result.stderr
    assert said in tool_results(bodies[1])[-1]
    assert runs(agent) == 1  # the broken call ran nothing; the corrected one ran once
    assert [c["status"] for c in tool_calls(agent.session(result))] == ["failed", "completed"]


def test_an_unknown_tool_is_an_error_naming_the_available_ones(agent: Agent) -> None:
    provider = "openai"
    script = [
        {"tool_calls": [{"name": "frobnicate", "input": {"x": 1}}]},
        {"text": "sorry"},
    ]
    with running_fake_llm(script) as server:
        result = agent.run(server, provider)
        bodies = server.model_bodies()
    assert result.returncode == 0, result.stderr
    said = tool_results(bodies[1])[-1]
    assert "Unknown tool: frobnicate" in said
    assert "read" in said


def test_a_model_repeating_a_failing_call_trips_the_breaker(agent: Agent) -> None:
    missing = {"name": "read", "input": {"file_path": "missing.txt"}}
    script = [{"tool_calls": [missing]}] * 4 + [{"text": "I give up"}]
    with running_fake_llm(script) as server:
        result = agent.run(server, "anthropic")
        bodies = server.model_bodies()
    assert result.returncode == 0, result.stderr
    offered = [[t["name"] for t in body["tools"]] for body in bodies]
    assert all("read" in names for names in offered[:3])
    assert all("read" not in names for names in offered[3:])  # withheld after 3 failures
    results = tool_results(bodies[-1])
    assert "withheld for the rest of this turn" in results[2]
    assert "withheld" in results[3]
    assert len(bodies) == 5  # the turn went on to the model's answer


def test_a_model_that_never_stops_calling_tools_ends_at_max_steps(agent: Agent) -> None:
    (agent.workspace / "a.txt").write_text("a\n")
    read = {"name": "read", "input": {"file_path": "a.txt"}}
    script = [{"tool_calls": [read]}] * 4 + [{"text": "wrapped up"}]
    with running_fake_llm(script) as server:
        result = agent.run(server, "anthropic", "--max-steps", "5")
        bodies = server.model_bodies()
    assert result.returncode == 3, result.stderr
    assert len(bodies) == 5
    assert bodies[-1]["tool_choice"] == {"type": "none"}


# -- big outputs -------------------------------------------------------------------------


def test_a_ten_megabyte_output_is_spilled_with_bounded_memory(agent: Agent, tmp_path: Path) -> None:
    """The model gets a preview naming the spill file, the log stays small, and the agent's
    memory grows by a small multiple of the output (one copy or a few, never one per chunk)."""
    size = 10 * 1024 * 1024

    def bash(count: int) -> list[dict[str, Any]]:
        command = f"yes 'a line of output that goes on' | head -c {count}"
        return [{"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "ok"}]

    with running_fake_llm(bash(10)) as server:
        small, baseline = agent.run_measured(server, "anthropic")
    assert small.returncode == 0, small.stderr
    with running_fake_llm(bash(size)) as server:
        result, peak = agent.run_measured(server, "anthropic")
        bodies = server.model_bodies()
        sizes = [r.body_bytes for r in model_records(server)]
    assert result.returncode == 0, result.stderr
    said = tool_results(bodies[1])[-1]
    assert len(said) < 120_000
    files = [p for p in (tmp_path / "data" / "tool-output").rglob("*") if p.is_file()]
    assert len(files) == 1
    assert files[0].stat().st_size >= size
    assert files[0].name in said
    assert sizes[1] < 200_000
    database = tmp_path / "data" / "lsp-agent.db"
    assert database.stat().st_size < 2 * 1024 * 1024  # the output is not in the event log
    assert (peak - baseline) * 1024 < 8 * size, (baseline, peak)


def test_a_stalled_compaction_summary_times_out_and_the_turn_goes_on(agent: Agent) -> None:
    """The summary request of an automatic compaction is bounded by the idle timeout too: it
    fails (the compaction is skipped, as for any failed summary) and the turn goes on."""
    config = fast_config()
    config["providers"] = {
        "anthropic": {"models": {"claude-test": {"context_window": 6000, "max_output": 1000}}}
    }
    config["compaction"] = {"keep_recent_tokens": 1200}
    hidden = ("edit", "bash", "webfetch", "todowrite", "question", "skill", "task", "list")
    config["permission"] = {name: "deny" for name in (*hidden, "glob", "grep")}
    write_user_config(agent.home, config)
    for index in range(4):
        lines = "".join(f"big{index}.txt line {i} with some words to fill it\n" for i in range(110))
        (agent.workspace / f"big{index}.txt").write_text(lines)
    reads = [
        {"tool_calls": [{"name": "read", "input": {"file_path": f"big{i}.txt"}}]} for i in range(4)
    ]
    script = {"turns": [*reads, {"text": "done"}], "side_turn": {"text": "x", "stall_after": 0}}
    with running_fake_llm(script) as server:
        result = agent.run(server, "anthropic", "--json")
        summaries = [r for r in server.requests if r.turn == "side" and r.stream]
    assert result.returncode == 0, result.stderr
    assert summaries
    assert all(r.stalled for r in summaries)
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[-1]["update"].get("stopReason") == "end_turn"
    history = agent.cli("sessions", "history", lines[0]["sessionId"], "--json")
    events = json.loads(history.stdout)["events"]
    errors = [e["data"].get("error", "") for e in events if e["type"] == "compaction_ended"]
    assert errors
    assert all("retry.stream_idle_timeout" in error for error in errors), errors
