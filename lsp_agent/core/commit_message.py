"""A commit message for the staged changes, in the style of the repository's recent subjects.

The caller reads the staged diff and the last subjects (safely: ``snapshots/staged.py``);
this module decides the style, asks the ``commit`` side model once, checks the answer and,
when it breaks the style the history demands (Conventional Commits), asks once more with
what was wrong. A second bad answer is an error, never a message that breaks the convention.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Sequence

import attrs

from lsp_agent.core import prompts
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import Message, ModelRequest, SystemBlock, TextPart
from lsp_agent.core.models import SideModel
from lsp_agent.core.stream_events import TextDelta

COMMIT_MAX_TOKENS = 512
"""A commit message's answer limit unless ``agents.commit.max_tokens`` says otherwise."""
RECENT_SUBJECTS = 20
"""How many of the latest subjects decide the style."""
MAX_DIFF_CHARS = 60_000
"""The staged diff sent to the model is cut here (the file list above it is complete)."""

CONVENTIONAL = re.compile(r"^(?P<type>[a-z][a-z0-9-]*)(\([^()\r\n]+\))?!?: \S")
"""``type(scope)!: subject``: the first line of a Conventional Commit."""


@attrs.frozen(kw_only=True)
class CommitStyle:
    """What the recent subjects have in common."""

    conventional: bool
    """Most of them are Conventional Commits: the message must be one too."""
    examples: tuple[str, ...]
    typical_length: int
    capitalised: bool
    """Most start with a capital letter (after a Conventional Commits prefix)."""


@attrs.frozen
class CommitMessage:
    text: str
    """The whole message: subject, then a blank line and a body when there is one."""


@attrs.frozen
class CommitMessageFailure:
    reason: str
    nothing_to_commit: bool = False
    """Nothing staged, or the folder is in no repository: the request cannot be served as
    asked (the person stages or picks another folder), not a failure of the agent."""


def commit_style(subjects: Sequence[str]) -> CommitStyle:
    """The style of ``subjects`` (newest first; only the first :data:`RECENT_SUBJECTS`)."""
    recent = [s.strip() for s in subjects[:RECENT_SUBJECTS] if s.strip()]
    conventional = bool(recent) and sum(1 for s in recent if CONVENTIONAL.match(s)) * 2 > len(
        recent
    )
    heads = [_after_prefix(s) for s in recent]
    capitals = sum(1 for h in heads if h[:1].isupper())
    return CommitStyle(
        conventional=conventional,
        examples=tuple(recent),
        typical_length=int(statistics.median(len(s) for s in recent)) if recent else 50,
        capitalised=capitals * 2 > len(heads) if heads else True,
    )


def check_message(text: str, style: CommitStyle) -> str | None:
    """What is wrong with ``text`` for ``style``; None when it will do."""
    lines = text.split("\n")
    subject = lines[0]
    if not subject.strip():
        return "the message is empty"
    if len(lines) > 1 and lines[1].strip():
        return "the subject line must be followed by a blank line before the body"
    if style.conventional and not CONVENTIONAL.match(subject):
        return (
            f"the subject {subject!r} is not a Conventional Commit: it must read "
            "`type(optional scope): description`, e.g. `fix(parser): handle empty input`"
        )
    return None


def clean_answer(raw: str) -> str:
    """The model's answer without a code fence, quotes around it or trailing blank lines."""
    text = raw.strip()
    fence = re.fullmatch(r"```[\w-]*\n(.*?)\n?```", text, flags=re.DOTALL)
    if fence:
        text = fence[1].strip()
    if len(text) > 1 and text[0] == text[-1] and text[0] in "\"'`" and "\n" not in text:
        text = text[1:-1].strip()
    return "\n".join(line.rstrip() for line in text.split("\n")).strip()


def request_text(diff: str, stat: str, style: CommitStyle) -> str:
    """The user message: the style to follow, the recent subjects, the changes."""
    if style.conventional:
        rule = (
            "This repository uses Conventional Commits: the subject MUST read "
            "`type(optional scope): description` (types such as feat, fix, docs, refactor, "
            "test, chore; `!` before the colon for a breaking change)."
        )
    elif style.examples:
        case = "a capital letter" if style.capitalised else "a lower-case letter"
        rule = (
            f"Follow the style of the recent subjects below: about {style.typical_length} "
            f"characters, starting with {case}, with the same kind of prefix if they use one."
        )
    else:
        rule = "Write an imperative subject of at most 72 characters."
    examples = "\n".join(f"- {s}" for s in style.examples) or "(no commits yet)"
    shown = diff if len(diff) <= MAX_DIFF_CHARS else diff[:MAX_DIFF_CHARS] + "\n… (diff cut)\n"
    return (
        f"{rule}\n\nRecent subjects, newest first:\n{examples}\n\n"
        f"Files staged:\n{stat.strip()}\n\nThe staged diff:\n```diff\n{shown}```"
    )


async def write_commit_message(
    model: SideModel, *, diff: str, stat: str, subjects: Sequence[str]
) -> CommitMessage | CommitMessageFailure:
    """The message for ``diff`` (``stat``: its file list) after ``subjects`` (newest
    first). At most two requests: the second tells the model what its first answer broke."""
    style = commit_style(subjects)
    messages = [Message(role="user", parts=(TextPart(text=request_text(diff, stat, style)),))]
    problem = "the model gave no answer"
    for _ in range(2):
        request = ModelRequest(
            model=model.info.model,
            system=(SystemBlock(text=prompts.load("commit")),),
            messages=tuple(messages),
            max_output_tokens=model.max_output_tokens,
            thinking=model.thinking,
        )
        chunks: list[str] = []
        try:
            async for event in model.provider.stream(request):
                if isinstance(event, TextDelta):
                    chunks.append(event.text)
        except ProviderError as error:
            return CommitMessageFailure(f"the model could not be asked: {error}")
        answer = clean_answer("".join(chunks))
        found = check_message(answer, style)
        if found is None:
            return CommitMessage(answer)
        problem = found
        messages += [
            Message(role="assistant", parts=(TextPart(text=answer or "(empty)"),)),
            Message(
                role="user",
                parts=(TextPart(text=f"That message will not do: {found}. Answer again."),),
            ),
        ]
    return CommitMessageFailure(
        f"the model's message did not follow the repository's style: {problem}"
    )


def _after_prefix(subject: str) -> str:
    match = CONVENTIONAL.match(subject)
    return subject[match.end() - 1 :] if match else subject


__all__ = [
    "COMMIT_MAX_TOKENS",
    "CommitMessage",
    "CommitMessageFailure",
    "CommitStyle",
    "check_message",
    "clean_answer",
    "commit_style",
    "write_commit_message",
]
