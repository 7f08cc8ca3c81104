"""A shell command line as the simple commands it runs, parsed with tree-sitter-bash.

The ``bash`` tool asks permission per simple command: every command in a pipeline, an
``&&``/``||`` list, a subshell, a ``$( … )`` or a loop counts. :func:`parse` gives a
:class:`ParsedScript`; :meth:`ParsedScript.walk` visits its :class:`SimpleCommand` s in the
order they run and follows which directories the shell may be in, so that ``cd .. && cat x``
judges ``x`` from the parent directory.

Directory flow is deliberately conservative: a ``cd`` may fail, so after ``cd d; …`` both the
old directory and ``d`` are possible (after ``cd d && …`` only ``d``); conditionals and loops
keep every directory any branch or pass may reach; subshells, pipelines, ``$( … )`` and
background jobs change nothing for what follows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

import attrs
import tree_sitter
import tree_sitter_bash

__all__ = [
    "ParsedScript",
    "Redirect",
    "SimpleCommand",
    "Step",
    "Word",
    "parse",
]

S = TypeVar("S")

Step = Callable[["SimpleCommand", frozenset[S]], frozenset[S] | None]
"""Called for each simple command with the directories the shell may be in; returns where the
shell is after the command succeeds (a ``cd``), or None when the command does not move it."""

_LANGUAGE = tree_sitter.Language(tree_sitter_bash.language())

_SIMPLE = frozenset({"command", "declaration_command", "unset_command"})
_SEQUENCES = frozenset({"program", "compound_statement", "do_group"})
_ISOLATED = frozenset({"subshell", "command_substitution", "process_substitution"})
_LOOPS = frozenset({"while_statement", "for_statement", "c_style_for_statement"})
_MAX_LOOP_PASSES = 8
_MAX_VISITS = 20_000  # nested loops re-walked pass after pass stay bounded
_DQUOTE_ESCAPE = re.compile(r"\\([$`\"\\])")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)
_GLOB = "*?[{"


@attrs.frozen(kw_only=True)
class Word:
    """One word of a command as written, and its value when it is a plain literal."""

    text: str
    """The source text, quotes and escapes included."""
    value: str | None
    """The word after quote removal, or None when it holds an expansion (``$x``, ``$( … )``,
    backticks, ``$'…'``), whose value is only known when the shell runs."""
    expands: bool = False
    """Unquoted ``*``, ``?``, ``[`` or ``{``, or a leading ``~``: the shell may turn it into
    other words (globs, brace expansion, tilde expansion), so ``value`` is only a template."""


@attrs.frozen(kw_only=True)
class Redirect:
    text: str
    """As written, e.g. ``2>/dev/null`` or ``> out.txt``."""
    operator: str
    """``>``, ``>>``, ``<``, ``&>``, ``>&``, ``<<`` (here-document), ``<<<`` (here-string), …"""
    target: Word | None
    """The file read or written; None for here-documents, here-strings and ``>&2``-style
    duplication or closing of descriptors."""


@attrs.frozen(kw_only=True)
class SimpleCommand:
    """One command the shell runs, or (``is_command`` False) only the redirections of a
    compound statement such as ``( … ) > out`` or ``while …; done < in``."""

    text: str
    """The source text, with this command's redirections."""
    assignments: str = ""
    """Leading ``NAME=value`` words as written (``FOO=1 BAR=2``), "" when none."""
    assignment_words: tuple[Word, ...] = ()
    """The same assignments, one word each (their values may name paths)."""
    words: tuple[Word, ...] = ()
    """The command name, then its arguments (no assignments, no redirections)."""
    redirects: tuple[Redirect, ...] = ()
    is_command: bool = True

    @property
    def name(self) -> str | None:
        """The literal command name, or None (no name, or an expansion such as ``$CMD``)."""
        return self.words[0].value if self.words else None


@attrs.frozen(kw_only=True)
class ParsedScript:
    source: str
    ok: bool
    """False when the parser met a syntax error; what it recovered is still walked."""
    _root: tree_sitter.Node

    def walk(self, start: frozenset[S], step: Step[S]) -> frozenset[S]:
        """Call ``step`` for every simple command, in the order they run (a loop's body may
        be walked more than once), and answer every directory the shell may end in. Raises
        RecursionError for absurdly deep nesting."""
        _, anywhere = _Walker(step).sequence(list(self._root.children), start)
        return anywhere

    def commands(self) -> list[SimpleCommand]:
        """Every simple command (redirect-only entries included), in the order they run."""
        seen: list[SimpleCommand] = []

        def record(command: SimpleCommand, where: frozenset[None]) -> None:
            seen.append(command)

        self.walk(frozenset({None}), record)
        return seen


def parse(source: str) -> ParsedScript:
    tree = tree_sitter.Parser(_LANGUAGE).parse(source.encode("utf-8"))
    root = tree.root_node
    return ParsedScript(source=source, ok=not root.has_error, root=root)


class _Walker(Generic[S]):
    """Runs the flow: each method takes the possible directories before a node and returns
    ``(after success, after anything)``."""

    def __init__(self, step: Step[S]) -> None:
        self._step = step
        # Redirections written after a list or pipeline belong to its last command.
        self._trailing: dict[int, list[tree_sitter.Node]] = {}
        self._visits = 0

    def sequence(
        self, children: list[tree_sitter.Node], where: frozenset[S]
    ) -> tuple[frozenset[S], frozenset[S]]:
        ok = anywhere = where
        for index, child in enumerate(children):
            if not child.is_named:
                continue
            following = children[index + 1] if index + 1 < len(children) else None
            if following is not None and following.type == "&":
                self.node(child, anywhere)  # a background job: its own process
                continue
            ok, anywhere = self.node(child, anywhere)
        return ok, anywhere

    def node(
        self, node: tree_sitter.Node, where: frozenset[S]
    ) -> tuple[frozenset[S], frozenset[S]]:
        self._visits += 1
        kind = node.type
        if kind in _SIMPLE:
            return self.simple(node, where)
        if kind in _SEQUENCES:
            return self.sequence(list(node.children), where)
        if kind == "list":
            return self.and_or(node, where)
        if kind == "redirected_statement":
            return self.redirected(node, where)
        if kind == "pipeline" or kind in _ISOLATED:
            for child in node.named_children:
                self.node(child, where)
            return where, where
        if kind == "function_definition":
            self.branches(node, where)  # judged where it is defined; it runs later
            return where, where
        if kind in _LOOPS:
            return self.loop(node, where)
        if kind == "negated_command":
            _, anywhere = self.branches(node, where)
            return anywhere, anywhere
        return self.branches(node, where)

    def branches(
        self, node: tree_sitter.Node, where: frozenset[S]
    ) -> tuple[frozenset[S], frozenset[S]]:
        """Anything else (``if``, ``case``, ``[[ ]]``, words holding ``$( … )``): every child
        may or may not run, so the directories only ever grow."""
        reach = where
        for child in node.named_children:
            _, anywhere = self.node(child, reach)
            reach = reach | anywhere
        return reach, reach

    def loop(
        self, node: tree_sitter.Node, where: frozenset[S]
    ) -> tuple[frozenset[S], frozenset[S]]:
        reach = where
        for _ in range(_MAX_LOOP_PASSES):
            _, grown = self.branches(node, reach)
            if grown == reach or self._visits > _MAX_VISITS:
                break
            reach = grown
        return reach, reach

    def and_or(
        self, node: tree_sitter.Node, where: frozenset[S]
    ) -> tuple[frozenset[S], frozenset[S]]:
        children = node.children
        ok, anywhere = where, where
        operator = ""
        first = True
        for child in children:
            if not child.is_named:
                operator = child.type
                continue
            if first:
                ok, anywhere = self.node(child, where)
                first = False
            elif operator == "||":
                # The right side runs where the left one failed; either may be the last.
                right_ok, right_any = self.node(child, anywhere)
                ok, anywhere = ok | right_ok, anywhere | right_any
            else:  # "&&": the right side runs only where the left one succeeded
                right_ok, right_any = self.node(child, ok)
                ok, anywhere = right_ok, anywhere | right_any
        return ok, anywhere

    def redirected(
        self, node: tree_sitter.Node, where: frozenset[S]
    ) -> tuple[frozenset[S], frozenset[S]]:
        body = node.child_by_field_name("body")
        redirects = node.children_by_field_name("redirect")
        for redirect in redirects:
            self.node(redirect, where)  # $( … ) in a target, commands after a here-document
        if body is not None and body.type in _SIMPLE:
            return self.simple(body, where, text=_text(node), extra=redirects)
        last = _last_command(body) if body is not None else None
        if last is not None:
            self._trailing.setdefault(last.id, []).extend(redirects)
        else:  # ( … ) > out, while …; done < in: the files are opened before the body runs
            entry = SimpleCommand(
                text=_text(node), redirects=_redirects(redirects), is_command=False
            )
            self._step(entry, where)
        return self.node(body, where) if body is not None else (where, where)

    def simple(
        self,
        node: tree_sitter.Node,
        where: frozenset[S],
        *,
        text: str | None = None,
        extra: Sequence[tree_sitter.Node] = (),
    ) -> tuple[frozenset[S], frozenset[S]]:
        trailing = self._trailing.get(node.id, [])
        text = " ".join([text or _text(node), *(_text(r) for r in trailing)])
        # Substitutions run before the command itself.
        for child in node.named_children:
            for nested in _substitutions(child):
                self.node(nested, where)
        moved = self._step(_simple_command(node, text, [*extra, *trailing]), where)
        if moved is None:
            return where, where
        return moved, where | moved


def _simple_command(
    node: tree_sitter.Node, text: str, extra: list[tree_sitter.Node]
) -> SimpleCommand:
    assignments: list[str] = []
    assignment_words: list[Word] = []
    words: list[Word] = []
    redirects: list[tree_sitter.Node] = []
    if node.type != "command":  # export/declare/local/readonly/unset: the keyword, then words
        keyword = node.children[0] if node.children else None
        if keyword is not None:
            words.append(Word(text=_text(keyword), value=_text(keyword)))
        words.extend(_word(child) for child in node.named_children)
        return SimpleCommand(text=text, words=tuple(words))
    for index, child in enumerate(node.children):
        field = node.field_name_for_child(index)
        if field == "redirect" or child.type.endswith("_redirect"):
            redirects.append(child)
        elif child.type == "variable_assignment" and not words:
            assignments.append(_text(child))
            assignment_words.append(_word(child))
        elif field == "name":
            words.append(_word(child.named_children[0] if child.named_child_count else child))
        elif child.is_named:
            words.append(_word(child))
    return SimpleCommand(
        text=text,
        assignments=" ".join(assignments),
        assignment_words=tuple(assignment_words),
        words=tuple(words),
        redirects=_redirects([*redirects, *extra]),
    )


def _redirects(nodes: list[tree_sitter.Node]) -> tuple[Redirect, ...]:
    found: list[Redirect] = []
    for node in nodes:
        if node.type != "file_redirect":
            operator = "<<<" if node.type == "herestring_redirect" else "<<"
            found.append(Redirect(text=_text(node), operator=operator, target=None))
            continue
        destination = node.child_by_field_name("destination")
        operator = "".join(_text(child) for child in node.children if not child.is_named)
        target: Word | None = None
        if destination is not None:
            word = _word(destination)
            duplicates = operator in (">&", "<&") and (
                destination.type == "number" or word.value == "-"
            )
            if not duplicates:
                target = word
        found.append(Redirect(text=_text(node), operator=operator, target=target))
    return tuple(found)


def _last_command(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The simple command a trailing redirection belongs to, if the body ends in one."""
    while True:
        if node.type in _SIMPLE:
            return node
        if node.type in ("list", "pipeline", "negated_command", "redirected_statement"):
            children = node.named_children
            if node.type == "redirected_statement":
                body = node.child_by_field_name("body")
                children = [body] if body is not None else []
            if not children:
                return None
            node = children[-1]
            continue
        return None


def _substitutions(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """``$( … )``, backticks and ``<( … )`` inside a word, outermost first."""
    if node.type in ("command_substitution", "process_substitution"):
        yield node
        return
    for child in node.named_children:
        yield from _substitutions(child)


def _word(node: tree_sitter.Node) -> Word:
    if node.type == "variable_assignment":
        value = node.child_by_field_name("value")
        name = node.child_by_field_name("name")
        prefix = f"{_text(name)}=" if name is not None else ""
        if value is None:
            return Word(text=_text(node), value=prefix)
        literal = _literal(value)
        return Word(
            text=_text(node),
            value=None if literal is None else prefix + literal,
            expands=_expands(value),
        )
    return Word(text=_text(node), value=_literal(node), expands=_expands(node))


def _expands(node: tree_sitter.Node) -> bool:
    """Whether the shell may expand the unquoted parts of ``node`` into other words."""
    parts = node.named_children if node.type == "concatenation" else [node]
    if parts and _text(parts[0]).startswith("~") and parts[0].type == "word":
        return True
    for part in parts:
        if part.type == "brace_expression":
            return True
        if part.type == "word" and any(c in _GLOB for c in _ESCAPE.sub("", _text(part))):
            return True
    return False


def _literal(node: tree_sitter.Node) -> str | None:
    kind = node.type
    text = _text(node)
    if kind in ("word", "number", "variable_name"):
        return None if "$" in text or "`" in text else _ESCAPE.sub(r"\1", text)
    if kind == "raw_string":
        return text[1:-1]
    if kind == "string":
        parts = node.named_children
        if any(part.type != "string_content" for part in parts):
            return None
        return _DQUOTE_ESCAPE.sub(r"\1", "".join(_text(part) for part in parts))
    if kind == "concatenation":
        values = [_literal(part) for part in node.named_children]
        if any(value is None for value in values):
            return None
        return "".join(value for value in values if value is not None)
    return None


def _text(node: tree_sitter.Node) -> str:
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw is not None else ""
