"""The shared pattern of the signals (`pager.engine.settle.settle`) on its own: claim, act, record.

Runs on a MemoryStore with the effects replaced by a recorder, so each rule of the loop is visible:
the effects are claimed before and recorded together after the last, with what they wrote besides;
a failed effect leaves what the effects before it did and releases its claim; a write of an effect's
own whose record changed meanwhile is made again, and one the table keeps refusing takes its effect
back; a lost conditional write loads and decides again, a live claim of another delivery makes this
one wait, and nothing is written when a decision changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from pager.engine import settle as records
from pager.engine.effects import SendMessage, Step
from pager.engine.settle import PENDING, Busy, settle
from pager.errors import Conflict, StoreUnavailable, TelegramUnavailable
from pager.store import MemoryStore, Record, update, working_on


@dataclass
class FakeServices:
    store: Any = field(default_factory=MemoryStore)
    now_value: float = 1000.0
    waits: list = field(default_factory=list)

    def now(self) -> float:
        return self.now_value

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)


class Effects:
    """Stands in for `pager.engine.perform.perform`: remembers each effect and what the record held meanwhile."""

    def __init__(self, services: FakeServices, key: str) -> None:
        self.services, self.key = services, key
        self.done: list[tuple[Any, dict]] = []
        self.fail_next: Exception | None = None

    def __call__(self, services: Any, effect: Any) -> Any:
        if self.fail_next is not None:
            error, self.fail_next = self.fail_next, None
            raise error
        self.done.append((effect, MemoryStore.load(self.services.store, self.key).data))  # a look, not a round trip
        return len(self.done)


def count_to(n: int):
    """A decision that sends one message per missing count up to n, then has nothing left."""

    def decide(data: dict, now: float) -> Step:
        sent = data.get("sent", 0)
        if sent >= n:
            return Step("done")
        return Step(f"sent {sent + 1}", effect=SendMessage(f"m{sent + 1}"), then=lambda result: {**data, "sent": sent + 1})

    return decide


@pytest.fixture
def setup():
    services = FakeServices()
    effects = Effects(services, "k")
    return services, effects


def settle_k(services, decide, effects, **kwargs):
    return settle(services, "k", decide, perform=effects, **kwargs)


def test_the_effects_are_claimed_before_the_first_and_recorded_together_after_the_last(setup):
    services, effects = setup
    settled = settle(services, "k", count_to(2), perform=effects)
    assert settled.outcome == "sent 1, sent 2"
    assert [effect.text for effect, _ in effects.done] == ["m1", "m2"]
    # While each effect happened, the record held the claim and what it held before the first.
    assert [held.get("sent", 0) for _, held in effects.done] == [0, 0]
    assert all(held[PENDING]["until"] == 1000.0 + records.LEASE_SECONDS for _, held in effects.done)
    assert services.store.dump() == {"k": {"sent": 2}}


def test_settling_again_does_nothing_and_writes_nothing(setup):
    services, effects = setup
    settle(services, "k", count_to(2), perform=effects)
    version = services.store.load("k").version
    assert settle(services, "k", count_to(2), perform=effects).outcome == "done"
    assert services.store.load("k").version == version and len(effects.done) == 2


def test_a_failed_effect_releases_its_claim_and_keeps_what_was_recorded_before(setup):
    services, effects = setup
    settle(services, "k", count_to(1), perform=effects)
    effects.fail_next = TelegramUnavailable("telegram sendMessage: 502")
    with pytest.raises(TelegramUnavailable):
        settle(services, "k", count_to(3), perform=effects)
    assert services.store.dump() == {"k": {"sent": 1}}
    assert settle(services, "k", count_to(3), perform=effects).outcome == "sent 2, sent 3"


def test_a_lost_conditional_write_loads_and_decides_again(setup, monkeypatch):
    services, effects = setup
    store = services.store
    save = store.save
    raced = {"done": False}

    def save_after_a_rival(record: Record, data: dict, **kwargs: Any) -> Record:
        if not raced["done"]:
            raced["done"] = True
            save(record, {"sent": 1})  # another delivery recorded the first message meanwhile
        return save(record, data, **kwargs)

    monkeypatch.setattr(store, "save", save_after_a_rival)
    assert settle(services, "k", count_to(2), perform=effects).outcome == "sent 2"
    assert [effect.text for effect, _ in effects.done] == ["m2"]


def test_a_live_claim_of_another_delivery_makes_this_one_wait_then_answer_busy(setup, monkeypatch):
    services, effects = setup
    services.store.save(services.store.load("k"), {PENDING: {"effect": "SendMessage", "until": 1030.0}})
    monkeypatch.setattr(records, "BUSY_POLLS", 3)
    with pytest.raises(Busy):
        settle(services, "k", count_to(1), perform=effects)
    assert len(services.waits) == 3 and effects.done == []


def test_a_claim_past_its_lease_is_taken_over(setup):
    services, effects = setup
    services.store.save(services.store.load("k"), {PENDING: {"effect": "SendMessage", "until": 999.0}})
    assert settle(services, "k", count_to(1), perform=effects).outcome == "sent 1"
    assert services.store.dump() == {"k": {"sent": 1}}


def test_a_decision_that_never_converges_is_stopped(setup):
    services, effects = setup

    def forever(data: dict, now: float) -> Step:
        return Step("again", effect=SendMessage("x"), then=lambda result: {"n": data.get("n", 0) + 1})

    with pytest.raises(RuntimeError):
        settle(services, "k", forever, perform=effects)


def test_recording_an_effect_is_tried_again_when_the_table_is_briefly_unavailable(setup, monkeypatch):
    from pager.errors import StoreUnavailable

    services, effects = setup
    store = services.store
    save = store.save
    failures = iter([False, True, False])  # the claim passes, the first recording fails

    def flaky(record: Record, data: dict, **kwargs: Any) -> Record:
        if next(failures, False):
            raise StoreUnavailable("DynamoDB save k: ThrottlingException")
        return save(record, data, **kwargs)

    monkeypatch.setattr(store, "save", flaky)
    settle(services, "k", count_to(1), perform=effects)
    assert store.dump() == {"k": {"sent": 1}} and len(effects.done) == 1


def test_conflicts_that_keep_coming_end_in_busy(setup, monkeypatch):
    services, effects = setup

    def always_conflict(record: Record, data: dict, **kwargs: Any) -> Record:
        raise Conflict("k changed")

    monkeypatch.setattr(services.store, "save", always_conflict)
    with pytest.raises(Busy):
        settle(services, "k", count_to(1), perform=effects)


class Counted(MemoryStore):
    """A MemoryStore that counts its round trips."""

    def __init__(self) -> None:
        super().__init__()
        self.trips: list[str] = []

    def load(self, key: str, item: str = "") -> Record:
        self.trips.append("load")
        return super().load(key, item)

    def load_all(self, keys: Any) -> list[Record]:
        self.trips.append("load_all")
        return super().load_all(keys)

    def save(self, record: Record, data: dict, **kwargs: Any) -> Record:
        self.trips.append("save")
        return super().save(record, data, **kwargs)

    def save_all(self, writes: Any) -> None:
        self.trips.append("save_all")
        super().save_all(writes)


def test_two_effects_take_three_round_trips_a_load_the_claim_and_the_record():
    services = FakeServices(store=Counted())
    effects = Effects(services, "k")
    settle(services, "k", count_to(2), perform=effects)
    assert services.store.trips == ["load", "save", "save"]


def test_a_decision_with_nothing_to_do_reads_once_and_writes_nothing():
    services = FakeServices(store=Counted())
    settle(services, "k", count_to(0), perform=Effects(services, "k"))
    assert services.store.trips == ["load"]


# -- what the effects write besides their record ---------------------------------------------------------


class TableServices(FakeServices):
    """FakeServices whose store is, as `pager.services.Services` has it, the delivery's pending work while one is
    under way on its table (`pager.store.working_on`)."""

    @property  # type: ignore[override]
    def store(self) -> Any:
        return working_on(self.table) or self.table

    @store.setter
    def store(self, table: Any) -> None:
        self.table = table


def told(*steps: str):
    """A decision that does each named step once, in order, each recorded under its own name."""

    def decide(data: dict, now: float) -> Step:
        for name in steps:
            if not data.get(name):
                return Step(name, effect=SendMessage(name), then=lambda _, name=name: {**data, name: True})
        return Step("done")

    return decide


def acting(writes: dict[str, Any]):
    """A perform whose effect named in `writes` also changes a record of its own, by `update` (`must_land` as given)."""

    def perform(services: Any, effect: Any) -> None:
        if effect.text in writes:
            key, must_land = writes[effect.text]
            update(services.store, key, lambda d: {"n": d.get("n", 0) + 1}, must_land=must_land)

    return perform


def test_a_write_an_effect_makes_besides_its_record_lands_with_it_in_one_round_trip():
    store = Counted()
    services = TableServices(store=store)
    settle(services, "k", told("sent", "noted"), perform=acting({"noted": ("side", True)}))
    # the record's load, its claim, the note's own read, then the record and the note together
    assert store.trips == ["load", "save", "load", "save_all"]
    assert store.dump() == {"k": {"sent": True, "noted": True}, "side": {"n": 1}}


def test_a_write_of_an_effects_own_whose_record_changed_meanwhile_is_made_again_on_what_is_stored_then():
    store = MemoryStore()
    services = TableServices(store=store)
    perform = acting({"noted": ("side", True)})

    def meanwhile(services: Any, effect: Any) -> None:
        perform(services, effect)
        if effect.text == "noted":  # another writer changes the same record before this delivery's commit
            store.save(store.load("side"), {"n": 10})

    assert settle(services, "k", told("sent", "noted"), perform=meanwhile).outcome == "sent, noted"
    assert store.dump() == {"k": {"sent": True, "noted": True}, "side": {"n": 11}}


class Refusing(MemoryStore):
    """A MemoryStore whose table throttles every write that touches `key`, as long as `on`."""

    def __init__(self, key: str) -> None:
        super().__init__()
        self.key, self.on = key, True

    def save_all(self, writes: Any) -> None:
        if self.on and any(w.record.key == self.key for w in writes):
            raise StoreUnavailable(f"DynamoDB save_all {self.key}: ThrottlingError")
        super().save_all(writes)


def test_a_write_of_an_effects_own_the_table_keeps_refusing_takes_that_effect_back_and_the_redelivery_does_it_alone():
    store = Refusing("side")
    services = TableServices(store=store)
    done: list[str] = []
    perform = acting({"noted": ("side", True)})

    def counted(services: Any, effect: Any) -> None:
        done.append(effect.text)
        perform(services, effect)

    with pytest.raises(StoreUnavailable, match="SendMessage"):
        settle(services, "k", told("sent", "noted", "drafted"), perform=counted)
    # What was sent and drafted is recorded (never done again); the note is not, and its claim is released.
    assert store.dump() == {"k": {"sent": True, "drafted": True}}
    store.on = False
    assert settle(services, "k", told("sent", "noted", "drafted"), perform=counted).outcome == "noted"
    assert done == ["sent", "noted", "drafted", "noted"]
    assert store.dump() == {"k": {"sent": True, "noted": True, "drafted": True}, "side": {"n": 1}}


def test_a_write_an_effect_can_do_without_is_given_up_when_the_table_keeps_refusing_it_never_the_record(log_lines):
    store = Refusing("call")
    services = TableServices(store=store)
    assert settle(services, "k", told("sent"), perform=acting({"sent": ("call", False)})).outcome == "sent"
    assert store.dump() == {"k": {"sent": True}}
    assert [line["records"] for line in log_lines() if line["message"] == "writes given up"] == [["call"]]
