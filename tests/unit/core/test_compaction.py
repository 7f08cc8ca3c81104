"""Choosing what stays verbatim, and what the model sees after a compaction point."""

from __future__ import annotations

from lsp_agent.core.compaction.policy import CompactionPoint, model_messages, split_for_compaction
from lsp_agent.core.compaction.summary import SECTIONS, summary_prompt
from lsp_agent.core.history import fold
from lsp_agent.core.messages import TextPart
from lsp_agent.core.transcript import TextPartView, ToolCallView, TranscriptMessage


def user(mid: str, text: str, seq: int) -> TranscriptMessage:
    part = TextPartView(part_id=f"{mid}.0", type="text", text=text)
    return TranscriptMessage(
        message_id=mid, role="user", status="completed", parts=(part,), seq=seq
    )


def tool_step(mid: str, output: str, seq: int) -> TranscriptMessage:
    call = ToolCallView(
        tool_call_id=f"{mid}-c", tool_name="read", status="completed", input={}, output=output
    )
    return TranscriptMessage(
        message_id=mid, role="assistant", status="completed", parts=(call,), seq=seq
    )


VIEW = [user("u1", "start", 1), tool_step("a1", "x" * 4000, 2), tool_step("a2", "y" * 400, 3)]


def test_the_newest_messages_within_budget_stay_and_calls_keep_their_results() -> None:
    head, tail = split_for_compaction(VIEW, keep_recent_tokens=200)
    assert [m.message_id for m in head] == ["u1", "a1"]
    assert [m.message_id for m in tail] == ["a2"]


def test_at_least_the_newest_message_stays_verbatim() -> None:
    _, tail = split_for_compaction(VIEW, keep_recent_tokens=1)
    assert [m.message_id for m in tail] == ["a2"]


def test_after_a_compaction_point_the_model_sees_the_summary_then_the_kept_messages() -> None:
    point = CompactionPoint(summary="## Objective\nread", first_kept="a2", compacted_seq=10)
    later = user("u2", "more", 11)
    messages = model_messages([*VIEW, later], point)
    first = messages[0].parts[0]
    assert isinstance(first, TextPart)
    assert first.text.startswith("<conversation-checkpoint>")
    assert "## Objective\nread" in first.text
    assert messages[1:] == fold([VIEW[2], later])


def test_the_summary_prompt_has_the_sections_cuts_tool_output_and_carries_the_previous() -> None:
    prompt = summary_prompt(fold(VIEW[:2]), previous="## Objective\nold")
    for heading in SECTIONS:
        assert heading in prompt
    assert "<previous-summary>\n## Objective\nold" in prompt
    assert "x" * 2000 in prompt
    assert "x" * 2001 not in prompt
