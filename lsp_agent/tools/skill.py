"""The ``skill`` tool: load one skill's instructions into the conversation.

Skills are found once, by ``skills.discover_skills``; the model knows them from the listing
in its context (names and one-line descriptions). Calling this tool asks the ``skill``
permission for that name, and only once it is granted is the ``SKILL.md`` body read (from
disk, so an edit made since discovery is seen) and shown, with the skill's folder and a few
of its other files.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest, literal
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import SkillDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.skills.catalog import LoadedSkill, SkillCatalog, SkillProblem, load_skill
from lsp_agent.tools.base import ToolRunContext, load_description, one_line_title, refusal

__all__ = ["SkillParams", "SkillTool"]


class SkillParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, description="The skill's name, exactly as listed.")


class SkillTool:
    """Implements ``Tool[SkillParams]`` over the skills found for this workspace."""

    name = "skill"
    kind: ToolKind = "other"
    permission = PermissionKind.SKILL
    mutates = False
    Params = SkillParams

    def __init__(self, catalog: SkillCatalog) -> None:
        self.description = load_description(self.name)
        self._catalog = catalog

    def describe(self, params: SkillParams, roots: Sequence[str]) -> str:
        return one_line_title(f"Load the skill {params.name.strip()}")

    async def run(self, params: SkillParams, ctx: ToolRunContext) -> ToolOutcome:
        name = params.name.strip()
        skill = self._catalog.get(name)
        if skill is None:
            available = ", ".join(self._catalog.names) or "none"
            return ToolOutcome(
                output=f'Skill "{name}" not found. Available skills: {available}',
                is_error=True,
                title=name,
            )
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission,
                patterns=(skill.name,),
                always=(literal(skill.name),),
                title=f"Load the skill {skill.name}",
                description=skill.description,
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=skill.name)
        loaded = await asyncio.to_thread(load_skill, skill)
        if isinstance(loaded, SkillProblem):
            return ToolOutcome(
                output=f'Skill "{skill.name}" could not be loaded: {loaded}',
                is_error=True,
                title=skill.name,
            )
        return ToolOutcome(
            output=_render(loaded),
            title=skill.name,
            details=SkillDetails(files=tuple(loaded.files)),
        )


def _render(loaded: LoadedSkill) -> str:
    skill = loaded.skill
    parts = [
        f'<skill name="{skill.name}">',
        loaded.body or "(This skill has no instructions beyond its description.)",
        "",
        f"Base directory for this skill: {skill.base_dir} (relative paths in it resolve there)",
    ]
    if loaded.files:
        sampled = " (some, not all)" if loaded.more_files else ""
        parts.append(f"Other files in this skill{sampled}:")
        parts.extend(f"- {path}" for path in loaded.files)
    parts.append("</skill>")
    return "\n".join(parts)
