"""What a ``bash`` command line needs before it may run: its patterns and the paths it touches.

Each simple command (pipelines, lists, subshells and ``$( … )`` included) is resolved to
the words it really runs (:mod:`lsp_agent.shell.command_words`); its patterns, and what an
"always" answer saves, come from those words. A command name only the shell knows, or a line
that does not parse, is *unjudged*: no rule or saved approval may allow it (a configured
deny still applies) and only a person may approve it.

Every argument that could be a path is judged after the same resolution (option values
``--opt=value`` and ``key=value`` values included), from every directory the shell may be in
(``cd`` moves later commands; ``env -C``/``git -C``/``sudo -D`` move the command they run);
redirection targets and the working directory too. A path outside the workspace needs
``external_directory`` for its folder; a word whose path cannot be known before the shell
runs (a variable other than ``$PWD``/``$HOME``, a command substitution, brace expansion,
``~+``/``~user``, a glob that may climb with ``..``, a ``cd`` that ``CDPATH`` or a variable
decides, interpreter code) needs it as well, listed as it is written. The agent's own data
folder is refused outright.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

import attrs

from lsp_agent.shell.command_words import CommandUse, Pattern, resolve_command
from lsp_agent.shell.parse import SimpleCommand, Word, parse
from lsp_agent.workspace.boundary import Outside, WorkspaceBoundary

__all__ = ["PermissionPlan", "plan_permissions"]

_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty"}
    | {"/dev/stdin", "/dev/stdout", "/dev/stderr"}
)
_WILDCARDS = "*?["
_SOMEWHERE = "\0somewhere"
"""A directory only the running shell knows (after ``cd $d``): relative paths from it
cannot be judged."""
_MAX_SCRIPTS = 64
_KNOWN_VARIABLE = re.compile(r"\$(?:\{(PWD|HOME)\}|(PWD|HOME)\b)")
_PLAIN_PATH = re.compile(r"[\w./+@%,-]*")
_RESETS = re.compile(r"\b(HOME|PWD|CDPATH)\+?=")


@attrs.frozen(kw_only=True)
class PermissionPlan:
    """What a command line needs before it may run."""

    patterns: tuple[str, ...]
    """The resolved (and, when different, written) pattern of each simple command; ``cd``
    has none."""
    always: tuple[str, ...]
    """What "always allow" saves: ``git log *`` for ``git log --oneline``."""
    outside: tuple[str, ...]
    """Folders outside the workspace the command touches (``external_directory``)."""
    parsed: bool
    """False: the parser failed; the whole command is one unjudged pattern."""
    unjudged: tuple[str, ...] = ()
    """Patterns no rule may allow (a command named by an expansion, a line that does not
    parse)."""
    unknown: tuple[str, ...] = ()
    """Words whose path cannot be judged before the shell runs, and interpreter code."""
    code: tuple[str, ...] = ()
    """The interpreter code of ``unknown`` (``python3 -c …``, ``bash (a shell)``…); the
    rest of it are paths only the running shell knows."""
    hidden: tuple[str, ...] = ()
    """Paths in the agent's own data folder: the command is refused."""


def plan_permissions(
    command: str,
    *,
    workdir: str,
    boundary: WorkspaceBoundary,
    home: str | None,
    env: Mapping[str, str] | None = None,
) -> PermissionPlan:
    """The patterns and outside folders of ``command`` run in ``workdir``.

    ``workdir`` is absolute and already approved (it counts as inside); ``home`` is what ``~``
    means to the command (None: ``~`` paths cannot be judged); ``env`` is the command's
    environment (a ``CDPATH`` in it makes relative ``cd`` targets unjudgeable).
    """
    resets = set(_RESETS.findall(command))
    planner = _Planner(
        workdir=workdir,
        boundary=boundary,
        home=None if "HOME" in resets else home,
        cdpath=bool((env or {}).get("CDPATH")) or "CDPATH" in resets,
        pwd_known="PWD" not in resets,
    )
    parsed = planner.run(command, frozenset({workdir})) is not None
    patterns: tuple[str, ...]
    always: tuple[str, ...]
    unjudged: tuple[str, ...]
    if not parsed:
        patterns = unjudged = (command,)
        always = ()  # what cannot be judged is never saved
    else:
        patterns = tuple(dict.fromkeys(p.text for p in planner.patterns))
        always = tuple(dict.fromkeys(p.always for p in planner.patterns))
        unjudged = tuple(dict.fromkeys(planner.unjudged))
        patterns = tuple(dict.fromkeys([*patterns, *unjudged]))
    return PermissionPlan(
        patterns=patterns,
        always=always,
        outside=tuple(planner.outside),
        parsed=parsed,
        unjudged=unjudged,
        unknown=tuple(planner.unknown),
        code=tuple(code for code in planner.unknown if code in planner.code),
        hidden=tuple(planner.hidden),
    )


class _Planner:
    """The step :meth:`ParsedScript.walk` calls: collects patterns and paths, and tells
    where ``cd`` moves the shell."""

    def __init__(
        self,
        *,
        workdir: str,
        boundary: WorkspaceBoundary,
        home: str | None,
        cdpath: bool,
        pwd_known: bool,
    ) -> None:
        self._workdir = workdir
        self._boundary = boundary
        self._home = home
        self._cdpath = cdpath
        self._pwd_known = pwd_known
        self._visited: set[str] = {workdir}
        self._scripts = 0
        self.patterns: list[Pattern] = []
        self.unjudged: list[str] = []
        self.outside: dict[str, None] = {}  # insertion-ordered sets
        self.unknown: dict[str, None] = {}
        self.code: set[str] = set()
        self.hidden: dict[str, None] = {}

    def run(self, source: str, where: frozenset[str]) -> frozenset[str] | None:
        """Walk ``source``; the directories it may end in, or None when it does not parse
        (or nests too deep to follow)."""
        script = parse(source)
        if not script.ok:
            return None
        try:
            return script.walk(where, self.step)
        except RecursionError:
            return None

    def step(self, command: SimpleCommand, where: frozenset[str]) -> frozenset[str] | None:
        for redirect in command.redirects:
            if redirect.target is not None:
                self._judge_word(redirect.target, where, option_values=False)
        if not command.is_command:
            return None
        use = resolve_command(command)
        self.patterns.extend(use.patterns)
        self.unjudged.extend(use.unjudged)
        for code in use.code:
            self.unknown.setdefault(code, None)
            self.code.add(code)
        for word, dirs in use.paths:
            self._judge_word(word, self._enter(where, dirs), option_values=True)
        moved: frozenset[str] | None = None
        for line, dirs in use.scripts:
            moved = self._inner(line, self._enter(where, dirs))
        if use.cd is not None:
            moved = self._change_directory(use, where)
            return moved if use.cd_certain else where | moved
        if use.in_shell:  # eval, source: may move this shell
            return where | (moved if moved is not None else frozenset({_SOMEWHERE}))
        return None

    def _inner(self, line: str, where: frozenset[str]) -> frozenset[str] | None:
        self._scripts += 1
        ended = self.run(line, where) if self._scripts <= _MAX_SCRIPTS else None
        if ended is None:
            self.unjudged.append(line)
        return ended

    def _enter(self, where: frozenset[str], dirs: tuple[Word, ...]) -> frozenset[str]:
        """Where a command runs after a wrapper's ``-C dir`` options."""
        for word in dirs:
            path = self._literal_path(word, where)
            if path is None:
                return frozenset({_SOMEWHERE})
            where = frozenset(
                _SOMEWHERE
                if d == _SOMEWHERE and not os.path.isabs(path)
                else os.path.realpath(os.path.join(d, path))
                for d in where
            )
        return where

    def _change_directory(self, use: CommandUse, where: frozenset[str]) -> frozenset[str]:
        arguments = [w for w in use.cd or () if not _is_option(w)]
        name = use.cd_name
        back = name == "popd" or (name == "pushd" and not arguments)
        if back or any(w.value == "-" or (w.value or "").startswith("+") for w in arguments):
            return frozenset(self._visited)  # back to somewhere it has been (the stack)
        if not arguments:
            target = self._home
            if target is None:
                self.unknown.setdefault(f"{name} (the home folder)", None)
                return where | {_SOMEWHERE}
        else:
            word = arguments[0]
            value = word.value or ""
            relative = not value.startswith(("/", "./", "../", "~")) and value not in (".", "..")
            if self._cdpath and word.value is not None and relative:
                self.unknown.setdefault(f"{name} {word.text} (CDPATH decides)", None)
                return where | {_SOMEWHERE}
            found = self._literal_path(word, where)
            if found is None:
                self.unknown.setdefault(f"{name} {word.text}", None)
                return where | {_SOMEWHERE}
            target = found
        moved = frozenset(
            _SOMEWHERE
            if d == _SOMEWHERE and not os.path.isabs(target)
            else os.path.realpath(os.path.join(d, target))
            for d in where
        )
        for directory in sorted(moved - {_SOMEWHERE}):
            self._note(directory, directory=True)
        self._visited |= moved
        return moved

    def _judge_word(self, word: Word, where: frozenset[str], *, option_values: bool) -> None:
        for candidate in _candidates(word) if option_values else [word]:
            path = self._literal_path(candidate, where)
            if path is None:
                self.unknown.setdefault(word.text, None)
                continue
            for directory in sorted(where):
                if directory == _SOMEWHERE and not os.path.isabs(path):
                    self.unknown.setdefault(word.text, None)
                    continue
                full = os.path.normpath(os.path.join(directory, path))
                if full in _DEVICES or full.startswith("/dev/fd/"):
                    continue
                self._note(full, directory=False)

    def _note(self, path: str, *, directory: bool) -> None:
        where = self._boundary.resolve(path, extra_roots=(self._workdir,))
        if not isinstance(where, Outside):
            return
        if where.hidden:
            self.hidden.setdefault(where.resolved, None)
            return
        folder = where.resolved
        if not directory and not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        self.outside.setdefault(folder, None)

    def _literal_path(self, word: Word, where: frozenset[str]) -> str | None:
        """The path a word names, cut at its first wildcard; None when it cannot be known
        before the shell runs."""
        value = word.value
        if value is None:
            value = self._known_variables(word, where)
            if value is None:
                return None
        elif word.expands:
            if "{" in word.text:
                return None  # brace expansion: other words entirely
            if word.text.startswith("~"):
                head, sep, rest = value.partition("/")
                if head != "~" or self._home is None:
                    return None  # ~+, ~-, ~user: only the shell knows
                value = os.path.join(self._home, rest) if sep else self._home
        cut = min((i for i in (value.find(c) for c in _WILDCARDS) if i >= 0), default=-1)
        if cut >= 0 and word.expands:
            climbs = value[cut:]
            if ".." in climbs or re.search(r"(^|/)\.[*?\[]", value[value.rfind("/", 0, cut) + 1 :]):
                return None  # the glob may match ..
            value = value[:cut] or "."
        return value

    def _known_variables(self, word: Word, where: frozenset[str]) -> str | None:
        """``$PWD`` and ``$HOME`` are known (one directory, an unchanged value); any other
        expansion is not."""
        if "`" in word.text or "$(" in word.text or "$'" in word.text:
            return None
        directories = where - {_SOMEWHERE}
        known = {"HOME": self._home}
        if self._pwd_known and len(directories) == 1 and len(where) == 1:
            known["PWD"] = next(iter(directories))

        def value_of(match: re.Match[str]) -> str:
            found = known.get(match.group(1) or match.group(2))
            if found is None or not _PLAIN_PATH.fullmatch(found):
                raise LookupError(match.group(0))
            return found

        try:
            text = _KNOWN_VARIABLE.sub(value_of, word.text)
        except LookupError:
            return None
        if "$" in text:
            return None
        commands = parse(f": {text}").commands()
        if len(commands) != 1 or len(commands[0].words) != 2:
            return None
        return commands[0].words[1].value


def _is_option(word: Word) -> bool:
    value = word.value
    return value is not None and value.startswith("-") and value != "-"


def _candidates(word: Word) -> list[Word]:
    """The parts of an argument that may name a path: the word, the value of ``--opt=v``
    and ``key=v``, and what follows a short option (``-o../x``)."""
    value = word.value
    if value is None:
        return [word]
    if value == "--" or value == "-":
        return []
    found: list[Word] = []
    if value.startswith("-"):
        body = value.lstrip("-")
        if "=" in body:
            found.append(_part(word, body.partition("=")[2]))
        elif not value.startswith("--") and len(body) > 1:
            rest = body[1:]
            if "/" in rest or rest in (".", ".."):
                found.append(_part(word, rest))
        return found
    found.append(word)
    if "=" in value:
        found.append(_part(word, value.partition("=")[2]))
    return found


def _part(word: Word, value: str) -> Word:
    return Word(text=word.text, value=value, expands=word.expands)
