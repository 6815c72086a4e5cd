"""The table's round trips of a delivery, through the webhook function (functions/webhook/app.py:lambda_handler):
each read, query, read of several records, write and write of several is one DynamoDB request, and each is
listed with what it is for.

An outsider's comment (the contribution signal: one message, one pager-draft dispatch) reads what it decides
from in one round trip (its thread, its own record, and what turns a buzz down: the phone's last call and the
mutes), claims its thread and its record in one, and writes what it did in one: its record, its thread, and
the phone's call or its note for the call at the end of the phone's rest. A note reads the summary's mark of
its period first, so that a note is never kept for a call already under way: four round trips.
"""

from __future__ import annotations

from typing import Any

from support import github_event, invoke_webhook

from pager.store import Record
from pager_world.cases import issue_comment_by
from pager_world.store import FaultyStore
from pager_world.world import REPO_ID

THREAD = f"contribution#{REPO_ID}#issue"


class Trips(FaultyStore):
    """The fake world's table, listing its round trips as they go: what each reads or writes."""

    def __init__(self, faults: Any) -> None:
        super().__init__(faults)
        self.trips: list[str] = []

    def load(self, key: str, item: str = "") -> Record:
        self.trips.append(f"load {_name(key, item)}")
        return super().load(key, item)

    def items(self, key: str, after: str = "#") -> list[Record]:
        self.trips.append(f"query {key}")
        return super().items(key, after)

    def load_all(self, keys: Any) -> list[Record]:
        self.trips.append("load_all " + ", ".join(_name(k, i) for k, i in keys))
        return super().load_all(keys)

    def save(self, record: Record, data: dict[str, Any], **kwargs: Any) -> Record:
        self.trips.append(f"save {_name(record.key, record.item)}")
        return super().save(record, data, **kwargs)

    def save_all(self, writes: Any) -> None:
        self.trips.append("save_all " + ", ".join(_written(w) for w in writes))
        super().save_all(writes)


def _name(key: str, item: str) -> str:
    return f"{key} [{item}]" if item else key


def _written(write: Any) -> str:
    return ("check " if write.data is None else "") + _name(write.record.key, write.record.item)


def comment(world: Any, login: str, comment_id: int, number: int) -> str:
    status, answer = invoke_webhook(world, github_event("issue_comment", issue_comment_by(login, comment_id=comment_id,
                                                                                          number=number)))
    assert status == 200, answer
    return answer["outcome"]


def test_an_outsiders_comment_kept_for_the_phones_call_takes_four_round_trips_to_the_table(make_world):
    world = make_world(store=Trips)
    assert comment(world, "alice", 1, 1) == "sent, draft asked"  # it buzzes: the phone rests from now on
    assert comment(world, "bob", 2, 2) == "sent, kept for the summary, draft asked"  # the rest's mark in the index
    world.store.trips.clear()
    assert comment(world, "carol", 3, 3) == "sent, kept for the summary, draft asked"
    assert world.store.trips == [
        # what the delivery decides from: its thread, its record, the phone's last call, the mutes of the
        # repository and of the thread
        f"load_all {THREAD}#3 [thread], {THREAD}#3#c3, mute [call], mute [{REPO_ID}], mute [{REPO_ID}#issue#3]",
        # the thread and the record claimed (no other delivery acts on them meanwhile)
        f"save_all {THREAD}#3 [thread], {THREAD}#3#c3",
        # the note's period: its summary must not be under way
        "load attention [summary:1800000000]",
        # what was done: the note, the period's mark as read, the record (message, note, draft), the thread
        f"save_all summary#2027-01-15T08:00:00Z [contribution:{THREAD}#3], check attention [summary:1800000000], "
        f"{THREAD}#3#c3, {THREAD}#3 [thread]",
    ]
    assert len(world.store.trips) <= 4


def test_an_outsiders_comment_that_calls_takes_three_round_trips_to_the_table(make_world):
    world = make_world(store=Trips)
    assert comment(world, "alice", 1, 1) == "sent, draft asked"
    assert world.store.trips == [
        f"load_all {THREAD}#1 [thread], {THREAD}#1#c1, mute [call], mute [{REPO_ID}], mute [{REPO_ID}#issue#1]",
        f"save_all {THREAD}#1 [thread], {THREAD}#1#c1",
        f"save_all mute [call], {THREAD}#1#c1, {THREAD}#1 [thread]",  # the phone's call, with what was done
    ]


def test_an_outsiders_comment_delivered_again_takes_three_round_trips_and_changes_nothing(make_world):
    world = make_world(store=Trips)
    comment(world, "alice", 1, 1)
    records, sent = world.store.dump(), len(world.chat.sent)
    world.store.trips.clear()
    assert comment(world, "alice", 1, 1) == "already shown"
    assert [trip.split(" ", 1)[0] for trip in world.store.trips] == ["load_all", "save_all", "save_all"]
    assert world.store.dump() == records and len(world.chat.sent) == sent and world.pending_claims() == []
