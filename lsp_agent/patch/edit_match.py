"""Where ``old_string`` is in a file: the matcher chain behind the ``edit`` tool (pure, no I/O).

Models copy text imperfectly: indentation is off, trailing spaces are lost, ``\\n`` arrives
written out, a middle line is slightly wrong. The chain tries, in this order (broadly from
strict to loose; a later one may also be a stricter tie-breaker for an earlier one)::

    exact · line_trimmed · block_anchor · whitespace_normalized · indentation_flexible ·
    escape_normalized · trimmed_boundary · context_aware

Each matcher returns *every* place it matches, as spans of the original text together with
the replacement for that span. Where a line-based matcher tolerated an indentation
difference, the matched lines map each indentation of ``old_string`` onto the file's (a
shift, or a change of unit such as 2 → 4 spaces or spaces → tabs). ``new_string`` may be
written like ``old_string`` (then its lines are translated through that map) or already like
the file (then it is used as is — translating it again would indent it twice); which one is
decided from both strings (:func:`_frame`), and when they do not tell, the edit is refused
with a message asking for the file's exact indentation. The rules:

- Without ``replace_all`` a matcher's answer is used only when it found exactly one place;
  several places are ambiguous and the next matcher is tried (a stricter notion, such as
  ``indentation_flexible`` after ``line_trimmed``, can single one out). But when ``old_string``
  occurs several times *exactly*, the chain stops there: a looser matcher must never silently
  pick one of several exact copies.
- With ``replace_all`` every place found by the first matcher that finds any is replaced
  (overlapping places: the leftmost wins).
- A fuzzy match whose span is much larger than ``old_string`` is refused outright
  (:func:`size_guard`): it means the model's picture of the file is wrong.

opencode has a ninth, "multi-occurrence" replacer, which exists so that ``replaceAll`` sees
every exact occurrence; here ``exact`` already returns every occurrence, so it is not needed.

Text here is LF-only: the ``edit`` tool normalizes CRLF before matching and maps the spans
back to the file's own line endings.
"""

from __future__ import annotations

import difflib
import itertools
import re
from collections.abc import Callable, Sequence
from fractions import Fraction

import attrs

__all__ = [
    "BLOCK_ANCHOR_MARGIN",
    "BLOCK_ANCHOR_THRESHOLD",
    "CONTEXT_AWARE_MIN_SHARE",
    "MATCHERS",
    "EditFailure",
    "EditPlan",
    "Match",
    "Matcher",
    "Replacement",
    "ambiguous_message",
    "block_anchor",
    "context_aware",
    "escape_normalized",
    "exact",
    "indentation_flexible",
    "levenshtein",
    "line_trimmed",
    "not_found_message",
    "plan_edit",
    "similarity",
    "size_guard",
    "trimmed_boundary",
    "whitespace_normalized",
]

BLOCK_ANCHOR_THRESHOLD = 0.65
"""The least average similarity of a block's middle lines (Levenshtein, 0..1)."""
BLOCK_ANCHOR_MARGIN = 0.1
"""Several anchored blocks pass: the best is used only if it beats the next by this much."""
CONTEXT_AWARE_MIN_SHARE = 0.5
"""The least share of non-blank middle lines that must be equal after trimming."""

NOT_FOUND = (
    "Could not find old_string in the file. It must match exactly, including whitespace, "
    "indentation and line endings. Read the file again and copy the exact text."
)
_LINE_NUMBER_HINT = (
    " old_string looks like it includes the line numbers of the read output "
    '("12: "); leave them out.'
)


def not_found_message(old: str) -> str:
    lines = [line for line in old.split("\n") if line.strip()]
    numbered = bool(lines) and all(re.match(r"\s*\d+: ", line) for line in lines)
    return NOT_FOUND + (_LINE_NUMBER_HINT if numbered else "")


def ambiguous_message(count: int) -> str:
    return (
        f"Found {count} matches for old_string. Provide more surrounding lines to make it "
        "unique, or set replace_all to true."
    )


@attrs.frozen(kw_only=True)
class Match:
    """One place a matcher found: ``content[start:end]`` becomes ``replacement``.

    ``unsure`` is set when the place was found but ``new_string``'s indentation could not be
    decided: choosing this place refuses the edit with that message (a place, not a miss, so
    the chain does not go on to a looser matcher that would guess).
    """

    start: int
    end: int
    replacement: str
    unsure: str | None = None


Matcher = Callable[[str, str, str], list[Match]]
"""``matcher(content, old, new)`` → every place ``old`` matches, leftmost first."""


@attrs.frozen(kw_only=True)
class Replacement:
    start: int
    end: int
    text: str


@attrs.frozen(kw_only=True)
class EditPlan:
    """What to change; spans refer to the content the plan was made for."""

    replacements: tuple[Replacement, ...]
    matcher: str

    def apply(self, content: str) -> str:
        parts: list[str] = []
        at = 0
        for r in self.replacements:
            parts += [content[at : r.start], r.text]
            at = r.end
        parts.append(content[at:])
        return "".join(parts)


@attrs.frozen(kw_only=True)
class EditFailure:
    message: str


def plan_edit(
    content: str, old: str, new: str, *, replace_all: bool = False
) -> EditPlan | EditFailure:
    """Run the chain. ``old`` must not be empty and must differ from ``new``."""
    most = 0
    for name, matcher in MATCHERS:
        found = sorted(
            {(m.start, m.end): m for m in matcher(content, old, new)}.values(), key=_span
        )
        if not found:
            continue
        if matcher is not exact and (refusal := size_guard(content, old, found)):
            return EditFailure(message=refusal)
        if replace_all or len(found) == 1:
            kept = _without_overlaps(found)
            if unsure := next((m.unsure for m in kept if m.unsure), None):
                return EditFailure(message=unsure)
            return EditPlan(
                replacements=tuple(
                    Replacement(start=m.start, end=m.end, text=m.replacement) for m in kept
                ),
                matcher=name,
            )
        if matcher is exact:
            return EditFailure(message=ambiguous_message(len(found)))
        most = max(most, len(found))
    return EditFailure(message=ambiguous_message(most) if most else not_found_message(old))


def size_guard(content: str, old: str, found: Sequence[Match]) -> str | None:
    """A refusal when a fuzzy span is far larger than ``old``: at least max(old + 3, 2 × old)
    lines, or (multi-line ``old``) more than max(old + 500, 4 × old) characters trimmed."""
    old_lines = old.count("\n") + 1
    old_size = len(old.strip())
    for m in found:
        span = content[m.start : m.end]
        lines = span.count("\n") + 1
        too_long = lines >= max(old_lines + 3, old_lines * 2)
        too_big = old_lines > 1 and len(span.strip()) > max(old_size + 500, old_size * 4)
        if too_long or too_big:
            return (
                f"Refusing to edit: the closest match spans {lines} lines, much more than "
                f"old_string ({old_lines} line{'' if old_lines == 1 else 's'}). Read the "
                "file again and give the exact text to replace."
            )
    return None


def _span(m: Match) -> tuple[int, int]:
    return (m.start, m.end)


def _without_overlaps(found: Sequence[Match]) -> list[Match]:
    """Leftmost first; a place overlapping one already kept is dropped."""
    kept: list[Match] = []
    for m in found:
        if not kept or m.start >= kept[-1].end:
            kept.append(m)
    return kept


# --- the matchers ----------------------------------------------------------------------


def exact(content: str, old: str, new: str) -> list[Match]:
    """Every occurrence of ``old`` as written (overlapping ones too: ``aa`` is in ``aaa``
    twice, which makes it ambiguous; ``replace_all`` then replaces the leftmost).

    An ``old`` without leading whitespace found right after a line's indentation, with a
    ``new`` that starts with that same indentation, was written like the file: ``new``'s
    copy of the indentation is dropped so the line is not indented twice. And an ``old``
    that starts indented, with a ``new`` whose first line alone lost that indentation (its
    later lines stay as deep), gets it back.
    """
    return [
        Match(start=s, end=s + len(old), replacement=_once(content, s, old, new))
        for s in _occurrences(content, old)
    ]


def _once(content: str, start: int, old: str, new: str) -> str:
    """``new`` for an exact match at ``start``: a first line indented twice, or one whose
    indentation alone was dropped, put right (see :func:`exact`)."""
    before = content[content.rfind("\n", 0, start) + 1 : start]
    if before and not before.strip() and not old[:1].isspace() and _indent(new) == before:
        return new[len(before) :]
    lead = _indent(old)
    if lead and not _indent(new) and _only_first_line_dropped(lead, new):
        return lead + new
    return new


def _only_first_line_dropped(lead: str, new: str) -> bool:
    """``new``'s first line lost ``lead`` (the indentation ``old`` starts with) while every
    later line stays at least that deep: a slip, not a block moved out (which would move its
    other lines too)."""
    first, *rest = new.split("\n")
    later = [line for line in rest if line.strip()]
    return bool(first.strip()) and bool(later) and all(line.startswith(lead) for line in later)


def line_trimmed(content: str, old: str, new: str) -> list[Match]:
    """Whole lines equal to ``old``'s lines once each is trimmed at both ends.

    ``new`` gets the file's indentation (:func:`_reindent`): ``old``'s indentation mapped
    line by line onto the file's. A block where no such map exists (one indentation of
    ``old`` stands for two different ones in the file, or the nesting differs) is not a
    match: writing ``new`` there would break the file's indentation.
    """
    search = _search_lines(old)
    if not any(line.strip() for line in search):
        return []
    wanted = [line.strip() for line in search]
    lines = _Lines(content)
    n = len(search)
    found: list[Match] = []
    for i in range(len(lines) - n + 1):
        if lines.trimmed[i] == wanted[0] and lines.trimmed[i : i + n] == wanted:
            window = lines.text[i : i + n]
            replacement = _reindent(new, window, search)
            if replacement is not None:
                found.append(lines.match(i, i + n - 1, old, replacement))
    return found


def block_anchor(content: str, old: str, new: str) -> list[Match]:
    """Blocks of ≥3 lines whose first and last lines equal ``old``'s (trimmed) and whose
    middle lines are similar enough.

    The block may have ``max(1, lines // 4)`` lines more or fewer than ``old``. Every closing
    anchor within that tolerance is scored (not only the first one, which in nested code is
    often an inner ``}``). The score is the mean Levenshtein similarity (our own
    :func:`similarity`, not difflib's ratio) of the middle lines paired in order; an unpaired
    line scores 0. A block needs :data:`BLOCK_ANCHOR_THRESHOLD`; of several, the best wins only
    by :data:`BLOCK_ANCHOR_MARGIN`, otherwise all are returned (ambiguous).
    """
    search = _search_lines(old)
    first, last = search[0].strip(), search[-1].strip()
    if len(search) < 3 or not first or not last:
        return []
    lines = _Lines(content)
    middle = [line.strip() for line in search[1:-1]]
    tolerance = max(1, len(search) // 4)
    scored: list[tuple[float, int, int]] = []
    for i in range(len(lines)):
        if lines.trimmed[i] != first:
            continue
        lowest = max(i + 2, i + len(search) - 1 - tolerance)
        highest = min(len(lines), i + len(search) + tolerance)
        closings = [j for j in range(lowest, highest) if lines.trimmed[j] == last]
        best = _best_closing(lines.trimmed, i, closings, middle)
        if best is not None:
            scored.append((best[0], i, best[1]))
    scored.sort(reverse=True)
    if len(scored) > 1 and scored[0][0] - scored[1][0] >= BLOCK_ANCHOR_MARGIN:
        scored = scored[:1]
    return [
        lines.match(
            i,
            j,
            old,
            _reindent_or_keep(new, [lines.text[i], lines.text[j]], [search[0], search[-1]]),
        )
        for _score, i, j in scored
    ]


def whitespace_normalized(content: str, old: str, new: str) -> list[Match]:
    """``old``'s words with any run of whitespace (newlines included) between them.

    The span runs from the first word to the last, so whitespace ``old`` has before its first
    word (after its last) is also taken off ``new`` when ``new`` has the same. When the span
    has as many lines as ``old``, the indentation of ``new``'s later lines is translated as
    in :func:`line_trimmed` (its first line continues the file's line, so it has none).
    """
    words = old.split()
    if not words:
        return []
    pattern = re.compile(r"\s+".join(re.escape(word) for word in words))
    trimmed = _trim_like(new, old)
    head, *tail = trimmed.split("\n")
    old_tail = old.strip().split("\n")[1:]
    found: list[Match] = []
    for m in pattern.finditer(content):
        start = m.start()
        fitted = _fit_head(head, content[content.rfind("\n", 0, start) + 1 : start])
        if tail:
            rest: str | _Unsure = "\n".join(tail)
            span_tail = m.group().split("\n")[1:]
            if old_tail and len(span_tail) == len(old_tail):
                rest = _reindent_or_keep("\n".join(tail), span_tail, old_tail)
            fitted = _joined(fitted, rest)
        found.append(_placed(start, m.end(), fitted))
    return found


def indentation_flexible(content: str, old: str, new: str) -> list[Match]:
    """Whole lines equal to ``old``'s once each block loses its common indentation.

    ``new`` is re-indented like in :func:`line_trimmed`; here that amounts to taking
    ``old``'s common indentation off each line and putting the block's on. This matcher
    matters after ``line_trimmed`` when that one found several blocks: it can single out the
    one whose relative indentation is the same, not just in the same order.
    """
    search = _search_lines(old)
    if not any(line.strip() for line in search):
        return []
    wanted = _dedent(search)
    lines = _Lines(content)
    n = len(search)
    found: list[Match] = []
    for i in range(len(lines) - n + 1):
        window = lines.text[i : i + n]
        # A dedented line is the trimmed line plus its extra indentation: check that first.
        if lines.trimmed[i] == search[0].strip() and _dedent(window) == wanted:
            replacement = _reindent(new, window, search)
            if replacement is not None:
                found.append(lines.match(i, i + n - 1, old, replacement))
    return found


def escape_normalized(content: str, old: str, new: str) -> list[Match]:
    """``old`` with escapes the model wrote out (``\\n``, ``\\t``, ``\\"``, ``\\\\`` …) undone.

    ``new`` is un-escaped too when it has no real newline, which is the sign it was escaped
    the same way; otherwise it is used as written.
    """
    plain = _unescape(old)
    if plain == old or not plain:
        return []
    replacement = _unescape(new) if "\n" not in new else new
    return exact(content, plain, replacement)


def trimmed_boundary(content: str, old: str, new: str) -> list[Match]:
    """``old`` without its leading and trailing whitespace (only when it has some)."""
    core = old.strip()
    if core == old or not core:
        return []
    return exact(content, core, _trim_like(new, old))


def context_aware(content: str, old: str, new: str) -> list[Match]:
    """Blocks of exactly ``old``'s line count (≥3) with the same first and last lines
    (trimmed), where at least :data:`CONTEXT_AWARE_MIN_SHARE` of ``old``'s non-blank middle
    lines are equal (trimmed) to the block's line at the same position."""
    search = _search_lines(old)
    first, last = search[0].strip(), search[-1].strip()
    if len(search) < 3 or not first or not last:
        return []
    lines = _Lines(content)
    n = len(search)
    found: list[Match] = []
    for i in range(len(lines) - n + 1):
        window = lines.text[i : i + n]
        if window[0].strip() != first or window[-1].strip() != last:
            continue
        pairs = [(a.strip(), b.strip()) for a, b in zip(window[1:-1], search[1:-1], strict=True)]
        checked = [(a, b) for a, b in pairs if b]
        if checked:
            ok = sum(a == b for a, b in checked) / len(checked) >= CONTEXT_AWARE_MIN_SHARE
        else:
            ok = not any(a for a, _b in pairs)
        if ok:
            found.append(
                lines.match(
                    i,
                    i + n - 1,
                    old,
                    _reindent_or_keep(new, [window[0], window[-1]], [search[0], search[-1]]),
                )
            )
    return found


MATCHERS: tuple[tuple[str, Matcher], ...] = tuple(
    (matcher.__name__, matcher)
    for matcher in (
        exact,
        line_trimmed,
        block_anchor,
        whitespace_normalized,
        indentation_flexible,
        escape_normalized,
        trimmed_boundary,
        context_aware,
    )
)
"""The chain, in order, with the names reported in the ``edit`` tool's details (``matcher``)."""


# --- helpers ---------------------------------------------------------------------------


class _Lines:
    """``content`` split on LF, with where each line starts."""

    def __init__(self, content: str) -> None:
        self.content = content
        self.text = content.split("\n")
        self.trimmed = [line.strip() for line in self.text]
        self.starts: list[int] = []
        at = 0
        for line in self.text:
            self.starts.append(at)
            at += len(line) + 1

    def __len__(self) -> int:
        return len(self.text)

    def match(self, first: int, last: int, old: str, new: str | _Unsure) -> Match:
        """Lines ``first``..``last``; when ``old`` ends with a newline, the span takes the
        newline after the last line too (and at the end of a file without one, ``new``
        loses its final newline instead)."""
        start = self.starts[first]
        end = self.starts[last] + len(self.text[last])
        if old.endswith("\n"):
            if end < len(self.content):
                end += 1
            elif isinstance(new, str):
                new = new.removesuffix("\n")
        return _placed(start, end, new)


def _occurrences(content: str, text: str) -> list[int]:
    found: list[int] = []
    at = content.find(text)
    while at != -1 and text:
        found.append(at)
        at = content.find(text, at + 1)
    return found


def _search_lines(old: str) -> list[str]:
    """``old``'s lines; a final newline ends the last line rather than starting an empty one."""
    return old.removesuffix("\n").split("\n")


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _common_indent(lines: Sequence[str]) -> str:
    indents = [_indent(line) for line in lines if line.strip()]
    return min(indents, key=len) if indents else ""


def _dedent(lines: Sequence[str]) -> list[str]:
    width = len(_common_indent(lines))
    return [line[width:] if line.strip() else "" for line in lines]


@attrs.frozen
class _Unsure:
    """``new_string``'s indentation could not be decided; ``message`` says what to do."""

    message: str


UNSURE_INDENT = (
    "Refusing to edit: old_string matched only when its indentation was ignored "
    "(old_string: {old}; file: {file}), and new_string's indentation ({new}) does not tell "
    "whether it is written like the file or like old_string. Nothing was changed. Read the "
    "file again and repeat the edit with old_string and new_string indented exactly as in "
    "the file."
)


def _placed(start: int, end: int, new: str | _Unsure) -> Match:
    if isinstance(new, _Unsure):
        return Match(start=start, end=end, replacement="", unsure=new.message)
    return Match(start=start, end=end, replacement=new)


def _joined(head: str | _Unsure, tail: str | _Unsure) -> str | _Unsure:
    if isinstance(head, _Unsure):
        return head
    if isinstance(tail, _Unsure):
        return tail
    return f"{head}\n{tail}"


def _fit_head(head: str, before: str) -> str | _Unsure:
    """The first line of ``new`` for a span that starts mid-line, after ``before``.

    When only indentation precedes the span, a ``head`` indented exactly like that line was
    written like the file: its indentation is already there, so it is dropped. A ``head``
    indented some other way there is a guess either way.
    """
    indent = _indent(head)
    if not indent or before.strip() or not before:
        return head
    if indent == before:
        return head[len(indent) :]
    return _Unsure(UNSURE_INDENT.format(old="none", file=_describe(before), new=_describe(indent)))


def _reindent(new: str, found: Sequence[str], search: Sequence[str]) -> str | _Unsure | None:
    """``new`` with ``old``'s indentation translated into the file's, when ``new`` is written
    like ``old``; ``new`` itself when it is already written like the file.

    The matched lines give a map from each indentation ``old`` uses to the one the file has
    on that line (``"" → "    "``, ``"  " → "        "``). A line of ``new`` whose
    indentation is in the map gets the file's; any other is placed on the straight line
    through the map's points (widths; e.g. 2-space steps in ``old`` are 4-space steps in the
    file), in the file's indent character, or kept when that gives no whole width. None when
    there is no map — one indentation of ``old`` sits at two different ones in the file — or
    the map does not keep the nesting (deeper in ``old`` must be deeper in the file).
    :func:`_frame` decides whether to translate; :class:`_Unsure` when it cannot.
    """
    table: dict[str, str] = {}
    for f, s in zip(found, search, strict=False):
        if s.strip() and table.setdefault(_indent(s), _indent(f)) != _indent(f):
            return None
    if all(have == want for have, want in table.items()):
        return new
    ordered = [len(want) for _have, want in sorted(table.items(), key=lambda kv: len(kv[0]))]
    if any(a >= b for a, b in itertools.pairwise(ordered)):
        return None  # the nesting differs: deeper in old is not deeper in the file
    translated = _translate(new, table)
    if translated == new:
        return new
    frame = _frame(new, found, search)
    if frame == "file":
        return new
    if frame == "old":
        return translated
    pairs = [(s, f) for f, s in zip(found, search, strict=False) if s.strip()]
    return _Unsure(
        UNSURE_INDENT.format(
            old=_describe(_common_indent([s for s, _f in pairs])),
            file=_describe(_common_indent([f for _s, f in pairs])),
            new=_describe(_common_indent(new.split("\n"))),
        )
    )


def _translate(new: str, table: dict[str, str]) -> str:
    """Every line of ``new`` moved from ``old``'s indentation to the file's (see
    :func:`_reindent`)."""
    scale = _Scale.through(table)
    shifted: list[str] = []
    for line in new.split("\n"):
        indent = _indent(line)
        if not line.strip():
            shifted.append(line)
        elif indent in table:
            shifted.append(table[indent] + line[len(indent) :])
        else:
            wanted = scale.indent(len(indent)) if scale else None
            shifted.append(line if wanted is None else wanted + line[len(indent) :])
    return "\n".join(shifted)


def _frame(new: str, found: Sequence[str], search: Sequence[str]) -> str | None:
    """Whether ``new`` is written like the ``"file"`` or like ``"old"``; None when unclear.

    In order, the first that tells:

    1. Lines ``new`` keeps from ``old`` (same text once trimmed, paired in order) where old
       and file are indented differently: the line's indentation in ``new`` equals one of the
       two. Votes for both sides are a contradiction, so nothing is decided.
    2. The least indentation of ``new`` equals the file's block and not ``old``'s, or the
       other way round (a model keeps a block's base level in whichever picture it writes).
    3. ``new``'s lines use indentations only the file has, or only ``old`` has.
    """
    new_lines = new.split("\n")
    votes = {"file": 0, "old": 0}
    aligned = difflib.SequenceMatcher(
        None, [line.strip() for line in search], [line.strip() for line in new_lines], False
    )
    for a, b, size in aligned.get_matching_blocks():
        for k in range(size):
            s, f, n = search[a + k], found[a + k], new_lines[b + k]
            if not s.strip() or _indent(s) == _indent(f):
                continue
            if _indent(n) == _indent(f):
                votes["file"] += 1
            elif _indent(n) == _indent(s):
                votes["old"] += 1
    if votes["file"] or votes["old"]:
        if votes["file"] and votes["old"]:
            return None
        return "file" if votes["file"] else "old"
    written = [line for line in new_lines if line.strip()]
    base_new, base_old, base_file = (
        _common_indent(written),
        _common_indent(search),
        _common_indent(found),
    )
    if base_new == base_file != base_old:
        return "file"
    if base_new == base_old != base_file:
        return "old"
    in_old = {_indent(line) for line in search if line.strip()}
    in_file = {_indent(line) for line in found if line.strip()}
    used = {_indent(line) for line in written}
    file_only, old_only = bool(used & (in_file - in_old)), bool(used & (in_old - in_file))
    if file_only != old_only:
        return "file" if file_only else "old"
    return None


def _describe(indent: str) -> str:
    """``indent`` in words for a message: "none", "4 spaces", "2 tabs"."""
    if not indent:
        return "none"
    tabs, spaces = indent.count("\t"), indent.count(" ")
    parts = [f"{tabs} tab{'' if tabs == 1 else 's'}"] if tabs else []
    parts += [f"{spaces} space{'' if spaces == 1 else 's'}"] if spaces else []
    return " and ".join(parts)


def _reindent_or_keep(new: str, found: Sequence[str], search: Sequence[str]) -> str | _Unsure:
    shifted = _reindent(new, found, search)
    return new if shifted is None else shifted


@attrs.frozen
class _Scale:
    """File indent width = ``offset`` + ``factor`` × ``old`` indent width."""

    offset: Fraction
    factor: Fraction
    unit: str

    @classmethod
    def through(cls, table: dict[str, str]) -> _Scale | None:
        points = sorted({(len(have), len(want)) for have, want in table.items()})
        widths = [w for w, _ in points]
        if len(set(widths)) != len(widths):
            return None
        (w0, v0), *rest = points
        factor = Fraction(rest[0][1] - v0, rest[0][0] - w0) if rest else Fraction(1)
        offset = v0 - factor * w0
        if factor <= 0 or any(offset + factor * w != v for w, v in rest):
            return None
        wants = [want for want in table.values() if want]
        unit = "\t" if wants and all(set(want) == {"\t"} for want in wants) else " "
        return cls(offset, factor, unit)

    def indent(self, width: int) -> str | None:
        target = self.offset + self.factor * width
        if target.denominator != 1 or target < 0:
            return None
        return self.unit * int(target)


def _trim_like(new: str, old: str) -> str:
    """``new`` without the leading/trailing whitespace ``old`` has, when ``new`` has the same."""
    lead = old[: len(old) - len(old.lstrip())]
    trail = old[len(old.rstrip()) :]
    if lead and new.startswith(lead):
        new = new[len(lead) :]
    if trail and new.endswith(trail):
        new = new[: len(new) - len(trail)]
    return new


_ESCAPES = {
    "n": "\n",
    "t": "\t",
    "r": "\r",
    "'": "'",
    '"': '"',
    "`": "`",
    "\\": "\\",
    "$": "$",
    "\n": "\n",
}
_ESCAPE = re.compile(r"\\([ntr'\"`\\$\n])")


def _unescape(text: str) -> str:
    return _ESCAPE.sub(lambda m: _ESCAPES[m.group(1)], text)


def _best_closing(
    trimmed: Sequence[str], i: int, closings: Sequence[int], middle: Sequence[str]
) -> tuple[float, int] | None:
    """The best (score, closing line) for the block opening at line ``i``, or None when no
    closing anchor reaches :data:`BLOCK_ANCHOR_THRESHOLD`.

    Pair ``k`` is line ``i + 1 + k`` against ``middle[k]`` whichever closing anchor ends the
    block, so each similarity is computed once, and only while some closing anchor can still
    reach the threshold (the pairs not computed yet counted as perfect).
    """
    shapes = [(min(j - i - 1, len(middle)), max(j - i - 1, len(middle)), j) for j in closings]
    if not shapes:
        return None
    prefix = [0.0]
    for k in range(max(pairs for pairs, _count, _j in shapes)):
        if all(
            (prefix[min(k, pairs)] + max(0, pairs - k)) / count < BLOCK_ANCHOR_THRESHOLD
            for pairs, count, _j in shapes
        ):
            return None
        prefix.append(prefix[-1] + similarity(trimmed[i + 1 + k], middle[k]))
    score, j = max(((prefix[pairs] / count, j) for pairs, count, j in shapes), key=_nearest)
    return (score, j) if score >= BLOCK_ANCHOR_THRESHOLD else None


def _nearest(scored: tuple[float, int]) -> tuple[float, int]:
    """Best score first; on a tie, the nearer closing anchor."""
    return (scored[0], -scored[1])


def similarity(a: str, b: str) -> float:
    """1 − Levenshtein distance / length of the longer string (1.0 for two empty strings)."""
    longest = max(len(a), len(b))
    return 1.0 if longest == 0 else 1.0 - levenshtein(a, b) / longest


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insert, delete, substitute; each costs 1).

    Bit-parallel (Myers 1999, in Hyyrö's form for the distance between whole strings): one
    column of the dynamic-programming table is kept as two bit vectors of +1 / −1 steps
    (Python ints, one bit per character of the shorter string), so each character of the
    longer string costs a dozen integer operations instead of a loop.
    """
    if len(a) < len(b):
        a, b = b, a
    if not b:
        return len(a)
    masks: dict[str, int] = {}
    for bit, char in enumerate(b):
        masks[char] = masks.get(char, 0) | (1 << bit)
    full = (1 << len(b)) - 1
    top = 1 << (len(b) - 1)
    plus, minus, distance = full, 0, len(b)
    for char in a:
        eq = masks.get(char, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        up = minus | (~(xh | plus) & full)
        down = plus & xh
        if up & top:
            distance += 1
        elif down & top:
            distance -= 1
        up = ((up << 1) | 1) & full
        down = (down << 1) & full
        plus = down | (~(xv | up) & full)
        minus = up & xv
    return distance
