"""What a prompt's links and mentions attach at admission (``lsp_agent/mentions.py``)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from lsp_agent.core.attachments import AttachScope, FocusSelection, PromptFocus
from lsp_agent.core.diagnostics import ERROR, WARNING, Diagnostic, DiagnosticsCache
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.mentions import PromptExpansion
from lsp_agent.testing.editor import RecordingEditor

KEY = "sk-ant-api03-" + "x" * 40


def diag(line: int, message: str, severity: int, *, character: int = 0) -> Diagnostic:
    return Diagnostic(
        line=line,
        character=character,
        end_line=line,
        end_character=character + 1,
        message=message,
        severity=severity,
    )


def scope(ws: Path, focus: PromptFocus | None = None) -> AttachScope:
    return AttachScope(folder=str(ws), roots=(str(ws),), focus=focus)


def git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=ws,
        check=True,
        capture_output=True,
    )


async def test_diff_attaches_the_working_trees_changes_against_head_masked(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    git(ws, "init", "-q")
    git(ws, "add", "a.py")
    git(ws, "commit", "-q", "-m", "first")
    (ws / "a.py").write_text(f"x = 2\nKEY = '{KEY}'\n")
    expansion = PromptExpansion(RecordingEditor(), secrets=SecretFilter({"KEY": KEY}))

    [attached] = await expansion.expand([{"type": "mention", "name": "diff"}], scope(ws))

    assert attached["source"] == "#diff"
    assert "-x = 1\n+x = 2" in attached["text"]
    assert KEY not in attached["text"]
    assert "[redacted:" in attached["text"]


async def test_diff_outside_a_repository_says_so(ws: Path) -> None:
    [attached] = await PromptExpansion(RecordingEditor()).expand(
        [{"type": "mention", "name": "diff"}], scope(ws)
    )
    assert attached["text"] == "[#diff: not a git repository with a commit]"


async def test_a_link_with_a_range_attaches_those_lines_numbered(ws: Path, outside: Path) -> None:
    (ws / "a.py").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    linked = {
        "type": "resource_link",
        "uri": (ws / "a.py").as_uri(),
        "range": {"start": {"line": 2, "character": 0}, "end": {"line": 4, "character": 0}},
    }
    far = {"type": "resource_link", "uri": (outside / "secret.txt").as_uri()}

    first, second = await PromptExpansion(RecordingEditor()).expand([linked, far], scope(ws))

    lines = '<attached_lines path="a.py:3-4">\n3: line 3\n4: line 4\n</attached_lines>'
    assert first["text"] == lines
    assert "not attached: outside the workspace" in second["text"]
    assert "TOP-SECRET" not in second["text"]


async def test_a_link_whose_text_is_embedded_is_not_attached_again(ws: Path) -> None:
    (ws / "a.py").write_text("x = 1\n")
    uri = (ws / "a.py").as_uri()
    content: list[dict[str, Any]] = [
        {"type": "resource_link", "uri": uri},
        {"type": "resource", "uri": uri, "text": "x = 1"},
    ]
    assert await PromptExpansion(RecordingEditor()).expand(content, scope(ws)) == []


async def test_diagnostics_and_selection_mentions_use_the_editor_and_the_prompts_focus(
    ws: Path,
) -> None:
    a, b = str(ws / "a.py"), str(ws / "b.py")
    cache = DiagnosticsCache()
    cache.update(b, [diag(0, "unused", WARNING)])
    sent = diag(4, "undefined name", ERROR, character=2)
    focus = PromptFocus(
        selection=FocusSelection(path=a, start_line=1, end_line=2, text="two\nthree"),
        diagnostics={a: (sent,)},
    )
    expansion = PromptExpansion(RecordingEditor(diagnostics=cache))
    content = [
        {"type": "mention", "name": "diagnostics"},
        {"type": "mention", "name": "diagnostics", "uri": (ws / "b.py").as_uri()},
        {"type": "mention", "name": "selection"},
    ]

    everywhere, one_file, selection = await expansion.expand(content, scope(ws, focus))

    text = everywhere["text"]
    assert text.index('file="a.py"') < text.index('file="b.py"')  # errors first
    assert "ERROR [5:3] undefined name" in text
    assert "unused" in text
    assert "undefined name" not in one_file["text"]
    assert "unused" in one_file["text"]
    assert selection["text"] == '<selection path="a.py:2-3">\ntwo\nthree\n</selection>'


async def test_buffers_lists_the_open_files_and_which_are_unsaved(ws: Path) -> None:
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")
    editor = RecordingEditor(buffers={str(ws / "a.py"): "a = 1\n", str(ws / "b.py"): "b = 2\n\n"})

    [attached] = await PromptExpansion(editor).expand(
        [{"type": "mention", "name": "buffers"}], scope(ws)
    )

    assert attached["text"].splitlines() == [
        "[#buffers: the files open in the editor]",
        "a.py: 1 lines",
        "b.py: 2 lines (unsaved changes)",
    ]
