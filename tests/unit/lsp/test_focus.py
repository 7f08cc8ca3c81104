"""A prompt's ``context`` as the "Editor context" block (``lsp/focus.py``)."""

from __future__ import annotations

from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.lsp import focus
from lsp_agent.lsp import protocol as p

KEY = "sk-ant-api03-" + "y" * 40


def context(**fields: object) -> p.PromptContext:
    return p.PromptContext.model_validate(
        {"activeDocument": {"uri": "file:///w/src/a.py"}, **fields}
    )


def test_paths_are_relative_positions_one_based_and_the_selection_fenced() -> None:
    ctx = context(
        cursor={"line": 11, "character": 4},
        selection={"start": {"line": 11, "character": 0}, "end": {"line": 18, "character": 0}},
        selectedText="x = '```'\ny = 2\n",
    )

    [block] = focus.context_blocks(ctx, ["/w"], SecretFilter({}))

    assert block["text"].splitlines() == [
        "Editor context:",
        "Active file: src/a.py",
        "Cursor: line 12, column 5",
        "Selection: src/a.py:12-18",
        "````",
        "x = '```'",
        "y = 2",
        "````",
    ]


def test_secrets_are_masked_and_a_long_selection_is_cut() -> None:
    text = KEY + "\n" + "z" * (focus.MAX_SELECTION_CHARS + 10)
    ctx = context(
        selection={"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 3}},
        selectedText=text,
    )

    [block] = focus.context_blocks(ctx, ["/w"], SecretFilter({"KEY": KEY}))

    assert KEY not in block["text"]
    assert "more characters of the selection not shown" in block["text"]
    assert len(block["text"]) < focus.MAX_SELECTION_CHARS + 1000


def test_the_focus_for_mentions_carries_the_selection_and_the_prompts_diagnostics() -> None:
    diagnostic = {
        "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 1}},
        "message": "bad",
    }
    ctx = context(
        selection={"start": {"line": 1, "character": 0}, "end": {"line": 2, "character": 3}},
        selectedText="two\nthr",
        diagnostics=[diagnostic],
    )

    found = focus.prompt_focus(ctx)

    assert found is not None
    assert found.selection is not None
    assert (found.selection.start_line, found.selection.end_line) == (1, 2)
    assert [d.message for d in found.diagnostics["/w/src/a.py"]] == ["bad"]
    assert focus.prompt_focus(None) is None
    assert focus.context_blocks(p.PromptContext(), ["/w"], SecretFilter({})) == []
