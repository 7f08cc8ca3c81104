"""Protocol v1 as one JSON Schema document (draft 2020-12): ``docs/protocol.schema.json``.

Generated from the models, the method table and the command table in ``protocol.py``, so the
TypeScript and Lua front-ends can be checked against exactly what the server validates and
sends::

    python -m lsp_agent.lsp.schema > docs/protocol.schema.json   # regenerate
    python -m lsp_agent.lsp.schema --check docs/protocol.schema.json

Params and command arguments are described as the server accepts them (validation mode),
results as they are sent (serialization mode). The output is deterministic (sorted keys), so
the file can be compared byte for byte.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from pydantic.json_schema import GenerateJsonSchema, JsonSchemaMode, models_json_schema

from lsp_agent.core.messages import TOOL_KINDS
from lsp_agent.lsp import protocol as p

JSON_SCHEMA_DIALECT: Final = "https://json-schema.org/draft/2020-12/schema"
REF_TEMPLATE: Final = "#/$defs/{model}"

SESSION_UPDATES: Final = (
    "user_message",
    "agent_message_chunk",
    "agent_thought_chunk",
    "agent_message_end",
    "tool_call_update",
    "plan_update",
    "state_update",
    "usage_update",
    "config_option_update",
    "session_info_update",
    "checkpoint_update",
    "revert_update",
    "review_update",
    "compaction_update",
    "permission_update",
    "question_update",
    "until_update",
    "internal",
)
"""Every ``update.sessionUpdate`` value the server can send in ``agent/session/update``
(protocol.md §3). ``wire/updates.py`` builds them; a unit test checks that it builds no other.
The schema's ``toolKinds`` is the core's one list of tool kinds (``TOOL_KINDS``): every
``kind`` a ``tool_call_update`` may carry, for the front-ends' drift tests."""

_ASK_QUESTION = "agent/session/askQuestion"
_QUESTION_OUTCOME = "AskQuestionOutcome"
"""The name of the ``agent/session/askQuestion`` result in ``$defs``: the answer is a union at
the top level, which the server validates through the ``QUESTION_RESULT`` wrapper model."""


class _Generator(GenerateJsonSchema):
    """Pydantic's generator without the per-field ``title``s it derives from attribute names
    (``"Sessionid"``): noise for the front-ends. Model titles stay."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def protocol_schema() -> dict[str, Any]:
    """The whole protocol: every method with refs to its params and result, every
    ``workspace/executeCommand`` command with refs to its one argument and its result, all
    models."""
    models: list[tuple[type[p.Model], JsonSchemaMode]] = []
    for method in p.METHODS.values():
        models.append((method.params, "validation"))
        if method.result is not None:
            models.append((method.result, "serialization"))
    for command in p.COMMAND_TYPES.values():
        models.append((command.argument, "validation"))
        models.append((command.result, "serialization"))
    models += [
        (p.QUESTION_RESULT, "serialization"),
        (p.AgentClientOptions, "validation"),
        (p.AgentServerCapabilities, "serialization"),
    ]
    refs, document = models_json_schema(
        list(dict.fromkeys(models)),
        by_alias=True,
        ref_template=REF_TEMPLATE,
        schema_generator=_Generator,
    )
    defs: dict[str, Any] = dict(document.get("$defs", {}))

    # The askQuestion answer without its wrapper (the wrapper is only how the server parses it).
    wrapper = _def_name(refs[(p.QUESTION_RESULT, "serialization")])
    outcome = dict(defs.pop(wrapper)["properties"]["result"])
    outcome["title"] = _QUESTION_OUTCOME
    outcome["description"] = "The result of agent/session/askQuestion."
    defs[_QUESTION_OUTCOME] = outcome

    methods: dict[str, Any] = {}
    for name, method in p.METHODS.items():
        result: dict[str, Any] | None = None
        if method.result is not None:
            result = refs[(method.result, "serialization")]
        elif name == _ASK_QUESTION:
            result = {"$ref": REF_TEMPLATE.format(model=_QUESTION_OUTCOME)}
        methods[name] = {
            "direction": method.direction,
            "kind": method.kind,
            "params": refs[(method.params, "validation")],
            "result": result,
        }
    commands: dict[str, Any] = {
        name: {
            "argument": refs[(command.argument, "validation")],
            "result": refs[(command.result, "serialization")],
        }
        for name, command in p.COMMAND_TYPES.items()
    }
    schema: dict[str, Any] = _sorted(
        {
            "$schema": JSON_SCHEMA_DIALECT,
            "title": "lsp-agent protocol v1",
            "protocolVersion": p.PROTOCOL_VERSION,
            "capabilities": {
                "client": refs[(p.AgentClientOptions, "validation")],
                "server": refs[(p.AgentServerCapabilities, "serialization")],
            },
            "methods": methods,
            "commands": commands,
            "$defs": defs,
            "errorCodes": _error_codes(),
            "sessionUpdates": list(SESSION_UPDATES),
            "toolKinds": list(TOOL_KINDS),
        }
    )
    return schema


def render() -> str:
    """:func:`protocol_schema` as the text of ``docs/protocol.schema.json``."""
    return json.dumps(protocol_schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _def_name(ref: dict[str, Any]) -> str:
    return str(ref["$ref"]).removeprefix("#/$defs/")


def _error_codes() -> dict[str, int]:
    """``ErrorCodes`` by their protocol.md names (``SESSION_NOT_FOUND``: ``SessionNotFound``)."""
    return {
        "".join(word.capitalize() for word in name.split("_")): value
        for name, value in vars(p.ErrorCodes).items()
        if name.isupper() and isinstance(value, int)
    }


def _sorted(value: Any) -> Any:
    """``value`` with every object's keys in sorted order (lists keep theirs)."""
    if isinstance(value, dict):
        return {key: _sorted(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted(item) for item in value]
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m lsp_agent.lsp.schema",
        description="Print the JSON Schema of lsp-agent protocol v1.",
    )
    parser.add_argument(
        "--check",
        metavar="PATH",
        type=Path,
        help="exit 1 if PATH differs from the generated schema instead of printing it",
    )
    args = parser.parse_args(argv)
    text = render()
    if args.check is None:
        sys.stdout.buffer.write(text.encode("utf-8"))
        sys.stdout.buffer.flush()
        return 0
    path: Path = args.check
    try:
        current = path.read_text(encoding="utf-8")
    except OSError as error:
        sys.stderr.write(f"{path}: cannot read it ({error.strerror})\n")
        return 1
    if current != text:
        sys.stderr.write(
            f"{path} is out of date with lsp_agent/lsp/protocol.py; regenerate it with\n"
            f"    python -m lsp_agent.lsp.schema > {path}\n"
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
