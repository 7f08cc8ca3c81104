"""LSP's answer shapes, read defensively into small values the code-navigation tools print.

Editors hand back what their language servers said, as plain JSON: ``Location`` or
``LocationLink`` for definitions and references, ``Hover``, ``DocumentSymbol`` (a tree) or
``SymbolInformation`` for a file's symbols, ``SymbolInformation`` or ``WorkspaceSymbol`` for
a workspace query. Anything malformed is skipped, never an exception. Columns: LSP counts
UTF-16 code units, the model counts characters (1-based, as ``read`` numbers lines); the
conversions are here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeGuard

import attrs

__all__ = [
    "Place",
    "Symbol",
    "column_of",
    "document_symbols",
    "find_symbols",
    "hover_text",
    "places",
    "symbol_kind_name",
    "utf16_of",
    "workspace_symbols",
]

_KINDS = (
    *("file", "module", "namespace", "package", "class", "method", "property", "field"),
    *("constructor", "enum", "interface", "function", "variable", "constant", "string"),
    *("number", "boolean", "array", "object", "key", "null", "enum-member", "struct"),
    *("event", "operator", "type-parameter"),
)
"""LSP's ``SymbolKind`` 1…26, in order."""


@attrs.frozen
class Place:
    """A position in a file, as LSP has it (0-based line, UTF-16 character)."""

    uri: str
    line: int
    character: int


@attrs.frozen(kw_only=True)
class Symbol:
    """One symbol of a file or of the workspace."""

    name: str
    kind: str
    place: Place
    """Where its name is (``selectionRange``, else the start of its range)."""
    container: str = ""
    """The enclosing symbols' names, dotted (``Class`` for ``Class.method``)."""
    depth: int = 0

    @property
    def qualified(self) -> str:
        return f"{self.container}.{self.name}" if self.container else self.name


def utf16_of(line: str, column: int) -> int:
    """The UTF-16 offset of character ``column`` (0-based) of ``line``."""
    return sum(2 if ord(char) > 0xFFFF else 1 for char in line[:column])


def column_of(line: str, units: int) -> int:
    """The character (0-based) at UTF-16 offset ``units`` of ``line``."""
    seen = 0
    for index, char in enumerate(line):
        if seen >= units:
            return index
        seen += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def places(items: Iterable[Any]) -> list[Place]:
    """``Location`` / ``LocationLink`` items as places (the link's name when it has one),
    repeats dropped, order kept."""
    found: dict[Place, None] = {}
    for item in items:
        if not isinstance(item, Mapping):
            continue
        if "targetUri" in item:
            uri = item.get("targetUri")
            start = _start(item.get("targetSelectionRange")) or _start(item.get("targetRange"))
        else:
            uri = item.get("uri")
            start = _start(item.get("range"))
        if isinstance(uri, str) and start is not None:
            found[Place(uri, *start)] = None
    return list(found)


def document_symbols(items: Iterable[Any], uri: str) -> list[Symbol]:
    """A file's symbols in document order, nested ``DocumentSymbol`` trees flattened
    (``depth`` and ``container`` say where each was)."""
    return list(_walk(items, uri, (), 0))


def workspace_symbols(items: Iterable[Any]) -> list[Symbol]:
    """``SymbolInformation`` / ``WorkspaceSymbol`` items (a location without a range is
    taken at the file's start)."""
    symbols = []
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        location = item.get("location")
        if not isinstance(location, Mapping) or not isinstance(location.get("uri"), str):
            continue
        start = _start(location.get("range")) or (0, 0)
        container = item.get("containerName")
        symbols.append(
            Symbol(
                name=item["name"],
                kind=symbol_kind_name(item.get("kind")),
                place=Place(location["uri"], *start),
                container=container if isinstance(container, str) else "",
            )
        )
    return symbols


def find_symbols(symbols: Sequence[Symbol], name: str) -> list[Symbol]:
    """The symbols ``name`` means: an exact dotted name (``Class.method``) first, else the
    plain name anywhere."""
    exact = [s for s in symbols if s.qualified == name]
    return exact or [s for s in symbols if s.name == name or s.qualified.endswith(f".{name}")]


def symbol_kind_name(kind: Any) -> str:
    """LSP's ``SymbolKind`` number as a word (``function``, ``class``…)."""
    if isinstance(kind, int) and not isinstance(kind, bool) and 1 <= kind <= len(_KINDS):
        return _KINDS[kind - 1]
    return "symbol"


def hover_text(items: Iterable[Any]) -> str:
    """A ``Hover``'s contents as text (``MarkupContent``, ``MarkedString`` or a list)."""
    texts = []
    for item in items:
        if isinstance(item, Mapping):
            texts.extend(_marked(item.get("contents")))
    return "\n\n".join(text for text in texts if text.strip()).strip()


def _marked(contents: Any) -> list[str]:
    if isinstance(contents, str):
        return [contents]
    if isinstance(contents, list):
        return [text for part in contents for text in _marked(part)]
    if isinstance(contents, Mapping) and isinstance(contents.get("value"), str):
        language = contents.get("language")
        if isinstance(language, str):
            return [f"```{language}\n{contents['value']}\n```"]
        return [contents["value"]]
    return []


def _walk(
    items: Iterable[Any], uri: str, container: tuple[str, ...], depth: int
) -> Iterator[Symbol]:
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            continue
        location = item.get("location")
        if isinstance(location, Mapping):  # SymbolInformation: flat, with a container name
            start = _start(location.get("range"))
            owner = item.get("containerName")
            given = location.get("uri")
            where = given if isinstance(given, str) else uri
            if start is not None:
                yield Symbol(
                    name=item["name"],
                    kind=symbol_kind_name(item.get("kind")),
                    place=Place(where, *start),
                    container=owner if isinstance(owner, str) else "",
                )
            continue
        start = _start(item.get("selectionRange")) or _start(item.get("range"))
        if start is None:
            continue
        yield Symbol(
            name=item["name"],
            kind=symbol_kind_name(item.get("kind")),
            place=Place(uri, *start),
            container=".".join(container),
            depth=depth,
        )
        children = item.get("children")
        if isinstance(children, list):
            yield from _walk(children, uri, (*container, item["name"]), depth + 1)


def _start(range_: Any) -> tuple[int, int] | None:
    if not isinstance(range_, Mapping):
        return None
    start = range_.get("start")
    if not isinstance(start, Mapping):
        return None
    line, character = start.get("line"), start.get("character")
    if _count(line) and _count(character):
        return line, character
    return None


def _count(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0
