from __future__ import annotations

from lsp_agent.core.history import INTERRUPTED_RESULT, fold
from lsp_agent.core.messages import ReasoningPart, TextPart, ToolCallPart, ToolResultPart
from lsp_agent.core.transcript import TextPartView, ToolCallView, TranscriptMessage


def user(mid: str, text: str) -> TranscriptMessage:
    return TranscriptMessage(
        message_id=mid,
        role="user",
        status="completed",
        parts=(TextPartView(part_id=f"{mid}p", type="text", text=text),),
    )


def test_tool_calls_get_results_in_a_following_user_message() -> None:
    assistant = TranscriptMessage(
        message_id="m2",
        role="assistant",
        status="completed",
        parts=(
            TextPartView(part_id="p1", type="reasoning", text="hmm", signature="sig"),
            TextPartView(part_id="p2", type="text", text="Let me look."),
            ToolCallView(
                tool_call_id="t1",
                tool_name="read",
                status="completed",
                input={"file_path": "a"},
                output="1: x",
            ),
            ToolCallView(
                tool_call_id="t2", tool_name="read", status="failed", input={}, error="nope"
            ),
        ),
    )
    messages = fold([user("m1", "hi"), assistant, user("m3", "and?")])
    assert [m.role for m in messages] == ["user", "assistant", "user", "user"]
    assert messages[1].parts == (
        ReasoningPart(text="hmm", signature="sig"),
        TextPart(text="Let me look."),
        ToolCallPart(tool_call_id="t1", name="read", input={"file_path": "a"}),
        ToolCallPart(tool_call_id="t2", name="read", input={}),
    )
    assert messages[2].parts == (
        ToolResultPart(tool_call_id="t1", output="1: x"),
        ToolResultPart(tool_call_id="t2", output="nope", is_error=True),
    )
    assert messages[3].parts == (TextPart(text="and?"),)


def test_interrupted_text_is_not_sent_but_unfinished_calls_get_a_result() -> None:
    assistant = TranscriptMessage(
        message_id="m2",
        role="assistant",
        status="interrupted",
        parts=(
            TextPartView(part_id="p1", type="text", text="partial"),
            ToolCallView(tool_call_id="t1", tool_name="read", status="in_progress", input={}),
        ),
    )
    messages = fold([user("m1", "hi"), assistant])
    assert messages[1].parts == (ToolCallPart(tool_call_id="t1", name="read", input={}),)
    assert messages[2].parts == (
        ToolResultPart(tool_call_id="t1", output=INTERRUPTED_RESULT, is_error=True),
    )


def test_an_assistant_message_with_nothing_to_send_is_dropped_and_nothing_is_merged() -> None:
    assistant = TranscriptMessage(message_id="m2", role="assistant", status="failed", parts=())
    messages = fold([user("m1", "hi"), assistant, user("m3", "again")])
    assert [m.parts for m in messages] == [(TextPart(text="hi"),), (TextPart(text="again"),)]
