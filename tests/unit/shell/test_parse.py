"""Command lines split into the simple commands they run, and where ``cd`` leaves the shell."""

from __future__ import annotations

from lsp_agent.shell.parse import SimpleCommand, parse


def texts(source: str) -> list[str]:
    return [c.text for c in parse(source).commands() if c.is_command]


def test_pipelines_and_lists_split_into_commands() -> None:
    assert texts("git log --oneline | head -5 && ls -la") == [
        "git log --oneline",
        "head -5",
        "ls -la",
    ]
    assert texts("a || b; c & d") == ["a", "b", "c", "d"]


def test_subshells_substitutions_and_compound_statements_are_searched() -> None:
    assert texts("(cd x; ls) && echo $(cat f) `date`") == [
        "cd x",
        "ls",
        "cat f",
        "date",
        "echo $(cat f) `date`",
    ]
    assert texts("for f in $(ls); do rm $f; done") == ["ls", "rm $f"]
    assert texts("if test -f a; then make; else echo no; fi") == ["test -f a", "make", "echo no"]
    assert texts("export A=$(whoami) B") == ["whoami", "export A=$(whoami) B"]
    assert texts("diff <(sort a) b") == ["sort a", "diff <(sort a) b"]


def test_a_command_keeps_its_redirections() -> None:
    (command,) = parse("echo test > output.txt").commands()
    assert command.text == "echo test > output.txt"
    assert [(r.operator, r.target.value if r.target else None) for r in command.redirects] == [
        (">", "output.txt")
    ]


def test_a_redirection_after_a_pipeline_belongs_to_its_last_command() -> None:
    commands = parse("a && b | c 2>/dev/null > out").commands()
    assert [c.text for c in commands] == ["a", "b", "c 2>/dev/null > out"]
    targets = [r.target.value for r in commands[2].redirects if r.target]
    assert targets == ["/dev/null", "out"]


def test_descriptor_duplication_and_here_documents_name_no_file() -> None:
    (command,) = parse("ls 2>&1 >&-").commands()
    assert [r.target for r in command.redirects] == [None, None]
    (command,) = parse("cat <<< hi").commands()
    assert [(r.operator, r.target) for r in command.redirects] == [("<<<", None)]
    heredoc = parse("cat <<EOF\n$(rm x)\nEOF").commands()
    assert [c.text for c in heredoc] == ["rm x", "cat <<EOF\n$(rm x)\nEOF"]


def test_redirections_of_a_compound_statement_are_their_own_entry() -> None:
    commands = parse("while read l; do echo $l; done < input.txt").commands()
    redirect_only = [c for c in commands if not c.is_command]
    assert len(redirect_only) == 1
    assert [r.target.value for r in redirect_only[0].redirects if r.target] == ["input.txt"]
    assert texts("while read l; do echo $l; done < input.txt") == ["read l", "echo $l"]


def test_words_are_unquoted_and_expansions_have_no_value() -> None:
    *_, command = parse("""cat "a b" 'c d' e\\ f x"y"z $HOME/g "$(pwd)" ~/h""").commands()
    assert [w.value for w in command.words] == [
        "cat",
        "a b",
        "c d",
        "e f",
        "xyz",
        None,
        None,
        "~/h",
    ]
    assert command.name == "cat"


def test_assignments_are_kept_apart_from_the_words() -> None:
    (command,) = parse('FOO=1 BAR="x y" npm run dev').commands()
    assert command.assignments == 'FOO=1 BAR="x y"'
    assert [w.value for w in command.words] == ["npm", "run", "dev"]
    assert command.text == 'FOO=1 BAR="x y" npm run dev'


def test_a_command_named_by_an_expansion_has_no_name() -> None:
    (command,) = parse("$TOOL --version").commands()
    assert command.name is None


def test_a_syntax_error_is_reported() -> None:
    assert parse("ls -la").ok
    assert not parse('echo "unterminated').ok
    assert not parse("if then fi (").ok


# --- directory flow ---------------------------------------------------------------------


def trace(source: str) -> list[tuple[str, set[str]]]:
    """(command, where it may run) for each command; ``cd X`` moves to X (symbolically)."""
    seen: list[tuple[str, set[str]]] = []

    def step(command: SimpleCommand, where: frozenset[str]) -> frozenset[str] | None:
        seen.append((command.text, set(where)))
        if command.name == "cd":
            return frozenset({command.words[1].value or "?"})
        return None

    parse(source).walk(frozenset({"ws"}), step)
    return seen


def test_after_cd_and_the_next_command_runs_in_the_new_directory() -> None:
    assert trace("cd up && cat x") == [("cd up", {"ws"}), ("cat x", {"up"})]


def test_after_cd_and_a_semicolon_either_directory_is_possible() -> None:
    assert trace("cd up; cat x") == [("cd up", {"ws"}), ("cat x", {"ws", "up"})]


def test_or_runs_its_right_side_where_the_left_failed() -> None:
    assert trace("cd up || cat x; ls") == [
        ("cd up", {"ws"}),
        ("cat x", {"ws", "up"}),
        ("ls", {"ws", "up"}),
    ]


def test_subshells_pipelines_and_background_jobs_do_not_move_the_shell() -> None:
    assert trace("(cd up); cat x")[-1] == ("cat x", {"ws"})
    assert trace("cd up | cat y; cat x")[-1] == ("cat x", {"ws"})
    assert trace("cd up & cat x")[-1] == ("cat x", {"ws"})
    assert trace("echo $(cd up) && cat x")[-1] == ("cat x", {"ws"})


def test_conditionals_and_loops_keep_every_possible_directory() -> None:
    assert trace("if true; then cd up; fi; cat x")[-1] == ("cat x", {"ws", "up"})
    loop = trace("for i in 1 2; do cat x; cd $i; cd deeper; done; cat y")
    assert loop[-1] == ("cat y", {"ws", "deeper", "?"})
    assert ("cat x", {"ws", "deeper", "?"}) in loop  # the second pass sees the first's cd


def test_a_redirection_is_opened_before_its_command_moves() -> None:
    assert trace("cd up > log && cat x") == [("cd up > log", {"ws"}), ("cat x", {"up"})]


def test_words_say_when_the_shell_may_expand_them() -> None:
    (command,) = parse("X=../a touch a{1,2} *.py '*.py' \\*.py ~+/x ~/y plain").commands()
    assert [(w.value, w.expands) for w in command.words[1:]] == [
        ("a{1,2}", True),
        ("*.py", True),
        ("*.py", False),
        ("*.py", False),
        ("~+/x", True),
        ("~/y", True),
        ("plain", False),
    ]
    assert [w.value for w in command.assignment_words] == ["X=../a"]
