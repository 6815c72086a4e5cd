"""The followed events in chunks (pager.sweep.followed): however many, the table holds them, each chunk well
under DynamoDB's 400 KB, and a run writes only the chunks it changed."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
from test_sweep_deliveries import NOW, big_rows

from pager.errors import StoreUnavailable
from pager.store import MemoryStore, Record
from pager.sweep import deliveries as d
from pager.sweep import followed as f
from pager.sweep.deliveries import Followed
from pager.waiting import SWEEP_KEY


def rows(n: int, start: int = 0) -> list[Followed]:
    return [Followed(f"g{i:06d}", 1000 + i, NOW - 3600 + i, "issue_comment", "created", 7, 1, 1000 + i, NOW - 3600 + i, 500,
                     False) for i in range(start, start + n)]


def test_a_full_chunk_of_the_least_compressible_rows_stays_well_under_dynamodbs_item_limit():
    assert len(d.pack(big_rows(f.CHUNK_ROWS))) < 200_000


def test_new_rows_go_to_the_chunk_of_their_time_and_leave_the_others_as_they_were():
    first = f.chunked(rows(3 * f.CHUNK_ROWS), f.Loaded())
    assert [len(c.rows) for c in first] == [f.CHUNK_ROWS] * 3 and [c.name for c in first] == ["c0", "c1", "c2"]
    before = f.Loaded(first, 3)
    more = f.chunked([*rows(3 * f.CHUNK_ROWS), *rows(10, start=3 * f.CHUNK_ROWS)], before)
    # the newest chunk took them, and full, began another: the three are the same chunks, one more is written
    assert [(c.name, len(c.rows)) for c in more] == [("c0", f.CHUNK_ROWS), ("c1", f.CHUNK_ROWS), ("c2", f.CHUNK_ROWS), ("c3", 10)]


def test_rows_that_leave_or_change_rewrite_only_their_own_chunk():
    every = rows(3 * f.CHUNK_ROWS)
    before = f.Loaded(f.chunked(every, f.Loaded()), 3)
    drained = [replace(r, due=NOW) if i < 40 else r for i, r in enumerate(every[100:])]  # the oldest passed; the next queued
    after = f.chunked(drained, before)
    assert [c.name for c in after] == ["c3", "c1", "c2"]


def test_chunks_grown_small_are_joined():
    before = f.Loaded(f.chunked(rows(3 * f.CHUNK_ROWS), f.Loaded()), 3)
    kept = rows(3 * f.CHUNK_ROWS)
    left = kept[:10] + kept[f.CHUNK_ROWS:f.CHUNK_ROWS + 10] + kept[2 * f.CHUNK_ROWS:]
    after = f.chunked(left, before)
    assert [len(c.rows) for c in after] == [20, f.CHUNK_ROWS] and after[1].name == "c2"


def world(store: MemoryStore):
    class Services:
        def __init__(self):
            self.store = store

        def now(self) -> float:
            return NOW

        def sleep(self, seconds: float) -> None:
            pass

    return Services()


def test_a_commit_writes_the_new_chunks_before_the_head_and_empties_what_the_head_no_longer_names():
    store = MemoryStore()
    services = world(store)
    head = Record(SWEEP_KEY, item=d.ITEM)
    head, loaded = f.commit(services, head, {"v": d.VERSION}, rows(3 * f.CHUNK_ROWS), f.Loaded(), "run-1")
    assert head.data["chunks"] == ["c0", "c1", "c2"] and "followed" not in head.data
    again = f.load(services, head.data)
    assert again.rows == tuple(rows(3 * f.CHUNK_ROWS))
    head, _ = f.commit(services, head, {"v": d.VERSION}, rows(3 * f.CHUNK_ROWS)[5:], again, "run-2")
    assert head.data["chunks"] == ["c3", "c1", "c2"] and store.load(f.KEY, "c0").data == {}  # emptied for the TTL
    # few enough rows: the head holds them, and no chunk is named
    head, _ = f.commit(services, head, {"v": d.VERSION}, rows(3), f.load(services, head.data), "run-3")
    assert "chunks" not in head.data and d.unpack(head.data["followed"]) == tuple(rows(3))
    assert all(not store.load(f.KEY, name).data for name in ("c1", "c2", "c3"))


def test_a_run_that_died_between_its_writes_leaves_chunks_the_next_run_empties():
    store = MemoryStore()
    services = world(store)
    head, loaded = f.commit(services, Record(SWEEP_KEY, item=d.ITEM), {"v": d.VERSION}, rows(3 * f.CHUNK_ROWS),
                            f.Loaded(), "run-1")
    store.save(Record(f.KEY, item="c9"), {"rows": d.pack(rows(5)), "count": 5})  # written, its head never committed
    again = f.load(services, head.data)
    assert again.rows == tuple(rows(3 * f.CHUNK_ROWS)) and [r.item for r in again.strays] == ["c9"]
    f.commit(services, head, {"v": d.VERSION}, again.rows, again, "run-2")
    assert store.load(f.KEY, "c9").data == {}


def test_a_chunk_the_head_names_and_the_table_does_not_show_stops_the_run():
    store = MemoryStore()
    with pytest.raises(StoreUnavailable):
        f.load(world(store), {"chunks": ["c0"]})


def saves(sweeps) -> Counter[str]:
    """The table's writes so far by item (the sweep's) or key kind."""
    return Counter(name.removeprefix("save ").split(" [")[0].split("#")[0] + (f" [{name.split(' [')[1]}" if name.startswith(f"save {SWEEP_KEY} [") else "")
                   for service, name in sweeps.world.faults.log if service == "store" and name.startswith("save "))


def test_a_long_outage_holds_every_event_and_brings_each_back_writing_an_item_per_dozens(make_sweeps, monkeypatch):
    monkeypatch.setattr(f, "CHUNK_ROWS", 300)  # (the limits scaled down with the outage: five chunks, not one)
    monkeypatch.setattr(f, "INLINE_ROWS", 100)
    sweeps = make_sweeps(sweep_max_redeliveries=40, sweep_all_pages=30)
    sweeps.sweep()
    before = saves(sweeps)
    sweeps.down = 502  # pager's own endpoint fails for three hours; a run's event every 7 seconds meanwhile
    guids = []
    for minute in range(180):
        for _ in range(8):
            guids.append(sweeps.deliver("workflow_run", "completed", 10 + minute % 5))
            sweeps.now += 7
        sweeps.now = sweeps.now // 60 * 60 + 60
        if minute % 15 == 14:
            assert sweeps.sweep()["recovery"] == "waiting: pager"
    head = sweeps.store.load(SWEEP_KEY, d.ITEM).data
    assert len(guids) == 1440 and head["count"] == 1440 and len(head["chunks"]) == 5
    sweeps.down = None
    for minute in range(1440 // 40 + 5):  # the check every minute, the scheduled run every fifteen
        start = sweeps.now
        sweeps.sweep() if minute % 15 == 14 else sweeps.check()
        sweeps.now = start + 60
    assert all([a["status_code"] for a in sweeps.attempts(g)] == [502, 200] for g in guids)  # each back, as itself
    assert sweeps.entries() == {}
    # beyond the runs' own (each run's commit, its lease) and the lease of each minute whose asks a check
    # took: the chunks, the note of what waits and its end, the alarm's hold said and cleared: one write per
    # twenty-five events held at most
    writes = saves(sweeps) - before
    runs = 12 + 3
    assert writes[f"{SWEEP_KEY} [deliveries]"] <= 2 * runs and writes[f"{SWEEP_KEY} [lease]"] <= 2 * runs + 1440 // 40
    beyond = sum(writes.values()) - writes[f"{SWEEP_KEY} [deliveries]"] - writes[f"{SWEEP_KEY} [lease]"]
    assert beyond <= len(guids) // 25, writes


def test_a_commit_after_one_whose_head_write_failed_takes_a_name_past_the_chunk_it_left():
    store = MemoryStore()
    services = world(store)
    head, _ = f.commit(services, Record(SWEEP_KEY, item=d.ITEM), {"v": d.VERSION}, rows(f.CHUNK_ROWS + 10), f.Loaded(), "run-1")
    loaded = f.load(services, head.data)
    grown = [*loaded.rows, *rows(5, start=f.CHUNK_ROWS + 10)]
    save = store.save

    def head_throttled(record, data, **kwargs):
        if record.key == SWEEP_KEY:
            raise StoreUnavailable("ThrottlingException")
        return save(record, data, **kwargs)

    store.save = head_throttled  # type: ignore[method-assign]
    with pytest.raises(StoreUnavailable):
        f.commit(services, head, {"v": d.VERSION}, grown, loaded, "run-2")  # its new chunk written, not its head
    store.save = save  # type: ignore[method-assign]
    again = f.load(services, head.data)
    [stray] = again.strays
    committed, after = f.commit(services, head, {"v": d.VERSION}, [*grown, *rows(1, start=f.CHUNK_ROWS + 20)], again, "run-3")
    assert stray.item not in committed.data["chunks"] and not store.load(f.KEY, stray.item).data  # named past, emptied
    assert f.load(services, committed.data).rows == tuple(sorted([*grown, *rows(1, start=f.CHUNK_ROWS + 20)],
                                                                  key=lambda r: (r.at, r.guid)))


def test_a_head_write_the_table_throttled_once_neither_stalls_the_sweep_nor_loses_what_it_held(make_sweeps, monkeypatch):
    monkeypatch.setattr(f, "CHUNK_ROWS", 20)  # (the limits scaled down, as above)
    monkeypatch.setattr(f, "INLINE_ROWS", 10)
    sweeps = make_sweeps(sweep_max_redeliveries=40)
    sweeps.sweep()
    sweeps.down = 502  # pager's own endpoint fails: every event is held, followed in chunks
    guids = []
    for i in range(35):
        guids.append(sweeps.deliver("workflow_run", "completed", 10 + i % 3))
        sweeps.now += 5
        if i == 29:
            sweeps.advance(15)
            assert sweeps.sweep()["recovery"] == "waiting: pager"
    sweeps.advance(15)
    sweeps.world.faults.fail("store", r"^save sweep \[deliveries\]$", kind="store")  # the head's put, after its chunk
    assert sweeps.sweep()["outcome"] == "aborted: the table did not answer"
    sweeps.down = None  # pager answers again
    outcomes = []
    for _ in range(4):
        sweeps.minutes(14)
        outcomes.append(sweeps.sweep()["outcome"])
    assert outcomes == ["done"] * 4, outcomes  # each run commits: it was "skipped: another run committed first"
    back = [g for g in guids if any(a["status_code"] == 200 for a in sweeps.attempts(g))]
    assert len(back) == len(guids) and not sweeps.entries()


def test_the_folds_save_tried_again_after_a_throttled_head_names_past_the_chunk_its_first_try_left():
    from types import SimpleNamespace

    from pager.sweep.units import _save_state

    store = MemoryStore()
    services = world(store)
    committed = f.commit(services, Record(SWEEP_KEY, item=d.ITEM), {"v": d.VERSION}, rows(f.CHUNK_ROWS + 10), f.Loaded(), "run-1")
    grown = [*committed[1].rows, *rows(5, start=f.CHUNK_ROWS + 10)]
    save, throttled = store.save, [1]

    def head_throttled_once(record, data, **kwargs):
        if record.key == SWEEP_KEY and throttled:
            throttled.pop()
            raise StoreUnavailable("ThrottlingException")
        return save(record, data, **kwargs)

    store.save = head_throttled_once  # type: ignore[method-assign]
    state = SimpleNamespace(to_data=lambda: {"v": d.VERSION}, followed=grown)
    assert _save_state(services, committed, state, "run-1") == ""  # saved on the second try
    head = store.load(SWEEP_KEY, d.ITEM)
    assert f.load(services, head.data).rows == tuple(sorted(grown, key=lambda r: (r.at, r.guid)))
    assert not f.load(services, head.data).strays  # the first try's chunk emptied
