"""Glob patterns as the search tools read them (rg's syntax, matched in Python)."""

from __future__ import annotations

import pytest

from lsp_agent.search.globmatch import compile_glob, name_glob


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.py", "a.py", True),
        ("*.py", "src/deep/a.py", True),
        ("*.py", "a.pyc", False),
        ("*.py", "src.py/readme", False),
        ("**/*.py", "a.py", True),
        ("**/*.py", "src/a.py", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/sub/a.py", False),
        ("src/*.py", "lib/src/a.py", False),
        ("src/**/*.py", "src/a.py", True),
        ("src/**/*.py", "src/x/y/a.py", True),
        ("src/**", "src/x/y/a.py", True),
        ("src/", "src/x/a.py", True),
        ("/a.py", "a.py", True),
        ("/a.py", "src/a.py", False),
        ("./a.py", "a.py", True),
        ("./a.py", "src/a.py", False),
        ("a?.txt", "ab.txt", True),
        ("a?.txt", "a/.txt", False),
        ("[abc].txt", "b.txt", True),
        ("[!abc].txt", "b.txt", False),
        ("[!abc].txt", "d.txt", True),
        ("[a-c].txt", "b.txt", True),
        ("*.{ts,tsx}", "x/a.tsx", True),
        ("*.{ts,tsx}", "a.js", False),
        ("{src,lib}/**/*.go", "lib/a/b.go", True),
        ("{src,lib}/**/*.go", "cmd/b.go", False),
        ("\\*.txt", "*.txt", True),
        ("\\*.txt", "a.txt", False),
        ("a+b (1).txt", "a+b (1).txt", True),
        ("[unclosed", "[unclosed", True),
        ("{unclosed", "{unclosed", True),
        ("*.PY", "a.py", False),
    ],
)
def test_compile_glob(pattern: str, path: str, matches: bool) -> None:
    assert compile_glob(pattern)(path) is matches


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("*.py", "*.py"),
        ("**/*.py", "*.py"),
        ("./**/**/test_*", "test_*"),
        ("*.{ts,tsx}", "*.{ts,tsx}"),
        ("src/*.py", None),
        ("/a.py", None),
        ("**", None),
        ("a:b", None),
        ("\\*", None),
        ("", None),
    ],
)
def test_name_glob(pattern: str, name: str | None) -> None:
    assert name_glob(pattern) == name
