"""Skills: folders holding a ``SKILL.md`` of instructions the model loads when a task fits.

Where they are found, in order of precedence:

- project skills: ``<workspace root>/.lsp-agent/skills/<folder>/SKILL.md``, for each root
  (an earlier root wins); a project skill whose files resolve outside its root is skipped;
- user skills: ``<user config dir>/skills/<folder>/SKILL.md``, where the user config dir is
  lsp-agent's own config folder (the one holding ``config.json``), given by the caller.

A ``SKILL.md`` opens with front matter, ``---`` lines around ``key: value`` lines, of which
``name`` (default: the folder's name) and ``description`` (required, one line) are read;
no YAML library is needed for that. The rest is the body, which only the ``skill`` tool
reads, after its permission is granted. What could not be used is kept in
``SkillCatalog.problems`` for ``doctor``. Discovery does blocking file I/O: call it from a
worker thread in async code.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from typing import Literal

import attrs

from lsp_agent.workspace.context_read import Refused, Unreadable, read_regular

__all__ = [
    "MAX_LISTED_DESCRIPTION",
    "MAX_OTHER_FILES",
    "MAX_SKILL_BYTES",
    "PROJECT_SKILLS_DIR",
    "SKILL_FILE",
    "LoadedSkill",
    "Skill",
    "SkillCatalog",
    "SkillDocument",
    "SkillProblem",
    "discover_skills",
    "load_skill",
    "parse_skill",
    "read_skill_file",
]

SKILL_FILE = "SKILL.md"
PROJECT_SKILLS_DIR = os.path.join(".lsp-agent", "skills")
MAX_SKILL_BYTES = 256 * 1024
MAX_LISTED_DESCRIPTION = 200
MAX_OTHER_FILES = 10
LISTING_HEADER = "Skills available through the skill tool:"

SkillSource = Literal["project", "user"]

# A name is also the `skill` permission pattern, so no wildcards, spaces or quotes.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_BLOCK_SCALAR = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})


@attrs.frozen(kw_only=True)
class Skill:
    name: str
    description: str
    """One line, whitespace collapsed (the listing shortens it further)."""
    path: str
    """The ``SKILL.md``, realpath-ed."""
    base_dir: str
    """The skill's folder, realpath-ed: relative paths in the body resolve here."""
    source: SkillSource


@attrs.frozen(kw_only=True)
class SkillProblem:
    """A ``SKILL.md`` (or skills folder) that could not be used, and why."""

    path: str
    reason: str

    def __str__(self) -> str:
        return f"{self.path}: {self.reason}"


@attrs.frozen(kw_only=True)
class SkillCatalog:
    skills: tuple[Skill, ...] = ()
    """Sorted by name; names are unique."""
    problems: tuple[SkillProblem, ...] = ()

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.skills)

    def listing(self, visible: Callable[[Skill], bool] | None = None) -> str:
        """What the model's context says about skills: names and short descriptions, never a
        body. Empty when no (visible) skill exists. ``visible`` can leave out, for example,
        skills the ``skill`` permission denies."""
        shown = [s for s in self.skills if visible is None or visible(s)]
        if not shown:
            return ""
        lines = [f"- {s.name}: {_shorten(s.description)}" for s in shown]
        return "\n".join([LISTING_HEADER, *lines])


@attrs.frozen(kw_only=True)
class SkillDocument:
    """A parsed ``SKILL.md``."""

    name: str | None
    description: str | None
    body: str


@attrs.frozen(kw_only=True)
class LoadedSkill:
    """What the ``skill`` tool shows: the body, and some of the skill's other files."""

    skill: Skill
    body: str
    files: tuple[str, ...]
    """Absolute paths of up to ``MAX_OTHER_FILES`` other files in the skill's folder."""
    more_files: bool


def discover_skills(
    workspace_roots: Sequence[str | os.PathLike[str]],
    user_config_dir: str | os.PathLike[str] | None,
) -> SkillCatalog:
    """Every usable skill (project skills win over user skills of the same name)."""
    found: dict[str, Skill] = {}
    problems: list[SkillProblem] = []
    for root in workspace_roots:
        real_root = os.path.realpath(root)
        folder = os.path.join(real_root, PROJECT_SKILLS_DIR)
        _scan(folder, "project", real_root, found, problems)
    if user_config_dir is not None:
        folder = os.path.join(os.fspath(user_config_dir), "skills")
        _scan(folder, "user", None, found, problems)
    skills = tuple(sorted(found.values(), key=lambda s: s.name))
    return SkillCatalog(skills=skills, problems=tuple(problems))


def load_skill(skill: Skill) -> LoadedSkill | SkillProblem:
    """Read ``skill``'s body now, and list its other files (blocking I/O)."""
    if os.path.realpath(skill.path) != skill.path:
        return SkillProblem(path=skill.path, reason="it was moved or replaced by a link")
    document = read_skill_file(skill.path)
    if isinstance(document, SkillProblem):
        return document
    files, more = _other_files(skill.base_dir, skill.path)
    return LoadedSkill(skill=skill, body=document.body, files=files, more_files=more)


def read_skill_file(path: str) -> SkillDocument | SkillProblem:
    """``path`` parsed, or why it cannot be used (too big, not UTF-8, bad front matter)."""
    # Regular files only, never opened blocking (a FIFO named SKILL.md must not hang us).
    read = read_regular(path, limit=MAX_SKILL_BYTES)
    if isinstance(read, Refused):
        return SkillProblem(path=path, reason=f"not read: {read.reason}")
    if isinstance(read, Unreadable):
        return SkillProblem(path=path, reason=f"cannot be read: {read.reason}")
    if read.truncated:
        return SkillProblem(path=path, reason=f"larger than {MAX_SKILL_BYTES // 1024} KB")
    data = read.data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return SkillProblem(path=path, reason="not UTF-8 text")
    if "\0" in text:
        return SkillProblem(path=path, reason="not a text file")
    parsed = parse_skill(text)
    return SkillProblem(path=path, reason=parsed) if isinstance(parsed, str) else parsed


def parse_skill(text: str) -> SkillDocument | str:
    """The front matter's ``name`` and ``description`` and the body; a str says what is wrong.

    Front matter is optional here (without it there is no description, which discovery
    reports). Values may be quoted, continued on indented lines, or ``>``/``|`` blocks.
    """
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines[0].strip() != "---":
        return SkillDocument(name=None, description=None, body=_body(lines))
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return "the front matter has no closing `---` line"
    fields = _front_matter(lines[1:end])
    if isinstance(fields, str):
        return fields
    name = " ".join(fields.get("name", "").split()) or None
    description = " ".join(fields.get("description", "").split()) or None
    return SkillDocument(name=name, description=description, body=_body(lines[end + 1 :]))


# --- discovery --------------------------------------------------------------------------


def _scan(
    folder: str,
    source: SkillSource,
    confine: str | None,
    found: dict[str, Skill],
    problems: list[SkillProblem],
) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return
    except OSError as exc:
        problems.append(SkillProblem(path=folder, reason=f"cannot be listed: {exc.strerror}"))
        return
    for entry in entries:
        skill_md = os.path.join(entry.path, SKILL_FILE)
        if entry.name.startswith(".") or not os.path.isfile(skill_md):
            continue
        skill = _skill(entry, skill_md, source, confine)
        if isinstance(skill, SkillProblem):
            problems.append(skill)
            continue
        first = found.get(skill.name)
        if first is None:
            found[skill.name] = skill
        elif first.source == source:
            reason = f'skill "{skill.name}" is also defined in {first.path}, which is used'
            problems.append(SkillProblem(path=skill_md, reason=reason))


def _skill(
    entry: os.DirEntry[str], skill_md: str, source: SkillSource, confine: str | None
) -> Skill | SkillProblem:
    path = os.path.realpath(skill_md)
    base_dir = os.path.realpath(entry.path)
    if confine is not None and not (_inside(path, confine) and _inside(base_dir, confine)):
        return SkillProblem(path=skill_md, reason=f"resolves outside the workspace {confine}")
    document = read_skill_file(path)
    if isinstance(document, SkillProblem):
        return SkillProblem(path=skill_md, reason=document.reason)
    name = document.name or entry.name
    if not _NAME.fullmatch(name):
        reason = f"invalid name {name!r} (letters, digits, '.', '_', '-'; at most 64)"
        return SkillProblem(path=skill_md, reason=reason)
    if not document.description:
        return SkillProblem(path=skill_md, reason="no description in the front matter")
    return Skill(
        name=name,
        description=document.description,
        path=path,
        base_dir=base_dir,
        source=source,
    )


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _other_files(base_dir: str, skill_md: str) -> tuple[tuple[str, ...], bool]:
    """Files under ``base_dir`` besides ``skill_md``, top level first; never through a link
    that leads out of ``base_dir``, and never into linked folders."""
    files: list[str] = []
    for folder, dirnames, filenames in os.walk(base_dir, followlinks=False):
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and d not in _SKIPPED_DIRS
        )
        for name in sorted(filenames):
            path = os.path.join(folder, name)
            if path == skill_md or not os.path.isfile(path):
                continue
            if os.path.islink(path) and not _inside(os.path.realpath(path), base_dir):
                continue
            files.append(path)
            if len(files) > MAX_OTHER_FILES:
                return tuple(files[:MAX_OTHER_FILES]), True
    return tuple(files), False


# --- front matter -----------------------------------------------------------------------


def _front_matter(lines: list[str]) -> dict[str, str] | str:
    fields: dict[str, str] = {}
    key: str | None = None
    for number, line in enumerate(lines, start=2):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            if key is not None:  # continues the value above
                fields[key] = f"{fields[key]} {line.strip()}".strip()
            continue
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            return f"front matter line {number} is not `key: value`"
        key = name.strip()
        value = value.strip()
        fields[key] = "" if value in _BLOCK_SCALAR else value
    return {k: _unquote(v) for k, v in fields.items()}


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return value[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    if len(value) >= 2 and value[0] == value[-1] == "'":
        return value[1:-1].replace("''", "'")
    return value


def _body(lines: list[str]) -> str:
    return "\n".join(lines).strip("\n").rstrip()


def _shorten(text: str) -> str:
    if len(text) <= MAX_LISTED_DESCRIPTION:
        return text
    return text[: MAX_LISTED_DESCRIPTION - 1].rstrip() + "…"
