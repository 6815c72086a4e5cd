"""The state store: versioned records keyed by what they are about.

Every record is a JSON object under a string key (`alarm#owner/repo`, `sweep#state`, ...) with a
version. `save` writes only when the stored version is still the one that was loaded, so two
deliveries of the same event can never both act on the same state: the loser gets `Conflict`.

A key may also hold items, each a record of its own (`item`, non-empty), read together with
`items(key)`: an alarm keeps one item per entry, so that deliveries about different entries of one
repository never write the same record, and no alarm grows towards DynamoDB's 400 KB item limit.

    Store         the protocol the signals and the sweep use
    MemoryStore   the in-memory fake; tests/test_store.py runs one contract suite against both
    DynamoStore   DynamoDB through a boto3 client, in `pager.dynamo` (the only module that needs botocore)

Several records are read together with `load_all` and written together with `save_all`: all or none,
each conditional on its version (a DynamoDB transaction), in one round trip each.

The table's schema is stated once, here: `TABLE_KEY` (the partition key, a string), `TABLE_ITEM`
(the sort key, a string: `ROOT_ITEM` for the record itself), `TABLE_TTL` (the TTL attribute, epoch
seconds). template.yaml declares the same, and a test holds them together.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from .errors import Conflict

TABLE_KEY = "pk"
TABLE_ITEM = "sk"
TABLE_TTL = "ttl"
ROOT_ITEM = "#"  # the sort key of a record itself (an item's name never starts with "#")


@dataclass(frozen=True)
class Record:
    key: str
    data: dict[str, Any] = field(default_factory=dict)
    version: int = 0  # 0: nothing stored under this key yet
    item: str = ""  # "": the record itself; else one of its items

    @property
    def exists(self) -> bool:
        return self.version > 0


Where = tuple[str, str]  # a record's key and item ("": the record itself)

# What one round trip reads or writes together at most: DynamoDB's BatchGetItem and TransactWriteItems take
# up to 100 items each, and a transaction's items at most 4 MB in all (Amazon DynamoDB API Reference,
# BatchGetItem, TransactWriteItems). pager's deliveries stay far below: a few records each.
MAX_TOGETHER = 100
MAX_TOGETHER_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Write:
    """One write of `save_all`: `data` under `record.key` (and `record.item`) if the stored version is still
    `record.version`, as `save` writes it. `data` None writes nothing but holds the others to that version (a
    check: what they were decided from has not changed). `once` writes only where nothing is stored yet and
    leaves what is there, never a Conflict (a note kept once per thing)."""

    record: Record
    data: dict[str, Any] | None
    expires_at: int | None = None
    once: bool = False

    @property
    def where(self) -> Where:
        return self.record.key, self.record.item


def together(writes: Sequence[Write]) -> None:
    """Refuse what no single transaction can write: more than MAX_TOGETHER writes, two of one record, more
    than MAX_TOGETHER_BYTES of data (DynamoDB answers each with a ValidationException)."""
    if len(writes) > MAX_TOGETHER:
        raise ValueError(f"{len(writes)} writes together: at most {MAX_TOGETHER}")
    if len({w.where for w in writes}) < len(writes):
        raise ValueError("two writes of one record together")
    if sum(len(encode(w.data)) for w in writes if w.data is not None) > MAX_TOGETHER_BYTES:
        raise ValueError(f"writes together larger than {MAX_TOGETHER_BYTES} bytes")


class Store(Protocol):
    def load(self, key: str, item: str = "") -> Record:
        """The record under `key` (or its `item`); an empty one with version 0 when there is none."""

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        """Write `data` under `record.key` (and `record.item`) if the stored version is still `record.version`.

        Returns the new record. Raises `Conflict` when someone else wrote first, `StoreUnavailable`
        when the store is throttled or unreachable. `expires_at` (epoch seconds) lets the table's TTL
        remove the record later."""

    def items(self, key: str, after: str = ROOT_ITEM) -> list[Record]:
        """Every item under `key` whose name sorts after `after` (by default all: not the record itself),
        by item name, read consistently."""

    def load_all(self, keys: Sequence[Where]) -> list[Record]:
        """The record under each (key, item), in the order asked, read together in one round trip (at most
        MAX_TOGETHER keys), each read consistently; an empty one with version 0 where there is none."""

    def save_all(self, writes: Sequence[Write]) -> None:
        """Write all of `writes` or none of them, in one round trip (`together`'s limits), each conditional on
        its record's version as `save` is. Raises `Conflict` naming the records that changed (its `keys`)
        when any had, `StoreUnavailable` when the store is throttled or unreachable."""


UPDATE_TRIES = 4  # reads and conditional writes `update` makes before another writer's churn wins
RECORD_WAITS = (0.05, 0.2)  # seconds to wait before writing again while the table throttles (a write that must land)


def update(store: Store, key: str, change: Callable[[dict[str, Any]], dict[str, Any] | None], *, item: str = "",
           expires_at: int | None = None) -> Record:
    """Change one record by a pure function of its data: read it, `change(data)`, and write the result
    conditionally on the version read; nothing is written when `change` gives None or the data as it was.
    Another writer between the read and the write: read and change again (UPDATE_TRIES times, then Conflict).
    For records no effect claims (an index, a mute, the phone's last call): those are `engine.settle`'s."""
    for _ in range(UPDATE_TRIES):
        record = store.load(key, item)
        new = change(dict(record.data))
        if new is None or new == record.data:
            return record
        try:
            return store.save(record, new, expires_at=expires_at)
        except Conflict:
            continue
    raise Conflict(f"{key} [{item}] kept changing under this write")


def encode(data: dict[str, Any]) -> str:
    """The stored form of a record's data: compact JSON with sorted keys."""
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


class MemoryStore:
    """In-memory store with the same contract as DynamoStore; thread-safe for race tests."""

    def __init__(self) -> None:
        self._items: dict[tuple[str, str], tuple[int, str, int | None]] = {}
        self._keyed: dict[str, set[str]] = {}  # each key's items, so that a query reads its key only, as DynamoDB's does
        self._lock = threading.Lock()

    def load(self, key: str, item: str = "") -> Record:
        with self._lock:
            stored = self._items.get((key, item))
        if stored is None:
            return Record(key, item=item)
        version, text, _ = stored
        return Record(key, json.loads(text), version, item)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        text = encode(data)
        where = (record.key, record.item)
        with self._lock:
            current = self._items.get(where)
            if (current[0] if current else 0) != record.version:
                raise Conflict(f"{_name(record)} changed since version {record.version}")
            self._items[where] = (record.version + 1, text, expires_at)
            self._keyed.setdefault(record.key, set()).add(record.item)
        return Record(record.key, json.loads(text), record.version + 1, record.item)

    def load_all(self, keys: Sequence[Where]) -> list[Record]:
        if len(set(keys)) > MAX_TOGETHER:
            raise ValueError(f"{len(set(keys))} keys read together: at most {MAX_TOGETHER}")
        with self._lock:
            stored = [(key, item, self._items.get((key, item))) for key, item in keys]
        return [Record(key, json.loads(s[1]), s[0], item) if s else Record(key, item=item) for key, item, s in stored]

    def save_all(self, writes: Sequence[Write]) -> None:
        together(writes)
        with self._lock:
            changed = tuple(w.where for w in writes if not w.once and self._version(w.where) != w.record.version)
            if changed:
                raise Conflict(f"{', '.join(_name(Record(k, item=i)) for k, i in changed)} changed", keys=changed)
            for w in writes:
                if w.data is None or (w.once and w.where in self._items):
                    continue
                self._items[w.where] = (1 if w.once else w.record.version + 1, encode(w.data), w.expires_at)
                self._keyed.setdefault(w.record.key, set()).add(w.record.item)

    def _version(self, where: Where) -> int:
        stored = self._items.get(where)
        return stored[0] if stored else 0

    def items(self, key: str, after: str = ROOT_ITEM) -> list[Record]:
        with self._lock:
            found = sorted((item, *self._items[(key, item)][:2]) for item in self._keyed.get(key, ()) if item and item > after)
        return [Record(key, json.loads(text), version, item) for item, version, text in found]

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(_name(Record(k, item=i)) for k, i in self._items)

    def dump(self) -> dict[str, Any]:
        """Every record's data by key (an item as `key [item]`): what tests compare between runs."""
        with self._lock:
            return {_name(Record(k, item=i)): json.loads(text) for (k, i), (_, text, _) in sorted(self._items.items())}


def _name(record: Record) -> str:
    return f"{record.key} [{record.item}]" if record.item else record.key
