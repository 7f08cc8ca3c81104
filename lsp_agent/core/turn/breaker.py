"""The circuit breaker of a turn: a tool that fails the same way ``BREAKER_LIMIT`` times in a
row is withheld for the rest of the turn (the model stops looping on a broken tool)."""

from __future__ import annotations

BREAKER_LIMIT = 3
"""Identical consecutive failures of one tool before it is withheld for the turn."""


class ToolBreaker:
    def __init__(self) -> None:
        self._failures: dict[str, tuple[str, int]] = {}  # tool → (last error, times in a row)
        self._withheld: dict[str, str] = {}  # tool → the error that got it withheld

    def withheld(self, name: str) -> str | None:
        """The error that got ``name`` withheld, or None while it may run."""
        return self._withheld.get(name)

    def succeeded(self, name: str) -> None:
        self._failures.pop(name, None)

    def failed(self, name: str, error: str) -> int | None:
        """Count the failure; the number of identical failures in a row when that withholds
        the tool, else None."""
        last, count = self._failures.get(name, ("", 0))
        count = count + 1 if error == last else 1
        self._failures[name] = (error, count)
        if count < BREAKER_LIMIT:
            return None
        self._withheld[name] = error
        return count
