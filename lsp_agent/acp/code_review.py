"""ACP's ``/review [--staged | --base REF]``: the agent reviews the person's changes in the
session's folder (docs/review.md, "Agent review of your changes"). ACP has no diagnostics, so
the findings come back as the command's answer, one ``path:line: severity: message`` line
each, then the model's summary. The review is a side request: the conversation is unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsp_agent.app import App
from lsp_agent.code_review.changes import Scope, review_changes
from lsp_agent.code_review.findings import cli_line
from lsp_agent.code_review.review import ReviewFailed

__all__ = ["REVIEW_COMMAND", "REVIEW_ENTRY", "review_answer"]

REVIEW_COMMAND = "review"
REVIEW_ENTRY: dict[str, Any] = {
    "name": REVIEW_COMMAND,
    "description": "Review your uncommitted changes (git): --staged, or --base REF",
    "input": {"hint": "--staged | --base REF"},
}
REVIEW_MODE = "plan"


def _scope(words: Sequence[str]) -> Scope | str:
    """The changes ``/review``'s words name, or what is wrong with them."""
    staged, base = False, None
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word in ("--staged", "staged"):
            staged = True
        elif word in ("--base", "base") and rest:
            base = rest.pop(0)
        else:
            return f"/review takes --staged or --base REF, not {word!r}."
    if staged and base:
        return "/review takes --staged or --base REF, not both."
    return Scope(staged=staged, base=base)


async def review_answer(app: App, folder: str, roots: Sequence[str], text: str) -> str:
    """The text ``/review`` answers with (``text``: the whole prompt, ``/review …``)."""
    scope = _scope(text.split()[1:])
    if isinstance(scope, str):
        return scope
    provider, model = app.sessions.mode_model(REVIEW_MODE)
    result = await review_changes(
        folder,
        scope,
        provider=provider,
        model=model.model,
        avoid=roots,
        max_output_tokens=min(8192, model.max_output),
        mask=lambda text: app.secrets.mask(text).with_note(),
    )
    if isinstance(result, ReviewFailed):
        return f"The review could not run: {result.reason}."
    lines = [cli_line(finding, folder) for finding in result.findings]
    count = len(result.findings)
    head = f"Review of {scope.describe()}: {count} finding{'' if count == 1 else 's'}."
    body = "\n".join(f"- `{line}`" for line in lines)
    return "\n\n".join(part for part in (head, body, result.summary) if part)
