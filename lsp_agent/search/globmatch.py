"""Glob patterns for the search tools, matched in Python rather than by ripgrep.

ripgrep's own ``--glob`` is an override: a file it matches is shown even when ``.gitignore``
ignores it. So ``glob`` and ``grep``'s ``include`` let rg list what ignore rules allow and
filter that list here. The syntax is rg's (gitignore-like): a pattern without ``/`` matches a
file's name at any depth; one with ``/`` matches the path relative to the search folder, as
does one that starts with ``/`` or ``./`` (``/setup.py`` is only the top-level one). ``*``
and ``?`` stay within one path component, ``**`` spans components, ``[abc]``/``[!abc]`` are
classes, ``{a,b}`` are alternatives and ``\\`` escapes the next character. Matching is
case-sensitive.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["compile_glob", "name_glob"]


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A predicate on ``/``-separated paths relative to the search folder."""
    body, anchored = _strip_anchor(pattern)
    if body.endswith("/"):
        body += "**"
    prefix = "" if anchored or "/" in body else "(?:.*/)?"
    regex = re.compile(prefix + _translate(body), re.DOTALL)
    return lambda path: regex.fullmatch(path) is not None


def name_glob(pattern: str) -> str | None:
    """The pattern as a glob on file names alone, when it is one (``**/*.py`` → ``*.py``).

    Such a glob can also be handed to rg as a file type, which rg applies *after* the ignore
    rules: a cheap pre-filter that never lets an ignored file through.
    """
    body, anchored = _strip_anchor(pattern)
    if body.startswith("**/"):
        anchored = False  # `/**/x` is `**/x`
    while body.startswith("**/"):
        body = body[3:]
    if anchored or not body or any(c in body for c in "/:\\") or "**" in body:
        return None
    return body


def _strip_anchor(pattern: str) -> tuple[str, bool]:
    """The pattern without a leading ``./`` or ``/``, and whether it had one."""
    body = pattern
    while body.startswith("./"):
        body = body[2:]
    body = body.removeprefix("/")
    return body, body != pattern


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**", i):
            i = _double_star(glob, i, out)
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "\\" and i + 1 < len(glob):
            i += 1
            out.append(re.escape(glob[i]))
        elif c == "[" and (end := _class_end(glob, i)) > 0:
            out.append(_char_class(glob[i + 1 : end]))
            i = end
        elif c == "{" and (end := _brace_end(glob, i)) > 0:
            alternatives = _split_top_level(glob[i + 1 : end])
            out.append("(?:" + "|".join(_translate(alt) for alt in alternatives) + ")")
            i = end
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _double_star(glob: str, i: int, out: list[str]) -> int:
    """``**`` as a whole component spans directories; elsewhere it is a plain ``*``."""
    starts_component = i == 0 or glob[i - 1] == "/"
    rest = glob[i + 2 :]
    if starts_component and rest.startswith("/"):
        out.append("(?:.*/)?")
        return i + 3
    if starts_component and not rest:
        out.append(".*")
        return i + 2
    out.append("[^/]*")
    return i + 2


def _class_end(glob: str, start: int) -> int:
    """Index of the ``]`` closing the class at ``start``, or -1."""
    i = start + 1
    if i < len(glob) and glob[i] in "!^":
        i += 1
    if i < len(glob) and glob[i] == "]":
        i += 1
    end = glob.find("]", i)
    return end


def _char_class(body: str) -> str:
    negate = body[:1] in ("!", "^")
    if negate:
        body = body[1:]
    members = "".join(c if c == "-" else re.escape(c) for c in body)
    return f"[^/{members}]" if negate else f"[{members}]"


def _brace_end(glob: str, start: int) -> int:
    depth = 0
    for i in range(start, len(glob)):
        if glob[i] == "{":
            depth += 1
        elif glob[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_top_level(body: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for c in body:
        if c == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        depth += (c == "{") - (c == "}")
        current.append(c)
    parts.append("".join(current))
    return parts
