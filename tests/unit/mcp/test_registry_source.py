"""The registry's ``ToolSource`` port (what the MCP manager plugs into): tools offered after the
built-ins, the tool list a new tuple only when a source changed, calls routed by name, and
every outcome through the secret filter and the output limit."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsp_agent.core.messages import ToolCallPart, ToolSpec
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.tools import call_context
from lsp_agent.tools.registry import ToolRegistry, default_registry
from lsp_agent.workspace.truncation import OutputLimits

SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"


def _spec(name: str) -> ToolSpec:
    return ToolSpec(
        name=name,
        description=name,
        input_schema={"type": "object", "properties": {}},
        kind="other",
        mutates=True,
        permission=PermissionKind.MCP,
    )


class FakeSource:
    def __init__(self) -> None:
        self.tools: tuple[ToolSpec, ...] = (_spec("srv_say"),)
        self.outputs: dict[str, str] = {"srv_say": "said"}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return self.tools

    async def call(
        self, name: str, arguments: Mapping[str, Any], ctx: ToolCallContext
    ) -> ToolOutcome | None:
        if name == "srv_boom":
            raise RuntimeError("the source broke")
        if name not in self.outputs:
            return None
        self.calls.append((name, dict(arguments)))
        return ToolOutcome(output=self.outputs[name])


def _registry(tmp_path: Path, source: FakeSource, **limits: int) -> ToolRegistry:
    registry = default_registry(
        RecordingEditor(),
        limits=OutputLimits(**limits),
        spill_root=tmp_path / "spill",
        secrets=SecretFilter({"ANTHROPIC_API_KEY": SECRET}),
    )
    registry.add_source(source)
    return registry


def _call(name: str, **arguments: Any) -> ToolCallPart:
    return ToolCallPart(tool_call_id="call_1", name=name, input=arguments)


def test_source_tools_follow_the_built_ins_and_keep_their_tuple(tmp_path: Path) -> None:
    source = FakeSource()
    registry = _registry(tmp_path, source)
    first = registry.specs()
    assert [s.name for s in first] == [*registry.names, "srv_say"]
    assert registry.specs() is first
    source.tools = (*source.tools, _spec("srv_more"), _spec("read"))  # a built-in name: dropped
    changed = registry.specs()
    assert changed is not first
    assert [s.name for s in changed] == [*registry.names, "srv_say", "srv_more"]
    assert registry.specs() is changed


async def test_calls_route_to_the_source_through_filter_and_limit(tmp_path: Path) -> None:
    source = FakeSource()
    registry = _registry(tmp_path, source, max_lines=5, max_bytes=10_000)
    ctx = call_context(tmp_path)
    said = await registry.execute(_call("srv_say", loud=True), ctx)
    assert said.output == "said"
    assert source.calls == [("srv_say", {"loud": True})]

    source.outputs["srv_say"] = f"key {SECRET}\n" + "\n".join(f"line {n}" for n in range(50))
    long = await registry.execute(_call("srv_say"), ctx)
    assert SECRET not in long.output
    assert "line 25" not in long.output  # cut to a preview; the whole output is spilled
    assert "omitted" in long.output
    spilled = list((tmp_path / "spill").rglob("*"))
    [whole] = [p for p in spilled if p.is_file()]
    assert "line 49" in whole.read_text()
    assert SECRET not in whole.read_text()


async def test_a_failing_source_is_a_tool_error_and_an_unknown_name_too(tmp_path: Path) -> None:
    registry = _registry(tmp_path, FakeSource())
    ctx = call_context(tmp_path)
    boom = await registry.execute(_call("srv_boom"), ctx)
    assert boom.is_error
    assert "the source broke" in boom.output
    unknown = await registry.execute(_call("srv_nothing"), ctx)
    assert unknown.is_error
    assert "srv_say" in unknown.output  # the available tools are named, the source's too
