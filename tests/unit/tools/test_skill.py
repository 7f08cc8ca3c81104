"""Skills: discovery in the project and user folders, the listing, and the skill tool."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.skills.catalog import (
    MAX_SKILL_BYTES,
    SkillCatalog,
    discover_skills,
    parse_skill,
)
from lsp_agent.testing.permissions import RecordingAsk, deny
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.skill import SkillParams, SkillTool


@pytest.fixture
def user_dir(ws: Path) -> Path:
    """lsp-agent's user config folder, beside the workspace."""
    folder = ws.parent / "config" / "lsp-agent"
    folder.mkdir(parents=True)
    return folder


def add_skill(base: Path, folder: str, text: str) -> Path:
    skill_dir = base / folder
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(text)
    return skill_dir


def project_skill(ws: Path, folder: str, text: str) -> Path:
    return add_skill(ws / ".lsp-agent" / "skills", folder, text)


def user_skill(user_dir: Path, folder: str, text: str) -> Path:
    return add_skill(user_dir / "skills", folder, text)


def skill_md(name: str | None, description: str, body: str = "Do the thing.") -> str:
    head = f"name: {name}\n" if name else ""
    return f"---\n{head}description: {description}\n---\n\n{body}\n"


# --- front matter -------------------------------------------------------------------------


def test_front_matter_gives_name_description_and_body() -> None:
    document = parse_skill(
        "---\n"
        "# a comment\n"
        'name: "release"\n'
        "description: 'Cut a release: bump, tag, changelog. It''s quick.'\n"
        "license: MIT\n"
        "---\n"
        "\n# Steps\n1. Bump\n"
    )

    assert not isinstance(document, str)
    assert document.name == "release"
    assert document.description == "Cut a release: bump, tag, changelog. It's quick."
    assert document.body == "# Steps\n1. Bump"


def test_multi_line_descriptions_become_one_line() -> None:
    folded = parse_skill("---\ndescription: >\n  first part\n  second part\n---\nbody")
    continued = parse_skill("---\ndescription: first part\n   second part\nname: x\n---\n")

    assert not isinstance(folded, str)
    assert not isinstance(continued, str)
    assert folded.description == "first part second part"
    assert (continued.description, continued.name) == ("first part second part", "x")


def test_crlf_endings_are_fine() -> None:
    document = parse_skill("---\r\nname: x\r\ndescription: d\r\n---\r\nbody\r\n")

    assert not isinstance(document, str)
    assert (document.name, document.description, document.body) == ("x", "d", "body")


def test_no_front_matter_means_no_description() -> None:
    document = parse_skill("# Just a body\n")

    assert not isinstance(document, str)
    assert (document.name, document.description, document.body) == (None, None, "# Just a body")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: x\ndescription: d\n", "the front matter has no closing `---` line"),
        ("---\nname: x\njust words\n---\n", "front matter line 3 is not `key: value`"),
    ],
)
def test_broken_front_matter_says_what_is_wrong(text: str, problem: str) -> None:
    assert parse_skill(text) == problem


# --- discovery ----------------------------------------------------------------------------


def test_project_and_user_skills_are_found_sorted_by_name(ws: Path, user_dir: Path) -> None:
    pdir = project_skill(ws, "release", skill_md("release", "Cut a release."))
    udir = user_skill(user_dir, "commit-style", skill_md(None, "How I write commits."))

    catalog = discover_skills([ws], user_dir)

    assert catalog.names == ("commit-style", "release")
    commit, release = catalog.skills
    assert (commit.source, commit.base_dir, commit.path) == (
        "user",
        str(udir),
        str(udir / "SKILL.md"),
    )
    assert (release.source, release.base_dir) == ("project", str(pdir))
    assert catalog.problems == ()


def test_the_name_defaults_to_the_folder(ws: Path) -> None:
    project_skill(ws, "lint-fix", skill_md(None, "Fix lint errors."))

    assert discover_skills([ws], None).names == ("lint-fix",)


def test_project_skills_win_over_user_skills(ws: Path, user_dir: Path) -> None:
    project_skill(ws, "release", skill_md("release", "The project's way."))
    user_skill(user_dir, "rel", skill_md("release", "My way."))

    catalog = discover_skills([ws], user_dir)

    assert [(s.name, s.description, s.source) for s in catalog.skills] == [
        ("release", "The project's way.", "project")
    ]
    assert catalog.problems == ()


def test_the_first_workspace_root_wins_and_the_duplicate_is_reported(tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    project_skill(first, "x", skill_md("x", "From a."))
    project_skill(second, "x", skill_md("x", "From b."))

    catalog = discover_skills([first, second], None)

    assert [s.description for s in catalog.skills] == ["From a."]
    (problem,) = catalog.problems
    assert problem.path == str(second / ".lsp-agent/skills/x/SKILL.md")
    assert "also defined in" in problem.reason


def test_bad_skills_are_skipped_with_a_reason(ws: Path, user_dir: Path) -> None:
    project_skill(ws, "good", skill_md("good", "Fine."))
    project_skill(ws, "no-description", "---\nname: no-description\n---\nbody\n")
    project_skill(ws, "unclosed", "---\nname: unclosed\ndescription: d\n")
    project_skill(ws, "bad-name", skill_md("has space", "d"))
    huge = project_skill(ws, "huge", skill_md("huge", "d"))
    (huge / "SKILL.md").write_text(skill_md("huge", "d", "x" * MAX_SKILL_BYTES))
    latin = user_skill(user_dir, "latin1", "")
    (latin / "SKILL.md").write_bytes(b"---\ndescription: caf\xe9\n---\n")

    catalog = discover_skills([ws], user_dir)

    assert catalog.names == ("good",)
    reasons = {Path(p.path).parent.name: p.reason for p in catalog.problems}
    assert reasons == {
        "bad-name": "invalid name 'has space' (letters, digits, '.', '_', '-'; at most 64)",
        "huge": "larger than 256 KB",
        "latin1": "not UTF-8 text",
        "no-description": "no description in the front matter",
        "unclosed": "the front matter has no closing `---` line",
    }


def test_folders_without_skill_md_and_missing_dirs_are_ignored(ws: Path, tmp_path: Path) -> None:
    (ws / ".lsp-agent" / "skills" / "empty").mkdir(parents=True)
    (ws / ".lsp-agent" / "skills" / "README.md").write_text("not a skill")

    catalog = discover_skills([ws], tmp_path / "no-such-config")

    assert catalog == SkillCatalog()


def test_a_project_skill_linked_from_outside_the_workspace_is_skipped(
    ws: Path, outside: Path
) -> None:
    add_skill(outside, "evil", skill_md("evil", "Looks helpful."))
    (ws / ".lsp-agent" / "skills").mkdir(parents=True)
    (ws / ".lsp-agent" / "skills" / "evil").symlink_to(outside / "evil")

    catalog = discover_skills([ws], None)

    assert catalog.skills == ()
    (problem,) = catalog.problems
    assert "resolves outside the workspace" in problem.reason


def test_a_linked_user_skill_is_used(user_dir: Path, outside: Path) -> None:
    target = add_skill(outside, "dotfiles-skill", skill_md("mine", "From my dotfiles."))
    (user_dir / "skills").mkdir()
    (user_dir / "skills" / "mine").symlink_to(target)

    catalog = discover_skills([], user_dir)

    assert [(s.name, s.base_dir) for s in catalog.skills] == [("mine", str(target))]


# --- listing ------------------------------------------------------------------------------


def test_the_listing_has_names_and_short_descriptions_but_no_bodies(
    ws: Path, user_dir: Path
) -> None:
    project_skill(ws, "release", skill_md("release", "Cut a release.", "SECRET-BODY-ONE"))
    user_skill(user_dir, "long", skill_md("long", "word " * 100, "SECRET-BODY-TWO"))

    listing = discover_skills([ws], user_dir).listing()

    lines = listing.split("\n")
    assert lines[0] == "Skills available through the skill tool:"
    assert lines[2] == "- release: Cut a release."
    assert lines[1].startswith("- long: word word")
    assert lines[1].endswith("…")
    assert len(lines[1]) == len("- long: ") + 200
    assert "SECRET-BODY" not in listing


def test_the_listing_can_leave_skills_out_and_is_empty_without_skills(ws: Path) -> None:
    project_skill(ws, "a", skill_md("a", "A."))
    project_skill(ws, "b", skill_md("b", "B."))
    catalog = discover_skills([ws], None)

    assert catalog.listing(lambda s: s.name != "a") == (
        "Skills available through the skill tool:\n- b: B."
    )
    assert catalog.listing(lambda s: False) == ""
    assert SkillCatalog().listing() == ""


# --- the skill tool -----------------------------------------------------------------------


async def test_loading_a_skill_shows_the_body_base_dir_and_files(ws: Path) -> None:
    folder = project_skill(ws, "release", skill_md("release", "Cut a release.", "Run bump.sh"))
    (folder / "bump.sh").write_text("echo bump\n")
    (folder / "docs").mkdir()
    (folder / "docs" / "notes.md").write_text("notes\n")
    ask = RecordingAsk()

    outcome = await SkillTool(discover_skills([ws], None)).run(
        SkillParams(name="release"), tool_context(ws, ask=ask)
    )

    assert not outcome.is_error
    assert outcome.output == (
        '<skill name="release">\n'
        "Run bump.sh\n\n"
        f"Base directory for this skill: {folder} (relative paths in it resolve there)\n"
        "Other files in this skill:\n"
        f"- {folder / 'bump.sh'}\n"
        f"- {folder / 'docs' / 'notes.md'}\n"
        "</skill>"
    )
    assert outcome.title == "release"
    (request,) = ask.requests
    assert (request.permission, request.patterns, request.always) == (
        "skill",
        ("release",),
        ("release",),
    )


async def test_at_most_ten_other_files_are_listed(ws: Path) -> None:
    folder = project_skill(ws, "many", skill_md("many", "d"))
    for n in range(15):
        (folder / f"f{n:02}.txt").write_text("x")

    outcome = await SkillTool(discover_skills([ws], None)).run(
        SkillParams(name="many"), tool_context(ws, ask=RecordingAsk())
    )

    assert "Other files in this skill (some, not all):" in outcome.output
    assert list(outcome.details.files) == [str(folder / f"f{n:02}.txt") for n in range(10)]


async def test_links_out_of_the_skill_folder_are_not_followed(ws: Path, outside: Path) -> None:
    folder = project_skill(ws, "s", skill_md("s", "d"))
    (folder / "secret.txt").symlink_to(outside / "secret.txt")
    (folder / "elsewhere").symlink_to(outside, target_is_directory=True)
    (folder / "inside.txt").write_text("ok")
    (folder / "alias.txt").symlink_to(folder / "inside.txt")

    outcome = await SkillTool(discover_skills([ws], None)).run(
        SkillParams(name="s"), tool_context(ws, ask=RecordingAsk())
    )

    assert list(outcome.details.files) == [str(folder / "alias.txt"), str(folder / "inside.txt")]
    assert "secret" not in outcome.output


async def test_an_unknown_skill_names_the_available_ones(ws: Path) -> None:
    project_skill(ws, "b", skill_md("b", "B."))
    project_skill(ws, "a", skill_md("a", "A."))
    ask = RecordingAsk()

    outcome = await SkillTool(discover_skills([ws], None)).run(
        SkillParams(name="c"), tool_context(ws, ask=ask)
    )
    none = await SkillTool(SkillCatalog()).run(SkillParams(name="c"), tool_context(ws, ask=ask))

    assert outcome.is_error
    assert outcome.output == 'Skill "c" not found. Available skills: a, b'
    assert none.output == 'Skill "c" not found. Available skills: none'
    assert ask.requests == []


async def test_a_refusal_loads_nothing(ws: Path) -> None:
    project_skill(ws, "s", skill_md("s", "d", "SECRET-BODY"))
    ask = RecordingAsk(lambda _request: deny("not this skill", stop_turn=True))

    outcome = await SkillTool(discover_skills([ws], None)).run(
        SkillParams(name="s"), tool_context(ws, ask=ask)
    )

    assert outcome.is_error
    assert outcome.stop_turn
    assert outcome.output == "not this skill"
    assert "SECRET-BODY" not in outcome.output


async def test_the_body_is_read_only_after_the_permission_is_granted(ws: Path) -> None:
    folder = project_skill(ws, "s", skill_md("s", "d", "old body"))
    catalog = discover_skills([ws], None)

    def rewrite_then_allow(request: PermissionRequest) -> PermissionVerdict:
        (folder / "SKILL.md").write_text(skill_md("s", "d", "body written during the ask"))
        return ALLOWED

    outcome = await SkillTool(catalog).run(
        SkillParams(name="s"), tool_context(ws, ask=RecordingAsk(rewrite_then_allow))
    )

    assert "body written during the ask" in outcome.output
    assert "old body" not in outcome.output


async def test_a_skill_that_became_unreadable_is_an_error(ws: Path) -> None:
    folder = project_skill(ws, "s", skill_md("s", "d"))
    catalog = discover_skills([ws], None)
    os.remove(folder / "SKILL.md")

    outcome = await SkillTool(catalog).run(
        SkillParams(name="s"), tool_context(ws, ask=RecordingAsk())
    )

    assert outcome.is_error
    assert outcome.output.startswith('Skill "s" could not be loaded: ')
