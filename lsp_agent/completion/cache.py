"""A small LRU of answers: the same text before and after the cursor (typing a character and
deleting it, moving back to where a suggestion was shown) asks the model nothing."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Lru(Generic[V]):
    def __init__(self, size: int = 64) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
