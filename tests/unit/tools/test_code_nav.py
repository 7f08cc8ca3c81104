"""The code-navigation tools over the ``EditorQueries`` port (``tools/code_nav.py``,
``search/code_shapes.py``): symbols found by name, compact locations, the wall, failures."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_agent.config.settings import DEFAULT_PERMISSION_RULES
from lsp_agent.core.modes import mode_rules
from lsp_agent.core.permission.rules import Rule, decide
from lsp_agent.search.code_shapes import column_of, document_symbols, find_symbols, utf16_of
from lsp_agent.search.editor_queries import EditorQuery, QueryFailed
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.code_nav import (
    PositionParams,
    PositionTool,
    SymbolsParams,
    SymbolsTool,
    code_nav_tools,
)

SOURCE = "class Greeter:\n    def greet(self):\n        return '🙂' + hello()\n"


class FakeQueries:
    """Answers from a table by kind; records every query."""

    def __init__(self, kinds: set[str], answers: dict[str, Any]) -> None:
        self.kinds = frozenset(kinds)
        self._answers = answers
        self.asked: list[EditorQuery] = []

    async def query(self, session_id: str, request: EditorQuery) -> Any:
        self.asked.append(request)
        return self._answers.get(request.kind, [])


def span(line: int, start: int, end: int | None = None) -> dict[str, Any]:
    return {
        "start": {"line": line, "character": start},
        "end": {"line": line, "character": start if end is None else end},
    }


GREETER = {
    "name": "Greeter",
    "kind": 5,
    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 30}},
    "selectionRange": span(0, 6, 13),
    "children": [
        {
            "name": "greet",
            "kind": 6,
            "range": {"start": {"line": 1, "character": 4}, "end": {"line": 2, "character": 30}},
            "selectionRange": span(1, 8, 13),
        }
    ],
}


def test_document_symbols_flatten_the_tree_and_dotted_names_find_members() -> None:
    symbols = document_symbols([GREETER, {"bad": True}], "file:///w/a.py")
    assert [(s.qualified, s.kind, s.depth) for s in symbols] == [
        ("Greeter", "class", 0),
        ("Greeter.greet", "method", 1),
    ]
    assert [s.place.line for s in find_symbols(symbols, "Greeter.greet")] == [1]
    assert [s.place.line for s in find_symbols(symbols, "greet")] == [1]
    assert find_symbols(symbols, "missing") == []


def test_columns_convert_between_characters_and_utf16() -> None:
    line = "x = '🙂' + hello()"
    at = line.index("hello")
    assert utf16_of(line, at) == at + 1  # the emoji is two UTF-16 units
    assert column_of(line, at + 1) == at


async def test_references_by_symbol_print_compact_locations_and_count_the_outside(
    ws: Path, outside: Path
) -> None:
    a = ws / "a.py"
    a.write_text("stale disk text\n")
    hello_col = SOURCE.splitlines()[2].index("hello")
    queries = FakeQueries(
        {"references", "documentSymbols"},
        {
            "documentSymbols": [GREETER],
            "references": [
                {"uri": a.as_uri(), "range": span(1, 8)},
                {
                    "targetUri": a.as_uri(),
                    "targetRange": span(2, 0),
                    "targetSelectionRange": span(2, utf16_of(SOURCE.splitlines()[2], hello_col)),
                },
                {"uri": a.as_uri(), "range": span(1, 8)},  # a repeat
                {"uri": (outside / "secret.txt").as_uri(), "range": span(0, 0)},
                {"uri": "untitled:Untitled-1", "range": span(0, 0)},
            ],
        },
    )
    editor = RecordingEditor(buffers={str(a): SOURCE})  # unsaved text wins over the disk
    asks = RecordingAsk()
    ctx = tool_context(ws, editor=editor, ask=asks)
    tool = PositionTool("references", queries)

    outcome = await tool.run(PositionParams(file_path="a.py", symbol="Greeter.greet"), ctx)

    assert not outcome.is_error, outcome.output
    assert outcome.output.splitlines() == [
        "a.py:2:9: def greet(self):",
        f"a.py:3:{hello_col + 1}: return '🙂' + hello()",
        "+2 locations outside the workspace",
    ]
    assert "TOP-SECRET" not in outcome.output
    symbols_query, references_query = queries.asked
    assert symbols_query.kind == "documentSymbols"
    assert (references_query.line, references_query.character) == (1, 8)
    assert asks.permissions() == ["read"]


async def test_a_line_without_a_character_starts_at_its_first_non_blank(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    queries = FakeQueries({"definition"}, {"definition": []})
    tool = PositionTool("definition", queries)

    outcome = await tool.run(PositionParams(file_path="a.py", line=2), tool_context(ws))

    assert outcome.output == "No definitions found for a.py:2:5."
    assert (queries.asked[0].line, queries.asked[0].character) == (1, 4)


async def test_an_unknown_symbol_lists_the_files_symbols(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    queries = FakeQueries({"hover", "documentSymbols"}, {"documentSymbols": [GREETER]})
    tool = PositionTool("hover", queries)

    outcome = await tool.run(PositionParams(file_path="a.py", symbol="nope"), tool_context(ws))

    assert outcome.is_error
    assert outcome.output == "No symbol 'nope' in a.py. Its symbols: Greeter, Greeter.greet."


async def test_hover_prints_the_markup_and_a_failed_query_is_an_error_outcome(ws: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    hover = {"contents": {"kind": "markdown", "value": "```python\ndef greet(self)\n```"}}
    tool = PositionTool("hover", FakeQueries({"hover"}, {"hover": [hover]}))
    ok = await tool.run(PositionParams(file_path="a.py", line=2, character=9), tool_context(ws))
    assert ok.output == "```python\ndef greet(self)\n```"

    failing = PositionTool("hover", FakeQueries({"hover"}, {"hover": QueryFailed("timed out")}))
    failed = await failing.run(PositionParams(file_path="a.py", line=1), tool_context(ws))
    assert failed.is_error
    assert failed.output == "The hover query failed: timed out"


async def test_a_file_outside_the_workspace_is_never_asked_about(ws: Path, outside: Path) -> None:
    queries = FakeQueries({"definition"}, {})
    asks = RecordingAsk()
    tool = PositionTool("definition", queries)
    params = PositionParams(file_path=str(outside / "secret.txt"), line=1)

    outcome = await tool.run(params, tool_context(ws, ask=asks))

    assert outcome.is_error
    assert "outside the workspace" in outcome.output
    assert queries.asked == []
    assert asks.requests == []


async def test_symbols_of_a_file_and_of_the_workspace(ws: Path, outside: Path) -> None:
    (ws / "a.py").write_text(SOURCE)
    found = [
        {
            "name": "Greeter",
            "kind": 5,
            "location": {"uri": (ws / "a.py").as_uri(), "range": span(0, 6)},
        },
        {"name": "Greeter", "kind": 5, "location": {"uri": (outside / "x.py").as_uri()}},
    ]
    queries = FakeQueries(
        {"documentSymbols", "workspaceSymbols"},
        {"documentSymbols": [GREETER], "workspaceSymbols": found},
    )
    tool = SymbolsTool(queries)

    listed = await tool.run(SymbolsParams(file_path="a.py"), tool_context(ws))
    assert listed.output.splitlines() == ["1:7 class Greeter", "  2:9 method greet"]
    searched = await tool.run(SymbolsParams(query="Greet"), tool_context(ws))
    assert searched.output.splitlines() == [
        "a.py:1:7: class Greeter",
        "+1 location outside the workspace",
    ]
    neither = await tool.run(SymbolsParams(), tool_context(ws))
    assert neither.is_error


def test_the_tools_offered_follow_the_kinds_the_editor_answers() -> None:
    assert code_nav_tools(None) == []
    names = [t.name for t in code_nav_tools(FakeQueries({"references", "typeDefinition"}, {}))]
    assert names == ["references"]
    every = {"definition", "references", "hover", "implementation", "workspaceSymbols"}
    names = [t.name for t in code_nav_tools(FakeQueries(every, {}))]
    assert names == ["definition", "references", "hover", "implementation", "symbols"]


@pytest.mark.parametrize("mode", ["build", "plan", "explore"])
def test_every_mode_may_use_them_without_an_ask(mode: str) -> None:
    defaults = [
        Rule(permission=r.permission, pattern=r.pattern, action=r.action, source="default")
        for r in DEFAULT_PERMISSION_RULES
    ]
    assert decide("read", ["a.py"], [*defaults, *mode_rules(mode)]).action == "allow"
