"""The ``diagnostics`` tool, and the errors ``write``/``edit``/``apply_patch`` append after a
change (``tools/diagnostics.py``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from lsp_agent.config.settings import DEFAULT_PERMISSION_RULES
from lsp_agent.core.diagnostics import (
    ERROR,
    HINT,
    INFORMATION,
    WARNING,
    Diagnostic,
    DiagnosticsCache,
)
from lsp_agent.core.modes import mode_rules
from lsp_agent.core.permission.rules import Rule, decide, hidden
from lsp_agent.core.tool_details import DiagnosticsDetails
from lsp_agent.core.tooling import AskPermission, ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools import diagnostics as post_edit
from lsp_agent.tools.apply_patch import ApplyPatchParams, ApplyPatchTool
from lsp_agent.tools.diagnostics import (
    DiagnosticsParams,
    DiagnosticsTool,
    WatchedFile,
    watch_diagnostics,
)
from lsp_agent.tools.edit import EditParams, EditTool
from lsp_agent.tools.registry import default_registry
from lsp_agent.tools.write import WriteParams, WriteTool
from lsp_agent.workspace.files import FileLocks
from lsp_agent.workspace.truncation import OutputLimits


def diag(
    line: int, message: str = "bad", *, severity: int | None = ERROR, source: str | None = None
) -> Diagnostic:
    return Diagnostic(
        line=line,
        character=0,
        end_line=line,
        end_character=1,
        message=message,
        severity=severity,
        source=source,
    )


@pytest.fixture(autouse=True)
def quick_settle(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports that follow a fresh one are awaited for a moment; keep the tests quick."""
    monkeypatch.setattr(post_edit, "SETTLE_SECONDS", 0.02)


class LanguageServer(DiagnosticsCache):
    """A cache whose "language server" reports ``after_change[path]`` shortly after the tool
    starts waiting for it (so, after the change was committed). Records every wait."""

    def __init__(self, after_change: dict[str, Sequence[Diagnostic]] | None = None) -> None:
        super().__init__()
        self.after_change = dict(after_change or {})
        self.waits: list[tuple[str, int, float]] = []

    async def wait_newer(self, path: str, generation: int, timeout: float) -> bool:
        self.waits.append((path, generation, timeout))
        report = self.after_change.pop(path, None)
        if report is not None:
            asyncio.get_running_loop().call_later(0.01, self.update, path, report)
        return await super().wait_newer(path, generation, timeout)

    def waited_for(self) -> list[str]:
        return list(dict.fromkeys(path for path, _, _ in self.waits))


def editor_with(
    cache: DiagnosticsCache | None,
    *,
    forwards: bool = True,
    buffers: dict[str, str] | None = None,
) -> RecordingEditor:
    return RecordingEditor(diagnostics=cache, forwards_diagnostics=forwards, buffers=buffers)


async def diagnostics(
    ws: Path,
    file_path: str | None = None,
    *,
    cache: DiagnosticsCache | None,
    ask: AskPermission = allow_all,
) -> ToolOutcome:
    ctx = tool_context(ws, ask=ask, editor=editor_with(cache))
    return await DiagnosticsTool().run(DiagnosticsParams(file_path=file_path), ctx)


# --- the tool: one file -----------------------------------------------------------------


async def test_a_files_diagnostics_all_severities(ws: Path) -> None:
    cache = DiagnosticsCache()
    cache.update(
        str(ws / "a.py"),
        [diag(4, "unused", severity=HINT), diag(1, "undefined name 'x'", source="ruff")],
    )
    ask = RecordingAsk()

    outcome = await diagnostics(ws, "a.py", cache=cache, ask=ask)

    assert not outcome.is_error
    assert outcome.output == (
        "a.py: 1 error, 1 hint\n"
        '<diagnostics file="a.py">\n'
        "ERROR [2:1] undefined name 'x' (ruff)\n"
        "HINT [5:1] unused\n"
        "</diagnostics>"
    )
    assert outcome.details == DiagnosticsDetails(
        path=str(ws / "a.py"), counts={"error": 1, "hint": 1}
    )
    assert [(r.permission, r.patterns) for r in ask.requests] == [("diagnostics", ("a.py",))]


async def test_a_file_reported_clean_says_so(ws: Path) -> None:
    cache = DiagnosticsCache()
    cache.update(str(ws / "a.py"), [])

    outcome = await diagnostics(ws, str(ws / "a.py"), cache=cache)

    assert not outcome.is_error
    assert outcome.output == "No problems reported in a.py."


async def test_a_file_never_reported_on_says_no_language_server_did(ws: Path) -> None:
    cache = DiagnosticsCache()
    cache.update(str(ws / "other.py"), [diag(0)])

    outcome = await diagnostics(ws, "notes.txt", cache=cache)

    assert not outcome.is_error
    assert outcome.output.startswith("No language server has reported on notes.txt")
    assert outcome.details.known is False


async def test_a_file_outside_the_workspace_asks_and_a_refusal_stops_there(
    ws: Path, outside: Path
) -> None:
    cache = DiagnosticsCache()
    cache.update(str(outside / "secret.txt"), [diag(0, "TOP-SECRET-CONTENT")])
    ask = RecordingAsk(lambda r: deny("no") if r.permission == "external_directory" else deny())

    outcome = await diagnostics(ws, str(outside / "secret.txt"), cache=cache, ask=ask)

    assert outcome.is_error
    assert "outside the workspace" in outcome.output
    assert "TOP-SECRET-CONTENT" not in outcome.output
    assert [r.permission for r in ask.requests] == ["external_directory"]


async def test_a_refused_diagnostics_ask_is_an_error(ws: Path) -> None:
    cache = DiagnosticsCache()
    cache.update(str(ws / "a.py"), [diag(0, "secret message")])

    outcome = await diagnostics(ws, "a.py", cache=cache, ask=RecordingAsk(lambda _r: deny("no")))

    assert outcome.is_error
    assert "secret message" not in outcome.output


async def test_a_host_without_diagnostics_says_so(ws: Path) -> None:
    outcome = await diagnostics(ws, "a.py", cache=None)

    assert outcome.is_error
    assert "no diagnostics" in outcome.output


# --- the tool: the workspace ------------------------------------------------------------


async def test_the_workspace_lists_files_with_errors_first_and_leaves_out_the_rest(
    ws: Path, outside: Path
) -> None:
    cache = DiagnosticsCache()
    cache.update(str(ws / "warn.py"), [diag(0, "w", severity=WARNING)])
    cache.update(str(ws / "pkg" / "err.py"), [diag(3, "e1"), diag(1, "w", severity=WARNING)])
    cache.update(str(ws / "two.py"), [diag(0, "e"), diag(5, "e")])
    cache.update(str(ws / "hints.py"), [diag(0, "h", severity=HINT)])
    cache.update(str(ws / "clean.py"), [])
    cache.update(str(outside / "secret.txt"), [diag(0, "TOP-SECRET-CONTENT")])
    cache.update("untitled:Untitled-1", [diag(0, "scratch")])
    ask = RecordingAsk()

    outcome = await diagnostics(ws, cache=cache, ask=ask)

    assert outcome.output == (
        "Problems in 3 files: 3 errors, 2 warnings\n\n"
        '<diagnostics file="two.py">\nERROR [1:1] e\nERROR [6:1] e\n</diagnostics>\n\n'
        '<diagnostics file="pkg/err.py">\nWARNING [2:1] w\nERROR [4:1] e1\n</diagnostics>\n\n'
        '<diagnostics file="warn.py">\nWARNING [1:1] w\n</diagnostics>'
    )
    assert outcome.details == DiagnosticsDetails(files=3, counts={"error": 3, "warning": 2})
    assert [(r.permission, r.patterns) for r in ask.requests] == [("diagnostics", ("*",))]


async def test_the_workspace_view_is_capped_in_files(ws: Path) -> None:
    cache = DiagnosticsCache()
    for n in range(23):
        cache.update(str(ws / f"f{n:02}.py"), [diag(0, severity=INFORMATION)])

    outcome = await diagnostics(ws, cache=cache)

    assert outcome.output.startswith("Problems in 23 files: 23 info\n")
    assert outcome.output.count("<diagnostics ") == 20
    assert outcome.output.endswith("… and 3 more files with problems (3 info)")


async def test_a_workspace_without_problems_says_so(ws: Path) -> None:
    cache = DiagnosticsCache()
    cache.update(str(ws / "a.py"), [diag(0, severity=HINT)])

    outcome = await diagnostics(ws, cache=cache)

    assert not outcome.is_error
    assert outcome.output.startswith("No errors, warnings or info messages are reported")


# --- offered only with an editor ----------------------------------------------------------


def test_the_registry_offers_the_tool_only_with_editor_diagnostics(tmp_path: Path) -> None:
    plain = default_registry(RecordingEditor(), limits=OutputLimits(), spill_root=tmp_path)
    with_editor = default_registry(
        editor_with(DiagnosticsCache()),
        limits=OutputLimits(),
        spill_root=tmp_path,
        editor_diagnostics=True,
    )

    assert "diagnostics" not in plain.names
    assert "diagnostics" in with_editor.names
    spec = next(s for s in with_editor.specs() if s.name == "diagnostics")
    assert spec.input_schema.get("required", []) == []
    assert set(spec.input_schema["properties"]) == {"file_path"}


@pytest.mark.parametrize("mode", ["build", "plan", "explore", "general"])
def test_every_mode_may_read_diagnostics_by_default(mode: str) -> None:
    defaults = [
        Rule(permission=r.permission, pattern=r.pattern, action=r.action, source="default")
        for r in DEFAULT_PERMISSION_RULES
    ]
    rules = [*defaults, *mode_rules(mode)]

    assert decide("diagnostics", ["src/a.py"], rules).action == "allow"
    assert not hidden("diagnostics", rules)


# --- after a change -----------------------------------------------------------------------

FIX = "\n\nThis file has errors, please fix them:\n"


async def test_write_appends_the_errors_reported_after_it(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = 1\n")
    cache = LanguageServer({path: [diag(0, "undefined name 'y'"), diag(1, "w", severity=WARNING)]})
    cache.update(path, [diag(0, "old error")])
    editor = editor_with(cache)

    outcome = await WriteTool(FileLocks()).run(
        WriteParams(file_path="a.py", content="y\n"), tool_context(ws, ask=allow_all, editor=editor)
    )

    assert not outcome.is_error
    assert outcome.output == (
        "Wrote a.py (1 line).\nDiff: +1 -1 lines"
        + FIX
        + "<diagnostics file=\"a.py\">\nERROR [1:1] undefined name 'y'\n</diagnostics>"
    )
    assert cache.waited_for() == [path]


async def test_edit_of_an_open_document_appends_its_new_errors(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = 1\n")
    cache = LanguageServer({path: [diag(0, "undefined name 'z'", source="pyright")]})
    cache.update(path, [])  # reported clean: only an open document is worth waiting for
    editor = editor_with(cache, buffers={path: "x = 1\n"})

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="x = 1", new_string="x = z"),
        tool_context(ws, ask=allow_all, editor=editor),
    )

    assert editor.buffers[path] == "x = z\n"
    assert outcome.output == (
        "Edited a.py: 1 replacement.\nDiff: +1 -1 lines"
        + FIX
        + "<diagnostics file=\"a.py\">\nERROR [1:1] undefined name 'z' (pyright)\n</diagnostics>"
    )


async def test_nothing_is_appended_when_the_fresh_report_has_no_errors(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = y\n")
    cache = LanguageServer({path: [diag(0, "style", severity=WARNING)]})
    cache.update(path, [diag(0, "undefined name 'y'")])

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="x = y", new_string="x = 1"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )

    assert outcome.output == "Edited a.py: 1 replacement.\nDiff: +1 -1 lines"
    assert cache.waited_for() == [path]


async def test_at_most_twenty_errors_per_file(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x\n")
    cache = LanguageServer({path: [diag(n, f"e{n}") for n in range(25)]})
    cache.update(path, [diag(0)])

    outcome = await WriteTool(FileLocks()).run(
        WriteParams(file_path="a.py", content="y\n"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )

    assert outcome.output.count("\nERROR [") == 20
    assert "\n… and 5 more\n</diagnostics>" in outcome.output


async def test_apply_patch_waits_for_every_changed_file_together(ws: Path) -> None:
    (ws / "a.py").write_text("a\n")
    (ws / "b.py").write_text("b\n")
    (ws / "gone.py").write_text("g\n")
    a, b, gone = str(ws / "a.py"), str(ws / "b.py"), str(ws / "gone.py")
    cache = LanguageServer({a: [diag(0, "in a")], b: [diag(0, "in b")]})
    for path in (a, b, gone):
        cache.update(path, [diag(5, "before")])
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Update File: a.py",
            "-a",
            "+A",
            "*** Update File: b.py",
            "-b",
            "+B",
            "*** Delete File: gone.py",
            "*** End Patch",
        ]
    )

    outcome = await ApplyPatchTool(FileLocks()).run(
        ApplyPatchParams(patch=patch), tool_context(ws, ask=allow_all, editor=editor_with(cache))
    )

    assert outcome.output == (
        "Success. Updated the following files:\nM a.py\nM b.py\nD gone.py\n\n"
        "These files have errors, please fix them:\n"
        '<diagnostics file="a.py">\nERROR [1:1] in a\n</diagnostics>\n'
        '<diagnostics file="b.py">\nERROR [1:1] in b\n</diagnostics>'
    )
    assert sorted(cache.waited_for()) == [a, b]  # never the deleted file


async def test_the_files_are_awaited_together_and_stale_errors_are_marked() -> None:
    cache = LanguageServer()  # no report ever comes
    files = [WatchedFile(path=f"/ws/{n}.py", display=f"{n}.py", through_editor=True) for n in "ab"]
    for f in files:
        cache.update(f.path, [diag(0)])
    watch = watch_diagnostics(editor_with(cache), files)

    report = await watch.report(timeout=1.0, settle=0.01)

    # Both waits started at once on one budget: one after the other, the second would find
    # the deadline already passed (a budget <= 0).
    assert [path for path, _, _ in cache.waits] == ["/ws/a.py", "/ws/b.py"]
    assert all(0 < timeout <= 1.0 for _, _, timeout in cache.waits)
    assert report == (
        "\n\nErrors reported before this change (no language server reported again within "
        "1 s, so they may be out of date):\n"
        '<diagnostics file="a.py">\nERROR [1:1] bad\n</diagnostics>\n'
        '<diagnostics file="b.py">\nERROR [1:1] bad\n</diagnostics>'
    )


async def test_reports_that_follow_closely_are_taken_too() -> None:
    cache = DiagnosticsCache()
    path = "/ws/a.py"
    cache.update(path, [])
    watch = watch_diagnostics(
        editor_with(cache), [WatchedFile(path=path, display="a.py", through_editor=True)]
    )
    loop = asyncio.get_running_loop()
    loop.call_later(0.01, cache.update, path, [])  # the fast linter: clean
    loop.call_later(0.03, cache.update, path, [diag(2, "type error")])  # then the checker

    report = await watch.report(timeout=2.0, settle=0.2)

    assert report == FIX + '<diagnostics file="a.py">\nERROR [3:1] type error\n</diagnostics>'


@pytest.mark.parametrize(
    ("forwards", "reported", "open_in_editor"),
    [
        (False, [diag(0)], True),  # the client does not push diagnostics
        (True, None, True),  # no language server ever reported on the file
        (True, [], False),  # on disk, reported clean: maybe no server watches it now
    ],
)
async def test_no_wait_when_no_fresh_report_can_be_expected(
    ws: Path, forwards: bool, reported: list[Diagnostic] | None, open_in_editor: bool
) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = 1\n")
    cache = LanguageServer({path: [diag(0, "new error")]})
    if reported is not None:
        cache.update(path, reported)
    buffers = {path: "x = 1\n"} if open_in_editor else None
    editor = editor_with(cache, forwards=forwards, buffers=buffers)

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="x = 1", new_string="x = 2"),
        tool_context(ws, ask=allow_all, editor=editor),
    )

    assert not outcome.is_error
    assert outcome.output == "Edited a.py: 1 replacement.\nDiff: +1 -1 lines"
    assert cache.waits == []


async def test_no_wait_for_a_new_file_or_without_any_cache(ws: Path) -> None:
    cache = LanguageServer()
    await WriteTool(FileLocks()).run(
        WriteParams(file_path="new.py", content="x\n"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )
    outcome = await WriteTool(FileLocks()).run(
        WriteParams(file_path="other.py", content="x\n"),
        tool_context(ws, ask=allow_all, editor=editor_with(None)),
    )

    assert cache.waits == []
    assert outcome.output == "Wrote other.py (1 line).\nDiff: +1 -0 lines"


class BrokenCache(DiagnosticsCache):
    async def wait_newer(self, path: str, generation: int, timeout: float) -> bool:
        raise RuntimeError("boom")


async def test_a_diagnostics_failure_never_fails_the_tool(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x\n")
    cache = BrokenCache()
    cache.update(path, [diag(0)])

    outcome = await WriteTool(FileLocks()).run(
        WriteParams(file_path="a.py", content="y\n"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )

    assert not outcome.is_error
    assert outcome.output == "Wrote a.py (1 line).\nDiff: +1 -1 lines"
    assert (ws / "a.py").read_text() == "y\n"


async def test_a_failed_change_waits_for_nothing(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = 1\n")
    cache = LanguageServer({path: [diag(0)]})
    cache.update(path, [diag(0)])
    editor = RecordingEditor(
        buffers={path: "x = 1\n"},
        refuse_edits=True,
        diagnostics=cache,
        forwards_diagnostics=True,
    )

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="x = 1", new_string="x = 2"),
        tool_context(ws, ask=allow_all, editor=editor),
    )

    assert outcome.is_error
    assert cache.waits == []


# --- only what the change introduced (issue 37 §4) ----------------------------------------


async def test_an_older_error_moved_by_the_edit_is_counted_not_listed(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("import os\nx = y\n")
    old = diag(1, "undefined name 'y'")
    # After the edit a line is inserted on top: the old error moves to line 2 (0-based),
    # and the new line has an error of its own.
    cache = LanguageServer({path: [diag(0, "undefined name 'z'"), diag(2, "undefined name 'y'")]})
    cache.update(path, [old])

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="import os\n", new_string="import os\nz\n"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )

    assert outcome.output == (
        "Edited a.py: 1 replacement.\nDiff: +1 -0 lines"
        + FIX
        + "<diagnostics file=\"a.py\">\nERROR [1:1] undefined name 'z'\n</diagnostics>\n"
        "(1 older error in a.py unchanged by this change)"
    )


async def test_an_error_on_a_changed_line_is_new_even_with_the_same_message(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = y\n")
    cache = LanguageServer({path: [diag(0, "undefined name 'y'")]})
    cache.update(path, [diag(0, "undefined name 'y'")])

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="x = y", new_string="w = y"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )

    assert outcome.output.endswith(
        FIX + "<diagnostics file=\"a.py\">\nERROR [1:1] undefined name 'y'\n</diagnostics>"
    )


async def test_only_older_errors_left_says_no_new_errors(ws: Path) -> None:
    path = str(ws / "a.py")
    (ws / "a.py").write_text("x = y\nq = 1\n")
    before = [diag(0, "undefined name 'y'"), diag(1, "style", severity=WARNING)]
    cache = LanguageServer({path: [diag(0, "undefined name 'y'")]})
    cache.update(path, before)

    outcome = await EditTool(FileLocks()).run(
        EditParams(file_path="a.py", old_string="q = 1", new_string="q = 2"),
        tool_context(ws, ask=allow_all, editor=editor_with(cache)),
    )

    assert outcome.output == (
        "Edited a.py: 1 replacement.\nDiff: +1 -1 lines\n\n"
        "No new errors; 1 older error in a.py unchanged by this change."
    )


async def test_a_report_for_an_older_version_is_passed_over_for_the_edited_one() -> None:
    versions = {"/ws/a.py": 7}  # the open document after the edit
    cache = DiagnosticsCache(document_version=versions.get)
    path = "/ws/a.py"
    cache.update(path, [], version=6)
    watch = watch_diagnostics(
        editor_with(cache),
        [WatchedFile(path=path, display="a.py", through_editor=True, before="a\n", after="b\n")],
    )
    loop = asyncio.get_running_loop()
    # A late report for the version before the edit: stale, however new its arrival.
    loop.call_later(0.01, lambda: cache.update(path, [diag(0, "stale")], version=6))
    loop.call_later(0.05, lambda: cache.update(path, [diag(0, "fresh")], version=7))

    report = await watch.report(timeout=2.0, settle=0.02)

    assert report == FIX + '<diagnostics file="a.py">\nERROR [1:1] fresh\n</diagnostics>'


async def test_only_a_stale_report_is_marked_as_from_before_the_change() -> None:
    versions = {"/ws/a.py": 3}
    cache = DiagnosticsCache(document_version=versions.get)
    path = "/ws/a.py"
    cache.update(path, [], version=2)
    watch = watch_diagnostics(
        editor_with(cache), [WatchedFile(path=path, display="a.py", through_editor=True)]
    )
    asyncio.get_running_loop().call_later(
        0.01, lambda: cache.update(path, [diag(0, "stale")], version=2)
    )

    report = await watch.report(timeout=0.3, settle=0.02)

    assert report.startswith("\n\nErrors reported before this change")
    assert "stale" in report


def test_a_cache_tells_a_current_report_from_one_for_an_older_version() -> None:
    versions: dict[str, int] = {"/a": 5}
    cache = DiagnosticsCache(document_version=versions.get)
    cache.update("/a", [], version=4)
    assert not cache.is_current("/a")
    cache.update("/a", [], version=5)
    assert cache.is_current("/a")
    cache.update("/a", [])  # no version: the first report after a change is taken
    assert cache.is_current("/a")
    cache.update("/b", [], version=1)  # not open: nothing to compare with
    assert cache.is_current("/b")
    assert DiagnosticsCache().is_current("/a")
