"""What a simple command really runs, as permission rules see it.

Rules are matched against command *words*, never the raw text: quotes and escapes are
removed (``\\rm``, ``r''m`` and ``"rm"`` are ``rm``), leading ``NAME=value`` assignments are
dropped, a command named by a path is known by its basename (``/bin/rm`` is ``rm``), and
wrappers that run another command are looked through (``command``, ``env``, ``nice``,
``sudo``, ``xargs``, ``find -exec`` …). Each command therefore gives up to two patterns:

- the **resolved** one (``rm x``), which deny rules written for the program match, and
- the **written** one (``sudo rm x``, ``FOO=1 rm x``, ``/bin/rm x``, ``git -c k=v push``),
  when the parts that change what runs (assignments, a path, a privilege or fan-out
  wrapper, git's configuration options) make it differ; an allow must cover it too.

Wrappers that only change how a program is scheduled (``nice``, ``nohup``, ``timeout``,
``time``, ``stdbuf``, ``ionice``, ``setsid``, ``command``, ``builtin``, ``exec``, ``env``
without assignments) leave no trace in either pattern.

Known destructive equivalents give the pattern of what they are equivalent to as well:
``unlink f`` and ``find … -delete`` also give ``rm …``, so ``deny rm *`` means "no deleting
files", not "no program spelled rm".

What cannot be judged is reported, never matched as text: a command name only the shell
knows (``$(echo rm) x``, ``$CMD``, a glob or brace in the name) is *unjudged*; so is
interpreter code (``python3 -c``, ``perl -e``, ``node -e``, ``bash -c "$x"``, ``eval "$x"``,
a shell or interpreter reading its program from standard input). A shell's ``-c`` string, an
``eval`` of literal words, ``watch``'s command and ``env -S`` are command lines of their own
(:attr:`CommandUse.scripts`), parsed and judged like the outer one.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

import attrs

from lsp_agent.core.permission.rules import literal
from lsp_agent.shell.arity import always_pattern
from lsp_agent.shell.parse import SimpleCommand, Word

__all__ = ["CD_FAMILY", "NO_PATH_ARGUMENTS", "CommandUse", "Pattern", "resolve_command"]

CD_FAMILY = frozenset({"cd", "pushd", "popd", "chdir"})
NO_PATH_ARGUMENTS = frozenset(
    {"echo", "printf", "true", "false", ":", "test", "[", "exit", "return", "shift"}
    | {"export", "local", "declare", "typeset", "readonly", "unset", "set", "alias"}
)
"""Commands that touch no file through their arguments (redirections are judged apart)."""

_MAX_DEPTH = 8

# name -> (options taking a value, positional words before the command)
_Spec = tuple[frozenset[str], int]


def _spec(values: str = "", *, long: Sequence[str] = (), positional: int = 0) -> _Spec:
    return frozenset([f"-{c}" for c in values] + [f"--{name}" for name in long]), positional


_TRANSPARENT: dict[str, _Spec] = {
    "command": _spec("", long=()),
    "builtin": _spec(),
    "exec": _spec("a"),
    "nice": _spec("n", long=("adjustment",)),
    "nohup": _spec(),
    "time": _spec("fo", long=("format", "output")),
    "timeout": _spec("sk", long=("signal", "kill-after"), positional=1),
    "stdbuf": _spec("ioe", long=("input", "output", "error")),
    "ionice": _spec("cnp", long=("class", "classdata", "pid")),
    "setsid": _spec(),
    "busybox": _spec(),
}
"""Wrappers that run their command unchanged (only scheduled differently)."""

_VISIBLE: dict[str, _Spec] = {
    "sudo": _spec(
        "ugCDhprtTU",
        long=(
            "user",
            "group",
            "close-from",
            "chdir",
            "host",
            "prompt",
            "role",
            "type",
            "command-timeout",
            "other-user",
        ),
    ),
    "doas": _spec("uC"),
    "xargs": _spec(
        "adEILnPs",
        long=(
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ),
    ),
}
"""Wrappers whose own words change what runs (privileges, arguments from standard input):
they stay in the written pattern."""

_ENV_VALUES = frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"})
_GIT_VALUES = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix", "--config-env"}
    | {"--list-cmds", "--attr-source"}
)
_GIT_HARMLESS = frozenset(
    {"--no-pager", "-P", "-p", "--paginate", "--no-optional-locks", "--literal-pathspecs"}
    | {"--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-replace-objects"}
    | {"--no-lazy-fetch", "--no-advice"}
)
_SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "mksh", "ash", "yash", "fish"})
_SHELL_VALUES = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_PYTHON = re.compile(r"(python|pypy)[0-9.]*")
# interpreter -> (options whose value is code, options taking another value)
_INTERPRETERS: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    "perl": (frozenset({"-e", "-E"}), frozenset({"-I", "-M", "-m", "-x"})),
    "ruby": (frozenset({"-e"}), frozenset({"-I", "-r", "-C", "-E", "-x"})),
    "node": (
        frozenset({"-e", "--eval", "-p", "--print"}),
        frozenset({"-r", "--require", "--import", "--input-type", "--loader"}),
    ),
    "php": (frozenset({"-r", "-B", "-R", "-E"}), frozenset({"-c", "-d", "-z"})),
    "lua": (frozenset({"-e"}), frozenset({"-l"})),
    "python": (frozenset({"-c"}), frozenset({"-W", "-X", "-Q"})),
}
_INTERPRETERS["nodejs"] = _INTERPRETERS["node"]
_INTERPRETERS["luajit"] = _INTERPRETERS["lua"]
_SHADOWING = frozenset({"alias", "hash", "enable"})
_INJECTING = frozenset(
    {"BASH_ENV", "ENV", "LD_PRELOAD", "LD_AUDIT", "PERL5OPT", "NODE_OPTIONS", "PYTHONSTARTUP"}
)
"""Variables that make a program load code of their choosing."""
_ONLY_INFO = frozenset({"--version", "-V", "--help", "-h"})
_WATCH_VALUES = frozenset({"-n", "--interval", "-q", "--equexit"})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_FIND_LEADING = frozenset({"-H", "-L", "-P"})


@attrs.frozen(kw_only=True)
class Pattern:
    text: str
    """What rules are matched against: words joined by single spaces."""
    always: str
    """What an "always allow" answer for it saves (the arity prefix and `` *``)."""


@attrs.frozen(kw_only=True)
class CommandUse:
    """Everything one simple command asks of the rules and of the path check."""

    patterns: tuple[Pattern, ...] = ()
    unjudged: tuple[str, ...] = ()
    """Commands whose name only the shell knows: no rule may allow them."""
    code: tuple[str, ...] = ()
    """Interpreter code that cannot be judged (it may touch any path)."""
    paths: tuple[tuple[Word, tuple[Word, ...]], ...] = ()
    """Argument words that may name paths, each with the directories (``env -C``, ``git
    -C``, ``sudo -D``) it is relative to, outermost first."""
    scripts: tuple[tuple[str, tuple[Word, ...]], ...] = ()
    """Inner command lines (``bash -c '…'``, ``eval …``), with their directories."""
    cd: tuple[Word, ...] | None = None
    """The arguments of a ``cd``/``pushd``/``popd`` this shell runs (it moves the shell)."""
    cd_name: str = ""
    cd_certain: bool = True
    """False when a wrapper may run another ``cd`` program (the shell may stay put)."""
    in_shell: bool = False
    """The command runs in this shell (``eval``, ``source``): it may move it."""


def resolve_command(command: SimpleCommand) -> CommandUse:
    """Resolve ``command``'s words (see the module docstring)."""
    builder = _Builder(redirects=tuple(_redirect_text(r.text) for r in command.redirects))
    builder.resolve(list(command.words), list(command.assignment_words), (), (), 0)
    return builder.build()


@attrs.define
class _Builder:
    redirects: tuple[str, ...]
    patterns: list[Pattern] = attrs.Factory(list)
    unjudged: list[str] = attrs.Factory(list)
    code: list[str] = attrs.Factory(list)
    paths: list[tuple[Word, tuple[Word, ...]]] = attrs.Factory(list)
    scripts: list[tuple[str, tuple[Word, ...]]] = attrs.Factory(list)
    cd: tuple[Word, ...] | None = None
    cd_name: str = ""
    cd_certain: bool = True
    in_shell: bool = False

    def build(self) -> CommandUse:
        return CommandUse(
            patterns=tuple(dict.fromkeys(self.patterns)),
            unjudged=tuple(dict.fromkeys(self.unjudged)),
            code=tuple(dict.fromkeys(self.code)),
            paths=tuple(self.paths),
            scripts=tuple(self.scripts),
            cd=self.cd,
            cd_name=self.cd_name,
            cd_certain=self.cd_certain,
            in_shell=self.in_shell,
        )

    def judge(self, words: Sequence[Word], where: tuple[Word, ...]) -> None:
        self.paths.extend((word, where) for word in words)

    def resolve(
        self,
        words: list[Word],
        prefix: list[Word],
        wrappers: tuple[Word, ...],
        where: tuple[Word, ...],
        depth: int,
    ) -> None:
        """``prefix``: assignments written before the command (the written pattern keeps
        them); ``wrappers``: the words of visible wrappers around it."""
        # A literal value may name a path; one the shell computes is only a value.
        self.judge([w for w in prefix if w.value is not None], where)
        written_prefix = [*(_shown(w) for w in prefix), *(_shown(w) for w in wrappers)]
        if not words:
            if written_prefix:  # FOO=1 alone: an assignment in this shell
                self.patterns.append(
                    Pattern(
                        text=" ".join(written_prefix),
                        always=" ".join(literal(w) for w in written_prefix),
                    )
                )
            return
        head, rest = words[0], words[1:]
        if depth > _MAX_DEPTH or head.value is None or head.expands or not head.value:
            self.unjudged.append(" ".join([*written_prefix, *(_shown(w) for w in words)]))
            self.judge(rest, where)
            return
        name = os.path.basename(head.value) if "/" in head.value else head.value
        if name in _TRANSPARENT or name == "env":
            inner = self.unwrap(name, head, rest, prefix, wrappers, where, depth)
            if inner is not None:
                return
        elif name in _VISIBLE:
            self.visible(name, head, rest, prefix, wrappers, where, depth)
            return
        if name in CD_FAMILY:
            self.cd, self.cd_name = tuple(rest), name
            self.cd_certain = not wrappers and depth == 0  # else it may not move this shell
            return
        if name in _SHADOWING and _shadows(name, rest):
            # alias x=rm, hash -p /bin/rm ls, enable -f: later names may mean other programs
            self.unjudged.append(" ".join([*written_prefix, *(_shown(w) for w in words)]))
            return
        injected = [w for w in prefix if (w.value or w.text).partition("=")[0] in _INJECTING]
        for word in injected:
            self.code.append(f"{word.text} (makes {name} run other code)")
        if name in NO_PATH_ARGUMENTS:
            self.add(written_prefix, head.value, name, rest)
            return
        if name == "git":
            self.git(head, rest, written_prefix, where)
            return
        if name == "find":
            self.find(head, rest, written_prefix, where, depth)
            return
        if name == "watch":
            self.watch(head, rest, written_prefix, where, depth)
            return
        self.add(written_prefix, head.value, name, rest)
        self.judge(rest, where)
        if name == "unlink":
            self.add([], "rm", "rm", rest)
        self.interpreter(name, rest, where, depth)

    def add(
        self,
        prefix: list[str],
        name: str,
        resolved: str,
        args: Sequence[Word],
        *,
        between: Sequence[str] = (),
    ) -> None:
        """The resolved pattern, and the written one when it differs. ``prefix``: written
        before the name (assignments, wrappers); ``between``: after it (git's options)."""
        values = [_shown(w) for w in args]
        always = always_pattern([resolved, *values])
        self.patterns.append(
            Pattern(text=" ".join([resolved, *values, *self.redirects]), always=always)
        )
        written = [*prefix, name, *between]
        if written != [resolved]:
            tail = always.partition(" ")[2]
            self.patterns.append(
                Pattern(
                    text=" ".join([*written, *values, *self.redirects]),
                    always=" ".join([*(literal(w) for w in written), tail]),
                )
            )

    def unwrap(
        self,
        name: str,
        head: Word,
        rest: list[Word],
        prefix: list[Word],
        wrappers: tuple[Word, ...],
        where: tuple[Word, ...],
        depth: int,
    ) -> bool | None:
        """Look through a transparent wrapper (or ``env``); None: it runs nothing itself.

        A wrapper named by a path (``/tmp/nice rm x``) may be any program: it stays in the
        written pattern, so an allow must cover it."""
        if "/" in (head.value or ""):
            wrappers = (*wrappers, head)
        if name == "env":
            return self.env(head, rest, prefix, wrappers, where, depth)
        values, positional = _TRANSPARENT[name]
        options, inner = _split_options(rest, values)
        if name == "command" and any(
            (w.value or "").startswith("-") and ("v" in (w.value or "") or "V" in (w.value or ""))
            for w in options
        ):
            return None  # command -v x: only looks it up
        if name == "ionice" and any(w.value in ("-p", "--pid") for w in options):
            return None
        self.judge(options, where)
        self.judge(inner[:positional], where)
        if wrappers and wrappers[-1] is head:
            wrappers = (*wrappers, *options, *inner[:positional])
        inner = inner[positional:]
        if not inner:
            return None
        self.resolve(inner, prefix, wrappers, where, depth + 1)
        return True

    def env(
        self,
        head: Word,
        rest: list[Word],
        prefix: list[Word],
        wrappers: tuple[Word, ...],
        where: tuple[Word, ...],
        depth: int,
    ) -> bool | None:
        index = 0
        assignments: list[Word] = []
        split: Word | None = None
        while index < len(rest):
            word = rest[index]
            value = word.value
            if value is None:
                break
            if value == "--":
                index += 1
                break
            option, has_value, attached = value.partition("=")
            if value.startswith("--") and option in _ENV_VALUES:
                given = Word(text=attached, value=attached) if has_value else _at(rest, index + 1)
                index += 1 if has_value else 2
            elif value.startswith("-") and len(value) > 1 and not value.startswith("--"):
                letter = next((c for c in value[1:] if f"-{c}" in _ENV_VALUES), None)
                if letter is None:
                    index += 1
                    continue
                tail = value[value.index(letter) + 1 :]
                option = f"-{letter}"
                given = Word(text=tail, value=tail) if tail else _at(rest, index + 1)
                index += 1 if tail else 2
            elif value.startswith("-"):
                index += 1
                continue
            elif "=" in value:
                assignments.append(word)
                index += 1
                continue
            else:
                break
            if given is None:
                continue
            if option in ("-C", "--chdir"):
                self.judge([given], where)
                where = (*where, given)
            elif option in ("-S", "--split-string"):
                split = given
        inner = rest[index:]
        if wrappers and wrappers[-1] is head:  # /usr/bin/env …: its words are written too
            wrappers = (*wrappers, *rest[:index])
            self.judge([w for w in assignments if w.value is not None], where)
            assignments = []
        if split is not None:
            if split.value is None:
                self.unjudged.append(f"env -S {split.text}")
                return True
            line = " ".join([split.value, *(w.value or w.text for w in inner)])
            self.judge(assignments, where)
            self.scripts.append((line, where))
            return True
        if not inner:
            return None
        self.resolve(inner, [*prefix, *assignments], wrappers, where, depth + 1)
        return True

    def visible(
        self,
        name: str,
        head: Word,
        rest: list[Word],
        prefix: list[Word],
        wrappers: tuple[Word, ...],
        where: tuple[Word, ...],
        depth: int,
    ) -> None:
        values, _ = _VISIBLE[name]
        options, inner = _split_options(rest, values)
        self.judge(options, where)
        if name == "sudo":
            for index, word in enumerate(options):
                if word.value in ("-D", "--chdir") and index + 1 < len(options):
                    where = (*where, options[index + 1])
                elif (word.value or "").startswith("--chdir="):
                    value = (word.value or "")[len("--chdir=") :]
                    where = (*where, Word(text=value, value=value))
            shell = any(w.value in ("-s", "-i", "--shell", "--login") for w in options)
            while inner and inner[0].value is not None and _is_assignment(inner[0].value):
                prefix = [*prefix, inner[0]]
                inner = inner[1:]
            if not inner and shell:
                self.code.append(" ".join(_shown(w) for w in [head, *options]) + " (a shell)")
        if name == "xargs" and not inner:
            inner = [Word(text="echo", value="echo")]
        around = (*wrappers, head, *options)
        if not inner:
            written = [*(_shown(w) for w in prefix), *(_shown(w) for w in wrappers)]
            self.add(written, head.value or name, name, options)
            return
        self.resolve(inner, prefix, around, where, depth + 1)

    def git(
        self, head: Word, rest: list[Word], written: list[str], where: tuple[Word, ...]
    ) -> None:
        kept: list[Word] = []
        index = 0
        while index < len(rest):
            word = rest[index]
            value = word.value or ""
            if word.value is None or not value.startswith("-"):
                break
            option, has_value, attached = value.partition("=")
            if value in _GIT_HARMLESS:
                index += 1
                continue
            if option in _GIT_VALUES:
                given = Word(text=attached, value=attached) if has_value else _at(rest, index + 1)
                taken = 1 if has_value else 2
                kept.extend(rest[index : index + taken])
                if given is not None and option in ("-c", "--config-env"):
                    # alias.x=!cmd, core.pager, core.sshCommand…: git may run any program
                    self.code.append(f"git {option} {given.text} (configuration may run programs)")
                elif given is not None:
                    self.judge([given], where)
                    if option == "-C":
                        where = (*where, given)
                index += taken
                continue
            if option == "--exec-path" and has_value:
                self.code.append(f"git {value} (runs git programs from there)")
            kept.append(word)
            index += 1
        command = rest[index:]
        between = [_shown(w) for w in kept]
        self.add(written, head.value or "git", "git", command, between=between)
        self.judge(command, where)

    def find(
        self,
        head: Word,
        rest: list[Word],
        written: list[str],
        where: tuple[Word, ...],
        depth: int,
    ) -> None:
        self.add(written, head.value or "find", "find", rest)
        self.judge(rest, where)
        roots: list[Word] = []
        index = 0
        while index < len(rest) and (rest[index].value or "") in _FIND_LEADING:
            index += 1
        while index < len(rest):
            value = rest[index].value
            if value is not None and (value.startswith("-") or value in ("(", "!", ")")):
                break
            roots.append(rest[index])
            index += 1
        while index < len(rest):
            value = rest[index].value
            if value in _FIND_EXEC:
                end = index + 1
                while end < len(rest) and rest[end].value not in (";", "+"):
                    end += 1
                self.resolve(list(rest[index + 1 : end]), [], (), where, depth + 1)
                index = end + 1
                continue
            if value == "-delete":
                self.add([], "rm", "rm", roots or [Word(text=".", value=".")])
            index += 1

    def watch(
        self,
        head: Word,
        rest: list[Word],
        written: list[str],
        where: tuple[Word, ...],
        depth: int,
    ) -> None:
        """``watch`` runs its words through ``sh -c`` again and again (``-x``: as words)."""
        options, inner = _split_options(rest, _WATCH_VALUES)
        self.add(written, head.value or "watch", "watch", rest)
        self.judge(options, where)
        if any(w.value in ("-x", "--exec") for w in options):
            self.resolve(inner, [], (), where, depth + 1)
        elif all(w.value is not None for w in inner):
            self.scripts.append((" ".join(w.value or "" for w in inner), where))
        else:
            self.unjudged.append(" ".join(w.text for w in [head, *rest]))

    def interpreter(self, name: str, args: list[Word], where: tuple[Word, ...], depth: int) -> None:
        """Record what a shell or interpreter runs that the rules cannot see."""
        if name in ("eval",):
            self.in_shell = True
            if all(w.value is not None for w in args):
                self.scripts.append((" ".join(w.value or "" for w in args), where))
            else:  # a command line only the shell knows
                self.unjudged.append("eval " + " ".join(w.text for w in args))
            return
        if name in ("source", "."):
            self.in_shell = True  # runs a file in this shell: it may move it
            shown = " ".join(w.text for w in args)
            self.code.append(f"{name} {shown} (runs the file's commands in this shell)".strip())
            return
        if name in _SHELLS:
            self.shell(name, args, where)
            return
        key = "python" if _PYTHON.fullmatch(name) else name
        if key not in _INTERPRETERS:
            return
        code_options, value_options = _INTERPRETERS[key]
        if any(w.value in _ONLY_INFO for w in args) or (key != "python" and "-v" in _values(args)):
            return  # --version, --help: runs no program
        index = 0
        while index < len(args):
            value = args[index].value
            if value is None:
                self.code.append(f"{name} {args[index].text}")
                return
            if value == "--" or not value.startswith("-") or value == "-":
                break
            flag, has_value, attached = value.partition("=")
            short = next((f"-{c}" for c in value[1:] if f"-{c}" in code_options), None)
            if flag in code_options or (short is not None and not value.startswith("--")):
                code = attached if has_value else _rest_of_cluster(value, short)
                if not code:
                    following = _at(args, index + 1)
                    code = following.text if following is not None else ""
                self.code.append(f"{name} {flag if has_value else short or flag} {code}".strip())
                return
            if key == "python" and value == "-m":
                return  # a module: a program of its own
            index += 2 if flag in value_options and not has_value else 1
        if index >= len(args) or args[index].value in ("-", "--"):
            self.code.append(f"{name} (program read from standard input)")

    def shell(self, name: str, args: list[Word], where: tuple[Word, ...]) -> None:
        index = 0
        command_string = False
        while index < len(args):
            value = args[index].value
            if value is None:
                if not command_string:  # options only the shell knows
                    self.unjudged.append(" ".join([name, *(w.text for w in args)]))
                    return
                break
            if value == "--" or value == "-":
                index += 1
                break
            if not value.startswith(("-", "+")) or value in ("-", "+"):
                break
            if value in _SHELL_VALUES:
                index += 2
                continue
            if not value.startswith("--") and "c" in value[1:]:
                command_string = True
            if not value.startswith("--") and "s" in value[1:]:
                self.code.append(f"{name} (commands read from standard input)")
                return
            index += 1
        if command_string:
            script = _at(args, index)
            if script is None or script.value is None:
                self.unjudged.append(f"{name} -c {script.text if script else ''}".strip())
            else:
                self.scripts.append((script.value, where))
            return
        if index >= len(args):
            self.code.append(f"{name} (commands read from standard input)")


def _shadows(name: str, args: Sequence[Word]) -> bool:
    """Whether ``alias``/``hash``/``enable`` here gives a command name a new meaning."""
    if name == "alias":
        return any("=" in (w.value or w.text) for w in args)
    if name == "hash":
        return any((w.value or "").startswith("-") and "p" in (w.value or "") for w in args)
    return any((w.value or "").startswith("-") and "f" in (w.value or "") for w in args)


def _values(words: Sequence[Word]) -> list[str | None]:
    return [w.value for w in words]


def _split_options(words: list[Word], values: frozenset[str]) -> tuple[list[Word], list[Word]]:
    """A wrapper's options (with their values) and the words after them."""
    index = 0
    while index < len(words):
        value = words[index].value
        if value is None or not value.startswith("-") or value == "-":
            break
        if value == "--":
            return words[: index + 1], words[index + 1 :]
        option, has_value, _ = value.partition("=")
        if value.startswith("--"):
            index += 2 if option in values and not has_value else 1
            continue
        if re.fullmatch(r"-[0-9]+", value):  # nice -10
            index += 1
            continue
        letter = next((c for c in value[1:] if f"-{c}" in values), None)
        if letter is not None and value.endswith(letter):
            index += 2  # the value is the next word
        else:
            index += 1
    return words[:index], words[index:]


def _rest_of_cluster(value: str, option: str | None) -> str:
    if option is None or option not in value:
        return ""
    return value[value.index(option[1]) + 1 :] if option[1] != value[-1] else ""


def _at(words: Sequence[Word], index: int) -> Word | None:
    return words[index] if 0 <= index < len(words) else None


def _is_assignment(value: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", value, re.DOTALL) is not None


def _shown(word: Word) -> str:
    """A word as rules see it: its value without quotes, or its text when only the shell
    knows its value."""
    return word.value if word.value is not None else word.text


_SPACES = re.compile(r"\s+")


def _redirect_text(text: str) -> str:
    return _SPACES.sub(" ", text.strip())
