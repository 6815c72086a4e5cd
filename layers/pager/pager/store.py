"""The state store: versioned records keyed by what they are about.

Every record is a JSON object under a string key (`alarm#owner/repo`, `sweep#state`, ...) with a
version. `save` writes only when the stored version is still the one that was loaded, so two
deliveries of the same event can never both act on the same state: the loser gets `Conflict`.

    Store         the protocol the signals and the sweep use
    MemoryStore   the in-memory fake; tests/test_store.py runs one contract suite against both
    DynamoStore   DynamoDB through a boto3 client, in `pager.dynamo` (the only module that needs botocore)

The table's schema is stated once, here: `TABLE_KEY` (the partition key, a string) and `TABLE_TTL`
(the TTL attribute, epoch seconds). template.yaml declares the same, and a test holds them together.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import Conflict

TABLE_KEY = "pk"
TABLE_TTL = "ttl"


@dataclass(frozen=True)
class Record:
    key: str
    data: dict[str, Any] = field(default_factory=dict)
    version: int = 0  # 0: nothing stored under this key yet

    @property
    def exists(self) -> bool:
        return self.version > 0


class Store(Protocol):
    def load(self, key: str) -> Record:
        """The record under `key`; an empty one with version 0 when there is none."""

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        """Write `data` under `record.key` if the stored version is still `record.version`.

        Returns the new record. Raises `Conflict` when someone else wrote first, `StoreUnavailable`
        when the store is throttled or unreachable. `expires_at` (epoch seconds) lets the table's TTL
        remove the record later."""


def encode(data: dict[str, Any]) -> str:
    """The stored form of a record's data: compact JSON with sorted keys."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


class MemoryStore:
    """In-memory store with the same contract as DynamoStore; thread-safe for race tests."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[int, str, int | None]] = {}
        self._lock = threading.Lock()

    def load(self, key: str) -> Record:
        with self._lock:
            item = self._items.get(key)
        if item is None:
            return Record(key)
        version, text, _ = item
        return Record(key, json.loads(text), version)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        text = encode(data)
        with self._lock:
            current = self._items.get(record.key)
            if (current[0] if current else 0) != record.version:
                raise Conflict(f"{record.key} changed since version {record.version}")
            self._items[record.key] = (record.version + 1, text, expires_at)
        return Record(record.key, json.loads(text), record.version + 1)

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(self._items)

    def dump(self) -> dict[str, Any]:
        """Every record's data by key: what tests compare between runs."""
        with self._lock:
            return {key: json.loads(text) for key, (_, text, _) in sorted(self._items.items())}
