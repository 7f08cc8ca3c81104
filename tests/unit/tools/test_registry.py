"""The registry: schemas the model sees, and every way a call can go wrong."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolCallPart, ToolKind
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.tools import call_context
from lsp_agent.tools.base import ToolRunContext, load_description
from lsp_agent.tools.registry import ToolRegistry, default_registry, tool_schema
from lsp_agent.workspace.boundary import WorkspaceBoundary
from lsp_agent.workspace.truncation import OutputLimits


class EchoParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str = Field(description="What to say back.")


class EchoTool:
    name = "echo"
    description = "Says the text back."
    kind: ToolKind = "other"
    permission = PermissionKind.READ
    mutates = False
    Params = EchoParams

    def __init__(self) -> None:
        self.contexts: list[ToolRunContext] = []

    def describe(self, params: EchoParams, roots: Sequence[str]) -> str:
        return f"Echo {params.text}"

    async def run(self, params: EchoParams, ctx: ToolRunContext) -> ToolOutcome:
        self.contexts.append(ctx)
        return ToolOutcome(output=params.text)


class BoomTool:
    name = "boom"
    description = "Always fails."
    kind: ToolKind = "other"
    permission = PermissionKind.READ
    mutates = False
    Params = EchoParams

    def __init__(self, error: BaseException) -> None:
        self.error = error

    def describe(self, params: EchoParams, roots: Sequence[str]) -> str:
        return "Boom"

    async def run(self, params: EchoParams, ctx: ToolRunContext) -> ToolOutcome:
        raise self.error


class WaitTool:
    name = "wait"
    description = "Waits until cancelled."
    kind: ToolKind = "other"
    permission = PermissionKind.READ
    mutates = False
    Params = EchoParams

    def __init__(self) -> None:
        self.started = asyncio.Event()

    def describe(self, params: EchoParams, roots: Sequence[str]) -> str:
        return "Wait"

    async def run(self, params: EchoParams, ctx: ToolRunContext) -> ToolOutcome:
        self.started.set()
        await asyncio.Event().wait()
        raise AssertionError("not reached")


def call(name: str, **arguments: Any) -> ToolCallPart:
    return ToolCallPart(tool_call_id="call_1", name=name, input=arguments)


def registry_of(*tools: Any, spill_root: Path, **options: Any) -> ToolRegistry:
    return ToolRegistry(
        list(tools),
        editor=RecordingEditor(),
        limits=OutputLimits(),
        spill_root=spill_root,
        **options,
    )


def builtin(spill_root: Path) -> ToolRegistry:
    return default_registry(RecordingEditor(), limits=OutputLimits(), spill_root=spill_root)


def all_keys(node: Any) -> set[str]:
    """Every dict key in a schema, except property names."""
    if isinstance(node, list):
        return set().union(*(all_keys(item) for item in node))
    if not isinstance(node, dict):
        return set()
    keys = set(node)
    for key, value in node.items():
        if key == "properties":
            keys |= set().union(*(all_keys(sub) for sub in value.values()))
        else:
            keys |= all_keys(value)
    return keys


def test_default_registry_offers_the_builtin_tools_with_small_clean_schemas(
    spill_root: Path,
) -> None:
    registry = builtin(spill_root)

    specs = registry.specs()
    assert [s.name for s in specs] == [
        "read", "list", "glob", "grep", "write", "edit", "apply_patch",
        "bash", "webfetch", "todowrite", "question", "skill", "task",
    ]  # fmt: skip
    spec = specs[0]
    assert spec.name == "read"
    assert spec.description == load_description("read")
    assert spec.description.strip()
    assert spec.input_schema == {
        "type": "object",
        "properties": {
            "file_path": {"type": "string", "description": spec_description(spec, "file_path")},
            "offset": {
                "type": "integer",
                "minimum": 1,
                "description": spec_description(spec, "offset"),
            },
            "limit": {
                "type": "integer",
                "minimum": 1,
                "description": spec_description(spec, "limit"),
            },
        },
        "required": ["file_path"],
        "additionalProperties": False,
    }
    assert "title" not in all_keys(spec.input_schema)
    assert all(spec_description(spec, name) for name in ("file_path", "offset", "limit"))


def spec_description(spec: Any, name: str) -> str:
    description: str = spec.input_schema["properties"][name]["description"]
    return description


def test_each_builtin_tool_declares_its_kind_and_whether_it_changes_files(
    spill_root: Path,
) -> None:
    specs = builtin(spill_root).specs()

    assert {s.name: (s.kind, s.mutates) for s in specs} == {
        "read": ("read", False),
        "list": ("search", False),
        "glob": ("search", False),
        "grep": ("search", False),
        "write": ("edit", True),
        "edit": ("edit", True),
        "apply_patch": ("edit", True),
        "bash": ("execute", True),
        "webfetch": ("fetch", False),
        "todowrite": ("other", False),
        "question": ("other", False),
        "skill": ("other", False),
        "task": ("other", True),
    }


def test_a_tools_declared_kind_and_mutates_are_on_its_spec(spill_root: Path) -> None:
    class FetchTool(EchoTool):
        name = "fetcher"
        kind: ToolKind = "fetch"
        mutates = True

    (spec,) = registry_of(FetchTool(), spill_root=spill_root).specs()

    assert (spec.kind, spec.mutates) == ("fetch", True)


def test_specs_are_built_once_and_stay_identical(spill_root: Path) -> None:
    registry = builtin(spill_root)

    assert registry.specs() is registry.specs()


def test_tool_schema_inlines_nested_models_and_keeps_a_property_named_title() -> None:
    class Item(BaseModel):
        title: str = Field(description="The item's title.")
        done: bool = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid")

        items: list[Item] = Field(description="The items.")
        first: Item | None = None

    schema = tool_schema(Params)

    assert "$defs" not in schema
    assert "$ref" not in all_keys(schema)
    assert "title" not in all_keys(schema)
    item = schema["properties"]["items"]["items"]
    assert item["type"] == "object"
    assert set(item["properties"]) == {"title", "done"}
    assert schema["properties"]["first"]["properties"] == item["properties"]


def test_tool_schema_refuses_recursive_models() -> None:
    class Node(BaseModel):
        children: list[Node] = []

    class Params(BaseModel):
        root: Node

    with pytest.raises(ValueError, match="recursive"):
        tool_schema(Params)


def test_two_tools_with_one_name_are_refused(spill_root: Path) -> None:
    with pytest.raises(ValueError, match="echo"):
        registry_of(EchoTool(), EchoTool(), spill_root=spill_root)


async def test_a_valid_call_runs_the_tool_with_boundary_and_editor(
    real_tmp: Path, spill_root: Path
) -> None:
    echo = EchoTool()
    editor = RecordingEditor()
    registry = ToolRegistry([echo], editor=editor, limits=OutputLimits(), spill_root=spill_root)

    outcome = await registry.execute(call("echo", text="hi"), call_context(real_tmp))

    assert outcome == ToolOutcome(output="hi")
    (ctx,) = echo.contexts
    assert ctx.editor is editor
    assert ctx.call == call_context(real_tmp)
    assert ctx.boundary.roots == (str(real_tmp),)
    assert ctx.extra_roots == (str(spill_root / "ses_1"),)
    assert registry.spill_dir("ses_1") == spill_root / "ses_1"
    assert not spill_root.exists()  # nothing was spilled


async def test_a_boundary_factory_replaces_the_default(tmp_path: Path, spill_root: Path) -> None:
    echo = EchoTool()
    boundary = WorkspaceBoundary([tmp_path])
    registry = registry_of(echo, spill_root=spill_root, boundary_factory=lambda ctx: boundary)

    await registry.execute(call("echo", text="hi"), call_context("/somewhere/else"))

    assert echo.contexts[0].boundary is boundary


async def test_an_unknown_tool_is_an_error_listing_the_available_ones(spill_root: Path) -> None:
    registry = registry_of(EchoTool(), BoomTool(RuntimeError()), spill_root=spill_root)

    outcome = await registry.execute(call("Reed", file_path="x"), call_context("/"))

    assert outcome.is_error
    assert outcome.output == "Unknown tool: Reed. Available tools: echo, boom."


@pytest.mark.parametrize(
    ("arguments", "detail"),
    [
        ({}, "file_path: Field required"),
        ({"file_path": "a", "offset": 0}, "offset: Input should be greater than or equal to 1"),
        ({"file_path": "a", "filePath": "a"}, "filePath: Extra inputs are not permitted"),
        ({"file_path": 7}, "file_path: Input should be a valid string"),
    ],
)
async def test_invalid_arguments_are_an_error_the_model_can_act_on(
    arguments: dict[str, Any], detail: str, spill_root: Path
) -> None:
    registry = builtin(spill_root)

    outcome = await registry.execute(call("read", **arguments), call_context("/"))

    assert outcome.is_error
    assert outcome.output == (
        f"The read tool was called with invalid arguments: {detail}. "
        "Please rewrite the input so it satisfies the expected schema."
    )


async def test_a_tool_that_raises_becomes_an_error_outcome(spill_root: Path) -> None:
    registry = registry_of(BoomTool(KeyError("missing thing")), spill_root=spill_root)

    outcome = await registry.execute(call("boom", text="x"), call_context("/"))

    assert outcome.is_error
    assert outcome.output == "The boom tool failed: KeyError: 'missing thing'"


async def test_cancelled_error_raised_by_a_tool_propagates(spill_root: Path) -> None:
    registry = registry_of(BoomTool(asyncio.CancelledError()), spill_root=spill_root)

    with pytest.raises(asyncio.CancelledError):
        await registry.execute(call("boom", text="x"), call_context("/"))


async def test_cancelling_a_running_call_propagates(spill_root: Path) -> None:
    wait = WaitTool()
    registry = registry_of(wait, spill_root=spill_root)
    task = asyncio.create_task(registry.execute(call("wait", text="x"), call_context("/")))
    await wait.started.wait()

    task.cancel()

    with pytest.raises(asyncio.CancelledError):
        await task


async def test_read_runs_through_the_registry_inside_the_call_roots(
    tmp_path: Path, spill_root: Path
) -> None:
    (tmp_path / "hello.txt").write_text("hello\n")
    registry = builtin(spill_root)

    inside = await registry.execute(call("read", file_path="hello.txt"), call_context(tmp_path))
    outside = await registry.execute(
        call("read", file_path="/etc/hostname"), call_context(tmp_path)
    )

    assert inside.output == "1: hello\n\n(End of file - total 1 lines)"
    assert inside.title == "hello.txt"
    assert outside.is_error
    assert "outside the workspace" in outside.output
