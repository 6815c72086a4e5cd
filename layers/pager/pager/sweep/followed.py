"""The events the sweep follows, kept in as many items as they need: the table holds them, not one item.

However many events an outage holds, each is followed until it passes or is named: no cap of pager's own
decides what comes back. The rows (pager.sweep.deliveries.Followed) are kept in chunks, items of their own
key (`sweep-followed`, which the every-minute check never reads), at most CHUNK_ROWS rows each (about 120 KB
of DynamoDB's 400 KB):

    sweep [deliveries]           the head: the lists' scans, the holds, ... and `chunks`, the names of the
                                 chunks that hold the followed rows, in order (up to INLINE_ROWS rows, the
                                 head holds them itself, `followed`: no chunk at all, one write a commit);
                                 `queue`, the rows asked for in the minutes to come (what the check reads)
    sweep-followed [c<n>]        {rows, count}: one chunk, never written again once the head names it

A run's commit writes the chunks whose rows changed under new names first, then the head, conditionally on
the version it read; only then are the chunks it no longer names emptied (and left to the table's TTL). So
the head always names chunks that exist and hold exactly the rows of its plan: a run that dies between
its writes leaves chunks no head names, which the next run empties. A row stays in its chunk while it is
followed (`chunked` keeps each row where it was, puts a new one in the chunk of its time, splits a chunk
grown past CHUNK_ROWS and joins neighbours grown small), so a run writes the few chunks its reading and
its asks changed: during an outage, the newest one; while what was held drains, the oldest.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..errors import Conflict, PagerError, StoreUnavailable
from ..observe import logger
from ..services import Services
from ..store import Record
from .deliveries import Followed, pack, unpack

KEY = "sweep-followed"
CHUNK_ROWS = 2000  # rows a chunk holds at most (about 60 bytes a row packed: tests/test_sweep_followed.py)
INLINE_ROWS = 500  # up to this many, the head holds the rows itself: no chunk, one write a commit
EMPTIED_TTL_SECONDS = 3600  # an emptied chunk, left for the table's TTL to remove


@dataclass(frozen=True)
class Chunk:
    name: str
    rows: tuple[Followed, ...]


@dataclass(frozen=True)
class Loaded:
    """The chunks a head names, as one query of the key read them, and those no head names."""

    chunks: tuple[Chunk, ...] = ()
    next: int = 0  # the number of the next chunk's name (names are never used twice)
    strays: tuple[Record, ...] = ()  # chunks with rows that no head names: a run died between its writes
    records: Mapping[str, Record] = field(default_factory=dict)  # every chunk item found, by name

    @property
    def rows(self) -> tuple[Followed, ...]:
        return tuple(r for c in self.chunks for r in c.rows)


class ChunkMissing(StoreUnavailable):
    """A chunk the head names was not found (a read that did not see it yet): the run stops, the next reads again."""


def load(services: Services, head: Mapping[str, object]) -> Loaded:
    """The followed rows of a head: its chunks, read with one query of their key. Raises StoreUnavailable."""
    names = [str(n) for n in _names(head)]
    found = {r.item: r for r in services.store.items(KEY)}
    missing = [n for n in names if n not in found]
    if missing:
        raise ChunkMissing(f"{KEY}: {len(missing)} of {len(names)} chunks not found")
    chunks = tuple(Chunk(n, unpack(str(found[n].data.get("rows") or ""))) for n in names)
    strays = tuple(r for n, r in found.items() if n not in set(names) and r.data)
    return Loaded(chunks, _next(head, found), strays, found)


def _next(head: Mapping[str, object], found: Iterable[str]) -> int:
    """The number of the next chunk's name: past the head's count and past every chunk item there is, named or
    not (a run that died after writing a chunk, before its head, or a write tried again, left a name the head's
    count does not know, which a new chunk must not take)."""
    number = head.get("next_chunk")
    taken = [int(n[1:]) + 1 for n in found if n[:1] == "c" and n[1:].isdigit()]
    return max([number if isinstance(number, int) else 0, *taken])


def _names(head: Mapping[str, object]) -> list[object]:
    names = head.get("chunks")
    return list(names) if isinstance(names, list) else []


def chunked(rows: Iterable[Followed], before: Loaded) -> tuple[Chunk, ...]:
    """The rows in chunks: each row in the chunk it was in; a new one in the chunk of its time (the last whose
    first row is not newer), or a new chunk; a chunk past CHUNK_ROWS split, neighbours under a quarter of it
    joined. A chunk whose rows are those it had keeps its name; the others are named anew (`c<n>`)."""
    pieces = _joined([p for g in _grouped(rows, before.chunks) for p in _split(sorted(g, key=_order))])
    old = {c.rows: c.name for c in before.chunks}
    number = before.next
    out = []
    for piece in pieces:
        name = old.get(piece)
        if name is None:
            name, number = f"c{number}", number + 1
        out.append(Chunk(name, piece))
    return tuple(out)


def _grouped(rows: Iterable[Followed], chunks: Sequence[Chunk]) -> list[list[Followed]]:
    """The rows by the chunk they go to: the one they were in, else the one of their time."""
    home = {r.guid: i for i, c in enumerate(chunks) for r in c.rows}
    starts = [_order(c.rows[0]) for c in chunks if c.rows]
    groups: list[list[Followed]] = [[] for _ in chunks] or [[]]
    for row in sorted(rows, key=_order):
        i = home.get(row.guid)
        if i is None:
            i = max((k for k, s in enumerate(starts) if s <= _order(row)), default=0)
        groups[min(i, len(groups) - 1)].append(row)
    return groups


def _order(row: Followed) -> tuple[float, str]:
    return (row.at, row.guid)


def _split(rows: list[Followed]) -> list[tuple[Followed, ...]]:
    """Full chunks, oldest first, and what is left: rows added to a full chunk (the newest, during an
    outage) begin a new one, and the full one is the chunk it was."""
    return [tuple(rows[k:k + CHUNK_ROWS]) for k in range(0, len(rows), CHUNK_ROWS)]


def _joined(pieces: list[tuple[Followed, ...]]) -> list[tuple[Followed, ...]]:
    out: list[tuple[Followed, ...]] = []
    for piece in pieces:
        if out and len(out[-1]) < CHUNK_ROWS // 4 and len(piece) < CHUNK_ROWS // 4:
            out[-1] = out[-1] + piece
        else:
            out.append(piece)
    return out


def next_number(chunks: Sequence[Chunk], before: Loaded) -> int:
    """The number the next new chunk takes, after those `chunks` named."""
    numbers = [int(c.name[1:]) for c in chunks if c.name[1:].isdigit()]
    return max([before.next - 1, *numbers]) + 1


def write_new(services: Services, chunks: Sequence[Chunk], before: Loaded) -> Loaded:
    """Write the chunks the head is about to name that are not stored yet (before its commit); what is stored
    once the head names them. Raises StoreUnavailable, or Conflict when another invocation wrote one of those
    names (a lease that lapsed)."""
    stored = {c.name for c in before.chunks}
    records = dict(before.records)
    for chunk in chunks:
        if chunk.name not in stored:
            records[chunk.name] = services.store.save(Record(KEY, item=chunk.name),
                                                      {"rows": pack(chunk.rows), "count": len(chunk.rows)})
    return Loaded(tuple(chunks), next_number(chunks, before), before.strays, records)


def empty_replaced(services: Services, before: Loaded, after: Loaded, run_id: str) -> Loaded:
    """After the head's commit: empty the chunks it no longer names, and strays (left for the table's TTL to
    remove). A failure is logged and left to the next run, which finds them as strays. What is stored then."""
    kept = {c.name for c in after.chunks}
    gone = [after.records[c.name] for c in before.chunks if c.name not in kept and c.name in after.records]
    records = {n: r for n, r in after.records.items() if n in kept}
    for record in (*gone, *before.strays):
        try:
            services.store.save(record, {}, expires_at=int(services.now() + EMPTIED_TTL_SECONDS))
        except (Conflict, PagerError) as exc:
            logger.warning("sweep chunk not emptied", extra={"run_id": run_id, "item": record.item, "error": type(exc).__name__})
    return Loaded(after.chunks, after.next, (), records)


def commit(services: Services, head: Record, data: dict[str, object], rows: Iterable[Followed], before: Loaded,
           run_id: str) -> tuple[Record, Loaded]:
    """A plan's commit: its rows' new chunks, then the head naming them (conditionally on the version read:
    Conflict when another run committed since), then what it no longer names emptied. Up to INLINE_ROWS rows,
    the head holds them itself. Raises Conflict and StoreUnavailable, having written no head."""
    rows = tuple(rows)
    if len(rows) <= INLINE_ROWS:
        after = Loaded((), before.next, (), before.records)
        committed = services.store.save(head, {**data, "followed": pack(rows), "next_chunk": after.next})
        return committed, empty_replaced(services, before, after, run_id)
    chunks = chunked(rows, before)
    after = write_new(services, chunks, before)
    committed = services.store.save(head, {**data, "chunks": [c.name for c in chunks], "next_chunk": after.next})
    return committed, empty_replaced(services, before, after, run_id)
