"""The words a completion model is sent, in its two forms, and its answer cleaned up.

A fill-in-the-middle model gets the code before the cursor as ``prompt`` (the context as a
comment block on top, in the file's comment syntax, as such models saw code in training) and
the code after it as ``suffix``. A chat model gets one compact message with the cursor marked
and is told to answer with the inserted text alone."""

from __future__ import annotations

import posixpath

from lsp_agent.completion.context import CompletionContext

CURSOR = "<CURSOR>"

CHAT_SYSTEM = (
    "You complete code in an editor. Reply with only the text to insert at "
    f"{CURSOR}: no explanation, no code fences, nothing that is already before or after "
    "the cursor. Keep it short (finish the line or the statement); reply with nothing if "
    "nothing is worth suggesting."
)

_LINE_COMMENTS = {
    "//": (".js", ".jsx", ".ts", ".tsx", ".go", ".rs", ".c", ".h", ".cc", ".cpp", ".hpp",
           ".java", ".kt", ".swift", ".cs", ".scala", ".dart", ".php", ".zig"),
    "--": (".lua", ".sql", ".hs", ".elm"),
    ";": (".el", ".lisp", ".clj", ".scm"),
    "%": (".tex", ".erl"),
}  # fmt: skip


def comment_prefix(path: str) -> str:
    ext = posixpath.splitext(path)[1].lower()
    for prefix, extensions in _LINE_COMMENTS.items():
        if ext in extensions:
            return prefix
    return "#"


def context_lines(ctx: CompletionContext) -> list[str]:
    """The context besides the text around the cursor: related symbols, the agent's task."""
    lines = [f"Path: {ctx.path}"]
    for buffer in ctx.related:
        lines.append(f"Related: {buffer.path}")
        lines.extend(f"  {line}" for line in buffer.text.splitlines())
    if ctx.task:
        lines.extend(ctx.task.splitlines())
    return lines


def fim_prompt(ctx: CompletionContext) -> str:
    """``prompt`` for ``/v1/completions``: the context commented out, then the prefix."""
    mark = comment_prefix(ctx.path)
    header = "\n".join(f"{mark} {line}".rstrip() for line in context_lines(ctx))
    return f"{header}\n{ctx.prefix}"


def chat_prompt(ctx: CompletionContext) -> str:
    """The one user message of the chat form."""
    context = "\n".join(context_lines(ctx)[1:])
    parts = [f"Context:\n{context}\n"] if context else []
    parts.append(f"File {ctx.path}:\n{ctx.prefix}{CURSOR}{ctx.suffix}")
    return "\n".join(parts)


def clean(answer: str, ctx: CompletionContext) -> str:
    """The model's answer as text to insert: fences dropped, a repeat of the current line's
    start or of the text after the cursor cut off, trailing blank lines dropped."""
    text = answer
    stripped = text.strip()
    if stripped.startswith("```"):
        body = stripped.split("\n", 1)[1] if "\n" in stripped else ""
        text = body[: body.rfind("```")] if "```" in body else body
    text = text.replace(CURSOR, "")
    line_start = ctx.prefix.rsplit("\n", 1)[-1]
    if line_start.strip() and text.startswith(line_start):
        text = text[len(line_start) :]
    suffix_line = ctx.suffix.split("\n", 1)[0].strip()
    if suffix_line and text.rstrip().endswith(suffix_line):
        text = text.rstrip()[: -len(suffix_line)]
    return text.rstrip("\n") if text.strip() else ""
