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
    Pending       one delivery's work on the table: what it reads, kept, and what it writes, written
                  together once its effects are done (`pager.engine.settle` opens and commits it)

Several records are read together with `load_all` and written together with `save_all`: all or none,
each conditional on its version (a DynamoDB transaction), in one round trip each. A delivery so reads
what it decides from at once, claims what it acts on at once, and records what it did at once.

The table's schema is stated once, here: `TABLE_KEY` (the partition key, a string), `TABLE_ITEM`
(the sort key, a string: `ROOT_ITEM` for the record itself), `TABLE_TTL` (the TTL attribute, epoch
seconds). template.yaml declares the same, and a test holds them together.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from .errors import Conflict, StoreUnavailable

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
RECORD_ATTEMPTS = 3  # tries of a write that must land (what effects did), on top of boto's own retries


def update(store: Store, key: str, change: Callable[[dict[str, Any]], dict[str, Any] | None], *, item: str = "",
           expires_at: int | None = None, must_land: bool = True) -> Record:
    """Change one record by a pure function of its data: read it, `change(data)`, and write the result
    conditionally on the version read; nothing is written when `change` gives None or the data as it was.
    Another writer between the read and the write: read and change again (UPDATE_TRIES times, then Conflict).
    For records no effect claims (an index, a mute, the phone's last call): those are `engine.settle`'s.
    In a delivery's `Pending` work the write waits to be written with the others; should its record have
    changed by then, the change is made again on what is stored then (`must_land=False`: a write the effect
    that makes it can do without, given up should the others not land with it)."""
    return redoable(store, lambda: _update(store, key, change, item, expires_at), must_land=must_land)


def _update(store: Store, key: str, change: Callable[[dict[str, Any]], dict[str, Any] | None], item: str,
            expires_at: int | None) -> Record:
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


# -- one delivery's work on the table ------------------------------------------------------------------------

Redo = Callable[[], Any]


@dataclass(frozen=True)
class _Waiting:
    """A write waiting in a `Pending`: what made it (`redo`, done again should its record change first), the
    effect it is part of (`owner`, the engine's mark), and whether it must land for that effect to count."""

    write: Write
    redo: Redo | None = None
    owner: Any = None
    must_land: bool = True


class Pending:
    """One delivery's work on the table (a hold, or a settle's effects), through which `Services.store` reads
    and writes while it is under way (`at_work`):

        read        what it reads together (`load_all`: ahead of the steps that need it) is kept and read again
                    from here, one round trip in all; `forget` reads it afresh (a wait for another delivery). A
                    record loaded alone is read from the table each time: a settle of another record, under
                    way inside this work with a pending work of its own, may have written it meanwhile
        claim       what it acts on is claimed at once, in one round trip (`claim`): those records are held
        write       every other write waits here, conditional on the version read, until `commit` writes them
                    together, in one round trip; a load meanwhile sees them

    A write another writer got ahead of is made again at the commit: each waits with what made it (`redoable`:
    `update` and the effects' own writes say how), which is done again on what the table holds then; a write
    that says no such thing is given up (`given_up`, for the log). A held record that changed (its claim taken
    over), or changes that keep coming, are a Conflict. Each write made while an effect is carried out
    (`acting`) is that effect's: should the writes not land together, the engine writes the held records
    alone (`only_held`), each without the effects whose writes must land (`taken_back`) and are given up.
    A `Pending` is one delivery's, in one thread."""

    def __init__(self, table: Store, *, hold: bool = False) -> None:
        self.table = table
        self.hold = hold  # a hold's (`holding`): the settles inside act on the records it holds under its claims
        self.acted = False  # an effect happened: what waits must land
        self.effects: dict[Any, tuple[dict[str, Any], dict[str, Any]]] = {}  # an effect's mark -> its record before, after
        self.given_up: list[str] = []
        self._read: dict[Where, Record] = {}
        self._held: dict[Where, Record] = {}
        self._writes: dict[Where, _Waiting] = {}
        self._redo: Redo | None = None
        self._owner: Any = None
        self._must_land = True

    # -- reading

    def load(self, key: str, item: str = "") -> Record:
        where = (key, item)
        if where in self._writes:
            return self._as_written(where)
        return self._read.get(where) or self.table.load(key, item)

    def load_all(self, keys: Sequence[Where]) -> list[Record]:
        missing = [where for where in dict.fromkeys(keys) if where not in self._writes and where not in self._read]
        if missing:
            for record in self.table.load_all(missing):
                self._read[(record.key, record.item)] = record
        return [self.load(key, item) for key, item in keys]

    def items(self, key: str, after: str = ROOT_ITEM) -> list[Record]:
        found = {record.item: record for record in self.table.items(key, after)}
        for (k, item), waiting in self._writes.items():
            if k == key and item and item > after and waiting.write.data is not None:
                found[item] = self._as_written((k, item))
        return [found[item] for item in sorted(found)]

    def forget(self, *wheres: Where) -> None:
        """Read these records afresh next time (all that is not held, when none is named)."""
        for where in wheres or list(self._read):
            if where not in self._held:
                self._read.pop(where, None)

    # -- claiming

    def claim(self, writes: Sequence[Write]) -> list[Record]:
        """Write these claims at once, together (one round trip): the records are held from now on."""
        self._write(writes)
        claimed = [Record(w.record.key, dict(w.data or {}), w.record.version + 1, w.record.item) for w in writes]
        for record in claimed:
            self._read[(record.key, record.item)] = self._held[(record.key, record.item)] = record
        return claimed

    def holds(self, key: str, item: str = "") -> bool:
        return (key, item) in self._held

    # -- writing

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        self._queue(Write(record, data, expires_at))
        return self._as_written((record.key, record.item))

    def save_all(self, writes: Sequence[Write]) -> None:
        together(writes)
        for write in writes:
            self._queue(write)

    def queued(self, key: str, item: str = "") -> bool:
        return (key, item) in self._writes

    def redoable(self, do: Redo, *, must_land: bool = True) -> Any:
        """`do` now, its writes waiting with it: should one of their records change before the commit, `do` is
        done again then, on what the table holds. `must_land=False`: writes the effect can do without (the
        phone's call after a message), given up rather than the effect taken back."""

        def again() -> Any:
            outer, self._redo = self._redo, again
            outer_must, self._must_land = self._must_land, must_land and self._must_land
            try:
                return do()
            finally:
                self._redo, self._must_land = outer, outer_must

        return again()

    @contextlib.contextmanager
    def acting(self, owner: Any) -> Iterator[None]:
        """The writes made inside are the effect `owner`'s (the engine's mark for it)."""
        outer, self._owner = self._owner, owner
        try:
            yield
        finally:
            self._owner = outer

    def _queue(self, write: Write) -> None:
        where = write.where
        queued = self._writes.get(where)
        if queued is not None:
            if write.once:
                return  # written here already
            if write.record.version != self._as_written(where).version:
                raise Conflict(f"{_name(write.record)} changed since version {write.record.version}", keys=(where,))
            if write.data is None:
                return  # a check of what this work writes: its write holds the version already
            write = replace(write, record=queued.write.record)
        else:
            known = self._read.get(where)
            if known is not None and not write.once and write.record.version != known.version:
                raise Conflict(f"{_name(write.record)} changed since version {write.record.version}", keys=(where,))
        # A raw write that says nothing of how to make it again (a chat's move) is one the effect can do without.
        must_land = self._must_land and self._redo is not None
        self._writes[where] = _Waiting(write, self._redo, self._owner, must_land)

    def _as_written(self, where: Where) -> Record:
        write = self._writes[where].write
        if write.data is None:
            return write.record
        return Record(where[0], dict(write.data), 1 if write.once else write.record.version + 1, where[1])

    def _write(self, writes: Sequence[Write]) -> None:
        """One round trip: a single write as `save` makes it (a transaction costs DynamoDB twice), several together."""
        if len(writes) == 1 and writes[0].data is not None and not writes[0].once:
            self.table.save(writes[0].record, writes[0].data, expires_at=writes[0].expires_at)
        else:
            self.table.save_all(writes)

    # -- the commit

    def commit(self, sleep: Callable[[float], None], waits: Sequence[float] = RECORD_WAITS,
               attempts: int = RECORD_ATTEMPTS) -> None:
        """Write what waits, together. The table throttling: tried again after `waits` (`attempts` in all), then
        StoreUnavailable. A record another writer changed meanwhile: what wrote it is done again on what is
        stored now, UPDATE_TRIES rounds at most; a held one, or changes past those rounds: Conflict."""
        unavailable = rounds = 0
        while self._writes:
            try:
                self._write([waiting.write for waiting in self._writes.values()])
            except StoreUnavailable:
                unavailable += 1
                if unavailable >= attempts:
                    raise
                sleep(waits[min(unavailable - 1, len(waits) - 1)])
                continue
            except Conflict as exc:
                if unavailable and self._landed():
                    break  # the try before was written after all: only its answer was lost
                changed = set(exc.keys) or set(self._writes)
                if changed & self._held.keys() or rounds >= UPDATE_TRIES:
                    raise
                rounds += 1
                self._again(changed)
                continue
            break
        self._writes.clear()

    def besides_held(self) -> bool:
        """Whether writes wait here besides the held records'."""
        return any(where not in self._held for where in self._writes)

    def taken_back(self) -> set[Any]:
        """The effects whose writes besides the held records must land: what `only_held` takes back."""
        return {w.owner for where, w in self._writes.items() if where not in self._held and w.must_land and w.owner is not None}

    def only_held(self, data: Mapping[Where, dict[str, Any]]) -> None:
        """Leave only the held records' writes waiting, with `data` where given; every other write is given up."""
        for where, waiting in list(self._writes.items()):
            if where in self._held:
                if where in data:
                    self._writes[where] = replace(waiting, write=replace(waiting.write, data=data[where]))
                continue
            del self._writes[where]
            self.given_up.append(_name(waiting.write.record))

    def _landed(self) -> bool:
        """Whether the writes waiting here are what the table holds: one of them tells (they land together), a held
        one if any (no one else writes it)."""
        written = [where for where, w in self._writes.items() if w.write.data is not None and not w.write.once]
        if not written:
            return False
        where = next((w for w in written if w in self._held), written[0])
        return self.table.load(*where).data == self._writes[where].write.data

    def _again(self, changed: set[Where]) -> None:
        """Make again, on what the table holds now, the writes whose records changed: each by what made it."""
        redos: list[Redo] = []
        for where in changed:
            waiting = self._writes.get(where)
            if waiting is None:
                continue
            if waiting.redo is None:
                del self._writes[where]
                self.given_up.append(_name(waiting.write.record))
            elif waiting.redo not in redos:
                redos.append(waiting.redo)
        for redo in redos:
            for where in [w for w, waiting in self._writes.items() if waiting.redo is redo]:
                del self._writes[where]
        self.forget(*changed)
        for redo in redos:
            redo()


def redoable(store: Store, do: Callable[[], Any], *, must_land: bool = True) -> Any:
    """`do`, whose writes a delivery's `Pending` work makes again should their records change before its commit
    (`Pending.redoable`)."""
    return store.redoable(do, must_land=must_land) if isinstance(store, Pending) else do()


_working: ContextVar[Pending | None] = ContextVar("pager_pending", default=None)


def working_on(table: Any) -> Pending | None:
    """The delivery's work under way on `table` here (this thread, this invocation), if any."""
    pending = _working.get()
    return pending if pending is not None and pending.table is table else None


@contextlib.contextmanager
def at_work(pending: Pending | None) -> Iterator[Pending | None]:
    """Make `pending` the store `Services.store` gives for its table while the block runs (None: the table itself)."""
    token = _working.set(pending)
    try:
        yield pending
    finally:
        _working.reset(token)
