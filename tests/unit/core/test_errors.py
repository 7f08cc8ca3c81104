"""The exception tree: complete in ``core/errors.py``'s docstring, each error defined once,
and validation problems turned into text by one rule for every front door and the tools."""

from __future__ import annotations

import importlib
import pkgutil
import re
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict, ValidationError, model_validator

import lsp_agent
from lsp_agent.acp.errors import describe, to_request_error
from lsp_agent.core import errors
from lsp_agent.core.errors import InvalidParams, LspAgentError, SessionBusy, validation_text
from lsp_agent.lsp.errors import describe_validation_error, to_rpc_error
from lsp_agent.lsp.protocol import ErrorCodes

_TREE_LINE = re.compile(r"^(?P<lead>[│├└─ ]*)(?P<name>[A-Z]\w+)(?:\s|$)")


def _every_module_imported() -> None:
    """Subclasses exist only once their module is imported; ``__main__`` modules run."""
    for info in pkgutil.walk_packages(lsp_agent.__path__, "lsp_agent."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(info.name)


def _subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


def _documented_parents() -> dict[str, str | None]:
    """Each class in the docstring's tree, with the class it hangs under."""
    doc = errors.__doc__ or ""
    parents: dict[str, str | None] = {}
    stack: list[tuple[int, str]] = []
    for line in doc.splitlines():
        match = _TREE_LINE.match(line)
        if match is None or not (line.startswith("LspAgentError") or match["lead"]):
            continue
        depth = len(match["lead"])
        while stack and stack[-1][0] >= depth:
            stack.pop()
        parents[match["name"]] = stack[-1][1] if stack else None
        stack.append((depth, match["name"]))
    return parents


def test_every_lsp_agent_error_is_in_the_tree_under_its_real_parent() -> None:
    _every_module_imported()
    documented = _documented_parents()
    classes = _subclasses(LspAgentError)
    assert len(classes) >= 19
    for cls in classes:
        assert cls.__name__ in documented, f"{cls.__module__}.{cls.__name__} is not in the tree"
        assert documented[cls.__name__] == cls.__base__.__name__, cls.__name__
    assert sorted(documented) == sorted({"LspAgentError", *(c.__name__ for c in classes)})


def test_each_error_class_is_defined_once() -> None:
    _every_module_imported()
    names = [cls.__name__ for cls in _subclasses(LspAgentError)]
    assert sorted(names) == sorted(set(names))


def test_both_front_doors_answer_the_cores_invalid_params_and_busy() -> None:
    invalid = InvalidParams("cursor: not a cursor this server gave out")
    assert to_rpc_error(invalid, "m").code == ErrorCodes.INVALID_PARAMS
    assert to_request_error(invalid).code == -32602
    busy = SessionBusy("ses_1", "a turn is running")
    assert str(busy) == "session ses_1 is busy (a turn is running); try again when it is idle"
    answer = to_rpc_error(busy, "m")
    assert (answer.code, answer.data) == (ErrorCodes.SESSION_BUSY, {"sessionId": "ses_1"})
    assert to_request_error(busy).code == -32600


class _Params(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session_id: str
    count: int = 0

    @model_validator(mode="after")
    def _positive(self) -> _Params:
        if self.count < 0:
            raise ValueError("count must not be negative")
        return self


def _problems(data: Any) -> ValidationError:
    with pytest.raises(ValidationError) as caught:
        _Params.model_validate(data)
    return caught.value


def test_validation_text_names_each_field_and_keeps_the_first_few() -> None:
    problems = _problems({"count": "x", "a": 1, "b": 2, "c": 3, "d": 4}).errors()
    assert validation_text(problems[:2]) == (
        "session_id: Field required; count: Input should be a valid integer, unable to parse "
        "string as an integer"
    )
    assert validation_text(problems, limit=5).count(";") == 4
    whole = _problems({"session_id": "s", "count": -1}).errors()
    assert validation_text(whole) == "Value error, count must not be negative"
    assert validation_text(whole, root="params") == (
        "params: Value error, count must not be negative"
    )


def test_the_front_doors_use_the_one_rule() -> None:
    error = _problems({"count": "x"})
    text = validation_text(error.errors(), limit=5, root="params")
    assert describe_validation_error(error) == f"invalid params: {text}"
    assert describe(error) == f"Invalid params: {text}"
