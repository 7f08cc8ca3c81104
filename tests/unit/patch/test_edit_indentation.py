"""``new_string`` is indented once: written like the file it is used as is, written like
``old_string`` it is translated, and when neither string tells, the edit is refused."""

from __future__ import annotations

import pytest

from lsp_agent.patch.edit_match import EditFailure, EditPlan, plan_edit

METHOD = "class A:\n    def f(self):\n        x = 1\n        return x\n"
NESTED = (
    "class A:\n"
    "    def f(self, items):\n"
    "        for item in items:\n"
    "            if item:\n"
    "                print(item)\n"
    "        return None\n"
)
NESTED_LOGGED = NESTED.replace(
    "                print(item)\n", "                log(item)\n                print(item)\n"
)
TABS = "func f() {\n\tif x {\n\t\treturn\n\t}\n}\n"
TWO = "def f():\n  if a:\n    b()\n  return 1\n"


def edited(content: str, old: str, new: str) -> str:
    plan = plan_edit(content, old, new)
    assert isinstance(plan, EditPlan), plan
    return plan.apply(content)


@pytest.mark.parametrize(
    ("content", "old", "new", "expected"),
    [
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "        x = 2\n        return x",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="method-body-new-like-the-file",
        ),
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "x = 2\nreturn x",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="method-body-new-like-old",
        ),
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "        x = 2\n        y = 3",
            "class A:\n    def f(self):\n        x = 2\n        y = 3\n",
            id="method-body-nothing-kept-new-like-the-file",
        ),
        pytest.param(
            METHOD,
            "def f(self):\n    x = 1\n    return x",
            "    def f(self):\n        if x:\n            x = 2\n        return x",
            "class A:\n    def f(self):\n        if x:\n            x = 2\n        return x\n",
            id="method-new-like-the-file-with-a-new-nested-level",
        ),
        pytest.param(
            METHOD,
            "def f(self):\n    x = 1\n    return x",
            "def f(self):\n    if x:\n        x = 2\n    return x",
            "class A:\n    def f(self):\n        if x:\n            x = 2\n        return x\n",
            id="method-new-like-old-with-a-new-nested-level",
        ),
        pytest.param(
            NESTED,
            "for item in items:\n    if item:\n        print(item)",
            "        for item in items:\n            if item:\n                log(item)\n"
            "                print(item)",
            NESTED_LOGGED,
            id="nested-blocks-new-like-the-file",
        ),
        pytest.param(
            NESTED,
            "for item in items:\n    if item:\n        print(item)",
            "for item in items:\n    if item:\n        log(item)\n        print(item)",
            NESTED_LOGGED,
            id="nested-blocks-new-like-old",
        ),
        pytest.param(
            TABS,
            "if x {\n    return\n}",
            "\tif x {\n\t\tlog()\n\t\treturn\n\t}",
            "func f() {\n\tif x {\n\t\tlog()\n\t\treturn\n\t}\n}\n",
            id="tabs-new-like-the-file",
        ),
        pytest.param(
            TABS,
            "if x {\n    return\n}",
            "if x {\n    log()\n    return\n}",
            "func f() {\n\tif x {\n\t\tlog()\n\t\treturn\n\t}\n}\n",
            id="tabs-new-like-old-in-spaces",
        ),
        pytest.param(
            TWO,
            "    if a:\n        b()",
            "  if a:\n    c()",
            "def f():\n  if a:\n    c()\n  return 1\n",
            id="two-spaces-file-new-like-the-file",
        ),
        pytest.param(
            TWO,
            "    if a:\n        b()",
            "    if a:\n        c()",
            "def f():\n  if a:\n    c()\n  return 1\n",
            id="two-spaces-file-new-like-old-in-four",
        ),
        pytest.param(
            METHOD,
            "def f(self):\n        x = 1",
            "def f(self):\n        x = 2",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="first-line-dropped-in-both",
        ),
        pytest.param(
            METHOD,
            "def f(self):\n        x = 1",
            "    def f(self):\n        x = 2",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="first-line-dropped-in-old-only",
        ),
        pytest.param(
            METHOD,
            "x = 1\n        return x",
            "        x = 2\n        return x",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="first-line-dropped-in-old-new-like-the-file",
        ),
        pytest.param(
            METHOD,
            "x = 1\n        return x",
            "x = 2\n        return x",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="first-line-dropped-in-old-and-new",
        ),
        pytest.param(
            METHOD,
            "    def f(self):\n        x = 1",
            "def f(self):\n        x = 2",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="first-line-dropped-in-new-only",
        ),
        pytest.param(
            METHOD,
            "        x = 1\n        return x",
            "x = 2\n        return x",
            "class A:\n    def f(self):\n        x = 2\n        return x\n",
            id="first-line-dropped-in-new-only-body",
        ),
        pytest.param(
            "if a:\n    x = 1\n    y = 2\n",
            "    x = 1\n    y = 2",
            "x = 1\ny = 2",
            "if a:\nx = 1\ny = 2\n",
            id="a-whole-block-moved-out-stays-moved",
        ),
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "        x = 2\n\n        return x",
            "class A:\n    def f(self):\n        x = 2\n\n        return x\n",
            id="blank-line-new-like-the-file",
        ),
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "x = 2\n\nreturn x",
            "class A:\n    def f(self):\n        x = 2\n\n        return x\n",
            id="blank-line-new-like-old",
        ),
        pytest.param(
            "def f():\n    return 1\n",
            "return 1  ",
            "    return 2",
            "def f():\n    return 2\n",
            id="one-line-new-like-the-file",
        ),
        pytest.param(
            "def f():\n    return 1\n",
            "return 1",
            "    return 2",
            "def f():\n    return 2\n",
            id="one-line-exact-after-the-indentation-new-like-the-file",
        ),
        pytest.param(
            "def f():\n    return 1\n",
            "return 1",
            "return 2",
            "def f():\n    return 2\n",
            id="one-line-exact-after-the-indentation-new-like-old",
        ),
    ],
)
def test_new_string_is_indented_once(content: str, old: str, new: str, expected: str) -> None:
    assert edited(content, old, new) == expected


@pytest.mark.parametrize(
    ("content", "old", "new", "detail"),
    [
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "    x = 2\n    y = 3",
            "(old_string: none; file: 8 spaces), and new_string's indentation (4 spaces)",
            id="new-fits-neither",
        ),
        pytest.param(
            METHOD,
            "x = 1\nreturn x",
            "x = 1\n        return x",
            "(old_string: none; file: 8 spaces), and new_string's indentation (none)",
            id="new-follows-old-on-one-line-and-the-file-on-another",
        ),
        pytest.param(
            "def f():\n    x = 1\n",
            "x = 1  ",
            "  x = 2",
            "(old_string: none; file: 4 spaces), and new_string's indentation (2 spaces)",
            id="one-line-fits-neither",
        ),
    ],
)
def test_an_undecidable_indentation_is_refused_with_what_to_do(
    content: str, old: str, new: str, detail: str
) -> None:
    plan = plan_edit(content, old, new)

    assert isinstance(plan, EditFailure), plan
    assert detail in plan.message
    assert plan.message.startswith("Refusing to edit: old_string matched only when")
    assert plan.message.endswith(
        "Read the file again and repeat the edit with old_string and new_string indented "
        "exactly as in the file."
    )
