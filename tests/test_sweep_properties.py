"""Properties of the sweep over generated histories, driven the way production drives it: the scheduled run
every 15 minutes and the check every minute (pager.sweep.run_sweep, run.check), against the fake GitHub's
list of deliveries and its redeliveries, the control repository's alarm on the fake chat.

Hypothesis generates what happens: events of kinds pager acts on and kinds it ignores, in a few
repositories, each with what pager's endpoint answers it attempt after attempt (a pass, a 4xx refusal, a
5xx, a 429, no answer in time), sometimes an attempt asked for by hand, the sweep's limits small or large,
GitHub's pages small. After the generated hour pager answers every delivery again, and the world goes on
for the drain. Everything is checked against GitHub's own list, not the sweep's view of it.

    make test-deep     ten times the examples, searched anew (the suite runs the same 40); before changing the sweep
"""

from __future__ import annotations

from dataclasses import dataclass

import hypothesis
from hypothesis import HealthCheck, example, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support import Sweeps, examples

from pager.signals import acts_on
from pager.sweep import recovery
from pager.sweep.deliveries import State
from pager.sweep.lists import PASSED, REFUSED, outcome_of
from pager.values import parse_iso
from pager.waiting import SWEEP_KEY, Waiting
from pager_world.world import World

EXAMPLES = examples(40)

KINDS = (("workflow_run", "completed"), ("issues", "opened"), ("issue_comment", "created"), ("workflow_run", "requested"))
CODES = {"pass": st.sampled_from([200, 202]), "4xx": st.sampled_from([400, 401, 404]),
         "5xx": st.sampled_from([500, 502, 503]), "429": st.just(429), "no answer": st.just(0)}
# Failures weigh more than passes, so that events come again, use up their attempts and get named.
code = st.sampled_from(["pass", "4xx", "5xx", "5xx", "5xx", "429", "no answer"]).flatmap(lambda outcome: CODES[outcome])
HOUR = 60  # the generated minutes
DRAIN = 150  # minutes after them, pager answering every delivery


@dataclass
class Event:
    kind: tuple[str, str]
    repo: int
    minute: int
    answers: list[int]  # what pager answers each attempt in turn (then 200 once the hour is over)
    by_hand: int | None  # the minute someone presses Redeliver on the app's Advanced page


@st.composite
def events(draw) -> Event:
    return Event(kind=draw(st.sampled_from(KINDS)), repo=draw(st.sampled_from([1, 2, 3])),
                 minute=draw(st.integers(0, HOUR - 1)), answers=draw(st.lists(code, min_size=1, max_size=5)),
                 by_hand=draw(st.none() | st.integers(0, HOUR + 30)))


@st.composite
def settings(draw) -> dict[str, int]:
    redeliveries = draw(st.integers(1, 8))
    least = 1 + redeliveries + 1 + 5 + 4  # the least budget the settings take (pager.settings): others never run
    return {"sweep_max_redeliveries": redeliveries, "sweep_max_attempts": draw(st.sampled_from([1, 2, 3, 3, 4])),
            "sweep_all_pages": draw(st.integers(1, 4)), "sweep_failure_pages": draw(st.integers(1, 3)),
            "sweep_call_budget": draw(st.integers(least, 40))}


def hold_spans(log: list[tuple[float, Waiting | None]], end: float) -> list[tuple[float, float]]:
    """When redeliveries were held, from the `waiting` item seen after each run and check."""
    spans, since = [], None
    for at, waiting in log:
        holding = waiting is not None and any(s in recovery.HOLDING for s in waiting.services)
        if holding and since is None:
            since = waiting.since
        elif not holding and since is not None:
            spans.append((since, at))
            since = None
    return spans + ([(since, end)] if since is not None else [])


# GitHub failing to take redeliveries for a while (its API answering): from a minute, for so many, with a status
redelivery_outages = st.none() | st.tuples(st.integers(0, HOUR - 1), st.integers(1, 45), st.sampled_from([502, 503, 429]))


@hypothesis_settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                                                             HealthCheck.function_scoped_fixture])
@given(st.lists(events(), max_size=24), settings(), redelivery_outages)
@example(  # refused, then delivered again by hand into GitHub's redeliveries answering 429: named in the end
    history=[Event(("workflow_run", "completed"), 1, 0, [200], None), Event(("workflow_run", "completed"), 1, 0, [200, 200], None),
             Event(("workflow_run", "completed"), 1, 0, [400, 429], 15), Event(("workflow_run", "completed"), 1, 9, [503, 0, 0], None)],
    limits={"sweep_max_redeliveries": 3, "sweep_max_attempts": 2, "sweep_all_pages": 1, "sweep_failure_pages": 1,
            "sweep_call_budget": 14},
    redelivery_outage=(14, 45, 429))
def test_the_sweep_keeps_its_promises_over_generated_histories(private_key_pem, history, limits, redelivery_outage):
    world = Sweeps(World(private_key_pem, start=1_800_000_000 // 60 * 60, **limits))
    answers: dict[str, list[int]] = {}
    over = {"yes": False}
    world.answer = lambda guid, redelivery: 200 if over["yes"] else (answers[guid].pop(0) if answers[guid] else 200)
    guids: dict[str, Event] = {}
    held: list[tuple[float, Waiting | None]] = []
    for minute in range(HOUR + DRAIN):
        over["yes"] = minute >= HOUR
        for event in (e for e in history if e.minute == minute):
            guid = world.github.new_guid()
            answers[guid] = list(event.answers)
            guids[guid] = event
            world.github.deliver(event.kind[0], {"action": event.kind[1], "repository": {"id": event.repo}}, guid=guid)
        for guid, event in guids.items():
            if event.by_hand == minute:
                world.redeliver_by_hand(guid)
        if redelivery_outage and minute == redelivery_outage[0]:
            refusing = world.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", redelivery_outage[2], count=10**9)
        if redelivery_outage and minute == sum(redelivery_outage[:2]):
            world.world.faults.rules.remove(refusing)
        start = world.now
        summary = world.sweep(f"run-{minute}") if minute % 15 == 14 else world.check()
        assert summary.get("calls_used", 0) <= limits["sweep_call_budget"] + 2  # the alarm's send anew, a 429's retry
        held.append((world.now, Waiting.from_data(world.store.load(SWEEP_KEY, "waiting").data)))
        world.now = start + 60

    holds = hold_spans(held, world.now)
    in_hold = lambda a: a["redelivery"] and any(s < _time(a) <= u for s, u in holds)  # noqa: E731
    for guid, event in guids.items():
        true = world.attempts(guid)
        if not acts_on(*event.kind):
            # Only events pager acts on are asked for again (a probe may be any passed delivery).
            assert all(not a["redelivery"] or any(outcome_of(b["status_code"]) == PASSED for b in true[:i])
                       for i, a in enumerate(true)), (guid, true)
            continue
        # Never more than the attempts: each attempt outside a hold counts, the first delivery included.
        counted = [a for a in true if not in_hold(a)]
        assert len(counted) <= limits["sweep_max_attempts"] + (event.by_hand is not None), (guid, true)

    # Nothing lost silently: once pager answers again, every event it acts on has passed, was refused
    # (a 4xx: asking again changes nothing), or is named in the control repository's alarm.
    named = set(world.entries())
    for guid, event in guids.items():
        true = world.attempts(guid)
        outcomes = [outcome_of(a["status_code"]) for a in true]
        if not acts_on(*event.kind) or PASSED in outcomes or outcomes[-1] == REFUSED:
            continue
        assert guid in named, (guid, event, [(a["status_code"], a["redelivery"]) for a in true])

    state = State.from_data(world.store.load(SWEEP_KEY, "deliveries").data)
    assert State.from_data(state.to_data()) == state
    hypothesis.event(f"asked again: {'some' if any(a['redelivery'] for g in guids for a in world.attempts(g)) else 'none'}")
    hypothesis.event(f"held: {'yes' if holds else 'no'}")
    hypothesis.event(f"GitHub failed redeliveries: {'yes' if redelivery_outage else 'no'}")
    hypothesis.event(f"named: {'some' if named else 'none'}")
    hypothesis.event(f"no answers: {'some' if any(0 in e.answers for e in history) else 'none'}")


def _time(attempt: dict) -> float:
    return parse_iso(attempt["delivered_at"]) or 0.0
