"""One secret filter for every tool output and context file, before the model, the log,
spill files or the editor see it (docs/security.md "Secrets").

Two kinds of secret are masked:

- known values: the agent's own keys (from the environment or the keyring, registered at
  run time) and every environment variable whose name ends in ``_KEY``, ``_TOKEN``,
  ``_SECRET`` or ``_PASSWORD`` — as written, reversed, hex, URL-encoded and base64 (all three
  byte alignments, standard and URL-safe alphabets, padded or not, wrapped lines too), so
  ``base64 /proc/$PPID/environ`` or ``printenv GITHUB_TOKEN | rev`` shows a mask;
- secrets recognised by their shape (``secret_patterns``): ``.env``-style assignments,
  private key blocks and well-known token formats.

``mask`` also says what it masked, so the model can be told (``Masked.with_note``).
"""

from __future__ import annotations

import base64
import re
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from lsp_agent.core.secrets import patterns as secret_patterns

__all__ = ["MIN_SECRET_LENGTH", "NO_SECRETS", "SECRET_SUFFIXES", "Masked", "SecretFilter"]

SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_SECRET_LENGTH = 8
"""Shorter values ("1", "true") are too common in ordinary output to be told apart."""

_LINE_BREAK = r"(?:\r?\n)?"


@dataclass(frozen=True)
class Masked:
    """A filtered text and one label per masked secret, in order."""

    text: str
    kinds: tuple[str, ...] = ()

    @property
    def note(self) -> str:
        """The line telling the model what was masked ("" when nothing was)."""
        if not self.kinds:
            return ""
        counts: dict[str, int] = {}
        for kind in self.kinds:
            counts[kind] = counts.get(kind, 0) + 1
        parts = [kind if n == 1 else f"{n} × {kind}" for kind, n in counts.items()]
        plural = "s" if len(self.kinds) > 1 else ""
        return (
            f"[lsp-agent masked {len(self.kinds)} secret{plural} in this output: "
            f"{', '.join(parts)}]"
        )

    def with_note(self) -> str:
        """The text, followed by the note on a line of its own when something was masked."""
        if not self.kinds:
            return self.text
        return f"{self.text}\n\n{self.note}" if self.text else self.note


@dataclass(frozen=True)
class _Known:
    """The spellings of the known values (replaced whole when a value is added), longest
    first, so a secret containing another is replaced whole."""

    forms: tuple[tuple[str, str, bool], ...]  # (form, label, may_wrap)
    longest: int


class SecretFilter:
    def __init__(self, secrets: Mapping[str, str], *, detect: bool = True) -> None:
        """``secrets`` maps a variable name to its value; ``detect`` also masks secrets
        recognised by their shape."""
        self._values: dict[str, str] = {}
        self._detect = detect
        self._lock = threading.Lock()
        for name, value in sorted(secrets.items()):
            if len(value) >= MIN_SECRET_LENGTH:
                self._values.setdefault(value, name)
        self._known = _compile(self._values)

    @classmethod
    def from_env(
        cls, env: Mapping[str, str], key_names: Iterable[str] = (), *, detect: bool = True
    ) -> SecretFilter:
        names = set(key_names)
        chosen = {
            name: value
            for name, value in env.items()
            if value and (name in names or name.upper().endswith(SECRET_SUFFIXES))
        }
        return cls(chosen, detect=detect)

    def register(self, name: str, value: str) -> None:
        """Mask ``value`` from now on (a key read from the keyring at request time)."""
        if len(value) < MIN_SECRET_LENGTH:
            return
        with self._lock:
            if value in self._values:
                return
            values = {**self._values, value: name}
            self._known = _compile(values)
            self._values = values

    @property
    def longest(self) -> int:
        """How much of a growing text's tail could still become a secret (streamed output
        holds it back)."""
        hold = self._known.longest
        if self._detect:
            hold = max(hold, secret_patterns.PATTERN_HOLD)
        return hold

    def mask(self, text: str) -> Masked:
        if not text:
            return Masked(text)
        kinds: list[str] = []

        def found(label: str) -> str:
            kinds.append(label)
            return f"[redacted:{label}]"

        text = _mask_known(self._known, text, found)
        if self._detect:
            text = secret_patterns.scan(text, found)
        return Masked(text, tuple(kinds))

    def redact(self, text: str) -> str:
        return self.mask(text).text

    def safe_prefix(self, text: str) -> str:
        """The part of a growing text that can be shown now: redacted, minus a tail that
        could be the start of a secret still arriving."""
        redacted = self.redact(text)
        hold = self.longest
        if hold <= 1:
            return redacted
        return redacted[: max(0, len(redacted) - (hold - 1))]


def encoded_forms(value: str) -> list[tuple[str, str, bool]]:
    """``(form, how, may_wrap)`` for each spelling of ``value`` the filter recognises.

    A base64 form is the run of characters that depends on ``value``'s bytes alone, for
    each of the three offsets it can start at in a 3-byte group: it appears in the encoding
    of any text containing ``value``, padded or not. Hex and base64 output is often wrapped
    (``xxd -p``, ``base64``), so those forms may have line breaks between characters.
    """
    data = value.encode()
    forms = [(value, "", False), (value[::-1], "reversed", False)]
    forms += [(data.hex(), "hex", True), (data.hex().upper(), "hex", True)]
    quoted = urllib.parse.quote(value, safe="")
    if quoted != value:
        forms.append((quoted, "URL-encoded", False))
    every = "".join(f"%{b:02X}" for b in data)
    forms += [(every, "URL-encoded", False), (every.lower(), "URL-encoded", False)]
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data + b"\0\0").decode()
        start = -(-8 * offset // 6)  # first character made of value's bits only
        end = 8 * (offset + len(data)) // 6
        core = encoded[start:end]
        forms.append((core, "base64", True))
        urlsafe = core.translate(_URLSAFE)
        if urlsafe != core:
            forms.append((urlsafe, "base64", True))
    return forms


_URLSAFE = str.maketrans("+/", "-_")


def _compile(values: Mapping[str, str]) -> _Known:
    forms: dict[str, tuple[str, bool]] = {}
    for value, name in values.items():
        for form, how, may_wrap in encoded_forms(value):
            if len(form) >= MIN_SECRET_LENGTH and form not in forms:
                forms[form] = (f"{name} ({how})" if how else name, may_wrap)
    ordered = sorted(forms, key=len, reverse=True)
    longest = 2 * len(ordered[0]) if ordered else 0  # x2: room for line breaks
    return _Known(forms=tuple((f, *forms[f]) for f in ordered), longest=longest)


def _mask_known(known: _Known, text: str, found: Callable[[str], str]) -> str:
    """Each spelling is first looked for as plain text (a substring search is some ten
    times faster than one regular expression of them all); only the few present, if any,
    are then replaced. A wrappable spelling is also looked for with line breaks removed."""
    present = [(form, may_wrap) for form, _label, may_wrap in known.forms if form in text]
    if "\n" in text and any(may_wrap for _form, _label, may_wrap in known.forms):
        joined = text.replace("\r", "").replace("\n", "")
        present += [
            (form, True)
            for form, _label, may_wrap in known.forms
            if may_wrap and form not in text and form in joined
        ]
    if not present:
        return text
    present.sort(key=lambda item: len(item[0]), reverse=True)
    labels = {form: label for form, label, _may_wrap in known.forms}
    pattern = "|".join(
        _LINE_BREAK.join(map(re.escape, form)) if may_wrap else re.escape(form)
        for form, may_wrap in present
    )
    return re.sub(pattern, lambda m: found(labels[_unwrapped(m.group(0))]), text)


def _unwrapped(matched: str) -> str:
    return matched.replace("\r", "").replace("\n", "") if "\n" in matched else matched


NO_SECRETS = SecretFilter({}, detect=False)
