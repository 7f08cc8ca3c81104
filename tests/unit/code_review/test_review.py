"""One agent review of a diff (``code_review/review.py``): findings come only through
``report_finding`` and are checked (inside the repository, a real line, a known severity);
``read_file`` reads only the files the change touched; the steps are bounded."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.code_review.findings import cli_line, has_errors
from lsp_agent.code_review.review import MAX_STEPS, ReviewFailed, ReviewResult, review_diff
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import ToolResultPart
from lsp_agent.core.stream_events import Finished, TextDelta, ToolCallEnded
from lsp_agent.testing.provider import ScriptedProvider

DIFF = """diff --git a/src/a.py b/src/a.py
--- a/src/a.py
+++ b/src/a.py
@@ -1 +1,2 @@
 x = 1
+y = x / 0
"""


@pytest.fixture
def root(tmp_path: Path) -> str:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x = 1\ny = x / 0\n")
    (tmp_path / "secret.txt").write_text("not for the model\n")
    return os.path.realpath(tmp_path)


def call(name: str, n: int = 1, **given: Any) -> list[Any]:
    return [
        ToolCallEnded(tool_call_id=f"c{n}", name=name, input=given),
        Finished(reason="tool_use"),
    ]


def answer(text: str) -> list[Any]:
    return [TextDelta(text=text), Finished(reason="end_turn")]


def results(provider: ScriptedProvider, request: int) -> list[ToolResultPart]:
    """The tool results the ``request``-th model call carried (its last message)."""
    parts = provider.requests[request].messages[-1].parts
    return [p for p in parts if isinstance(p, ToolResultPart)]


async def review(provider: ScriptedProvider, root: str, **extra: Any) -> ReviewResult:
    ids = iter(f"f{n}" for n in range(100))
    found = await review_diff(
        provider=provider, model="m", diff=DIFF, root=root, new_id=lambda: next(ids), **extra
    )
    assert isinstance(found, ReviewResult)
    return found


async def test_a_reported_finding_is_data_and_its_line_prints_like_a_compiler(root: str) -> None:
    provider = ScriptedProvider(
        [
            call(
                "report_finding",
                path="src/a.py",
                line=2,
                severity="error",
                message="divides by zero",
                related=[{"path": "src/a.py", "line": 1, "message": "x is 1"}],
            ),
            answer("One bug."),
        ]
    )
    result = await review(provider, root)

    [finding] = result.findings
    assert finding.path == os.path.join(root, "src", "a.py")
    assert (finding.line, finding.end_line, finding.severity) == (2, 2, "error")
    assert finding.related[0].line == 1
    assert result.summary == "One bug."
    assert result.files == (os.path.join(root, "src", "a.py"),)
    assert cli_line(finding, root) == "src/a.py:2: error: divides by zero"
    assert has_errors(result.findings)
    assert results(provider, 1)[0].output == "Recorded (f0)."
    assert [t.name for t in provider.requests[0].tools] == ["report_finding", "read_file"]


@pytest.mark.parametrize(
    ("given", "error"),
    [
        ({"path": "../outside.py", "line": 1, "severity": "error", "message": "m"}, "path:"),
        ({"path": "src/a.py", "line": 0, "severity": "error", "message": "m"}, "line:"),
        ({"path": "src/a.py", "line": 1, "severity": "fatal", "message": "m"}, "severity:"),
        ({"path": "src/a.py", "line": 1, "severity": "error", "message": " "}, "message:"),
    ],
)
async def test_a_bad_finding_is_refused_back_to_the_model(
    root: str, given: dict[str, Any], error: str
) -> None:
    provider = ScriptedProvider([call("report_finding", **given), answer("Done.")])
    result = await review(provider, root)

    assert result.findings == ()
    [refused] = results(provider, 1)
    assert refused.is_error
    assert refused.output.startswith(error)


async def test_read_file_reads_a_changed_file_only(root: str) -> None:
    provider = ScriptedProvider(
        [
            call("read_file", 1, path="src/a.py"),
            call("read_file", 2, path="secret.txt"),
            answer("Read."),
        ]
    )
    await review(provider, root)

    [read] = results(provider, 1)
    assert read.output == "    1\tx = 1\n    2\ty = x / 0"
    [refused] = results(provider, 2)
    assert refused.is_error
    assert "not for the model" not in refused.output


async def test_the_steps_are_bounded_and_the_last_sends_no_tool_choice(root: str) -> None:
    steps = [call("read_file", n, path="src/a.py") for n in range(MAX_STEPS - 1)]
    provider = ScriptedProvider([*steps, answer("Enough.")])
    result = await review(provider, root)

    assert len(provider.requests) == MAX_STEPS
    assert provider.requests[-1].tool_choice == "none"
    assert result.summary == "Enough."


async def test_a_model_failure_is_a_value(root: str) -> None:
    provider = ScriptedProvider([ProviderError("overloaded", kind="overloaded")])
    found = await review_diff(provider=provider, model="m", diff=DIFF, root=root, new_id=str)
    assert isinstance(found, ReviewFailed)
    assert "overloaded" in found.reason
    assert not found.asked_wrong


async def test_every_text_the_model_gets_passes_the_mask(root: str) -> None:
    provider = ScriptedProvider([call("read_file", path="src/a.py"), answer("Done.")])
    await review(provider, root, mask=lambda text: text.replace("x", "[masked]"))

    assert "[masked] = 1" in str(provider.requests[0].messages[0].parts[0])
    assert "x = 1" not in str(provider.requests[0].messages[0].parts[0])
    [read] = results(provider, 1)
    assert "[masked] = 1" in read.output
