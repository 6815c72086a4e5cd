"""The decision, pure (pager.sweep.deliveries): the state and what a run read in, a plan out; no I/O."""

from __future__ import annotations

import itertools
import json
import random
from dataclasses import replace

from support import make_settings
from support import paced as paced_counts

from pager.sweep import deliveries as d
from pager.sweep.deliveries import Followed, Hold, Known, Reason, State
from pager.sweep.lists import END, GITHUB_RETENTION, MET, Attempt, Read, Scan

NOW = 1_800_000_000.0
MINUTE = 60.0
ENTRY = "delivery:"


class History:
    """Attempts with ids growing with time, as GitHub lists them."""

    def __init__(self) -> None:
        self._ids = itertools.count(10_000)
        self._guids = itertools.count(1)

    def guid(self) -> str:
        return f"guid-{next(self._guids)}"

    def attempt(self, guid: str, code: int, *, ago: float, redelivery: bool = False, event: str = "workflow_run",
                action: str | None = "completed", repo: int | None = 7) -> Attempt:
        return Attempt(next(self._ids), guid, NOW - ago * MINUTE, redelivery, code, event, action, repo)


def read(*attempts: Attempt, ended: str = MET, scan: Scan | None = None) -> Read:
    newest = max((a for a in attempts), key=lambda a: a.id, default=None)
    scan = scan or (Scan(top=newest.id, top_at=newest.at) if newest else Scan())
    return Read(tuple(sorted(attempts, key=lambda a: a.id)), scan, 1, ended)


def plan(*attempts: Attempt, state: State | None = None, entries=None, now: float = NOW, held: float | None = None,
         released=None, settings=None, acts_on=lambda e, a: True, pages=lambda e, a: False, every: Read | None = None,
         failures: Read | None = None) -> d.Plan:
    state = state or State(floor=1, backfilled=True)
    known = Known(every if every is not None else read(*attempts), failures, entries or {}, held, released)
    return d.plan(state, known, settings or make_settings(), now=now, acts_on=acts_on, pages=pages)


def asked(p: d.Plan) -> list[str]:
    return [a.guid for a in p.ask]


def followed(p: d.Plan) -> dict[str, Followed]:
    return {r.guid: r for r in p.state.followed}


# -- the decision ------------------------------------------------------------------------------------------


def test_an_event_whose_first_delivery_failed_is_asked_for_at_once_by_its_newest_attempt():
    h = History()
    five, late = h.guid(), h.guid()
    p = plan(h.attempt(five, 502, ago=10), h.attempt(late, 0, ago=9))
    assert asked(p) == [five, late] and [a.delivery_id for a in p.ask] == [10_000, 10_001]
    assert all(r.due == NOW and r.asked for r in p.state.followed)


def test_a_refusal_an_ignored_event_and_a_pass_are_never_asked_for_nor_followed():
    h = History()
    refused, ignored, passed, ok = h.guid(), h.guid(), h.guid(), h.guid()
    p = plan(h.attempt(refused, 401, ago=9), h.attempt(ignored, 500, ago=8, event="workflow_job"),
             h.attempt(passed, 500, ago=7), h.attempt(passed, 200, ago=6, redelivery=True), h.attempt(ok, 200, ago=5),
             acts_on=lambda event, action: event != "workflow_job")
    assert asked(p) == [] and p.state.followed == ()


def test_a_429_is_asked_for_again_like_a_5xx():
    h = History()
    throttled = h.guid()
    assert asked(plan(h.attempt(throttled, 429, ago=3))) == [throttled]


def test_an_event_whose_attempts_are_used_up_is_one_entry_instead_of_a_fourth_attempt():
    h = History()
    g = h.guid()
    p = plan(h.attempt(g, 500, ago=40), h.attempt(g, 500, ago=25, redelivery=True), h.attempt(g, 502, ago=20, redelivery=True))
    assert asked(p) == [] and list(p.change.opened) == [ENTRY + g]
    entry = p.change.opened[ENTRY + g]
    assert entry["reason"] == "all attempts failed" and entry["attempts"] == 3 and entry["delivery_id"] == 10_002
    assert entry["title"] == "pager missed a workflow run — press ↻ Deliver again"  # the id of its repository: below
    assert entry["detail"] == "workflow run on repository 7: all attempts failed (3 deliveries, the last answered 502)"
    assert entry["url"] == "https://github.com/settings/apps/pager-test/advanced"
    assert p.state.alarm_due and [e.opened for e in p.effects if hasattr(e, "opened")]
    # its entry open, it is no longer followed; the attempts allowed come from the settings
    assert followed(plan(state=p.state, entries={g: NOW}, every=read())) == {}
    assert asked(plan(h.attempt(g, 500, ago=40), settings=make_settings(sweep_max_attempts=1))) == []


def test_an_entry_of_an_app_owned_by_an_organization_links_to_its_advanced_page():
    h = History()
    g = h.guid()
    p = plan(h.attempt(g, 500, ago=5), settings=make_settings(sweep_max_attempts=1, github_app_owner="acme"))
    assert p.change.opened[ENTRY + g]["url"] == "https://github.com/organizations/acme/settings/apps/pager-test/advanced"


def test_an_event_whose_first_delivery_the_run_never_read_is_not_asked_for_but_named_when_delivered_again_and_failing():
    h = History()
    g, probe = h.guid(), h.guid()
    # someone delivered it again by hand; its earlier attempts lie below what was read, and cannot be counted
    state = State(floor=1, backfilled=True, probe=(1, probe, NOW - 600))  # a hold's probe: a passed delivery
    p = plan(h.attempt(g, 500, ago=5, redelivery=True), h.attempt(probe, 502, ago=4, redelivery=True), state=state,
             released=(NOW - 4.5 * MINUTE, NOW - 1))  # the probe's failures are nothing to name
    assert asked(p) == [] and list(p.change.opened) == [ENTRY + g]
    assert p.change.opened[ENTRY + g]["reason"] == "delivered again, failed again"


def test_a_newer_event_of_the_same_kind_and_repository_passing_drops_nothing():
    h = History()
    old, new = h.guid(), h.guid()
    assert asked(plan(h.attempt(old, 500, ago=10), h.attempt(new, 200, ago=5))) == [old]


def test_a_followed_event_gains_the_attempts_later_runs_read_and_passes():
    h = History()
    g = h.guid()
    first = plan(h.attempt(g, 500, ago=30), now=NOW - 29 * MINUTE)
    again = h.attempt(g, 500, ago=28, redelivery=True)
    second = plan(again, state=first.state, now=NOW - 14 * MINUTE)
    assert followed(second)[g].attempts == 2 and asked(second) == [g]
    third = plan(h.attempt(g, 200, ago=13, redelivery=True), state=second.state)
    assert third.state.followed == () and third.counts["passed"] == 1


# -- asked, awaiting, resting -----------------------------------------------------------------------


def test_an_event_asked_for_is_awaited_not_asked_again_until_github_lists_its_attempt_or_ten_minutes_pass():
    h = History()
    g = h.guid()
    first = plan(h.attempt(g, 500, ago=20), now=NOW - 15 * MINUTE)
    assert asked(first) == [g]
    waiting = plan(state=first.state, every=read(), now=NOW - 10 * MINUTE)
    assert asked(waiting) == [] and waiting.counts["awaiting"] == 1
    lost = plan(state=first.state, every=read(), now=NOW)  # GitHub never delivered it: asked for again
    assert asked(lost) == [g]


def test_an_answer_in_a_pass_still_under_way_is_awaited_however_long_it_takes():
    h = History()
    g = h.guid()
    first = plan(h.attempt(g, 500, ago=60), now=NOW - 59 * MINUTE)
    under_way = Read((), Scan(top=first.state.every.top, head=99_999, head_at=NOW, next_url="link"), 1, "pages")
    assert asked(plan(state=first.state, every=under_way)) == []


def test_a_redelivery_that_failed_moments_ago_rests_before_it_is_asked_for_again():
    h = History()
    g = h.guid()
    first = plan(h.attempt(g, 500, ago=30), now=NOW - 29 * MINUTE)
    failed_again = h.attempt(g, 502, ago=5, redelivery=True)
    resting = plan(failed_again, state=first.state)
    assert asked(resting) == [] and resting.counts["resting"] == 1
    rest_ends = failed_again.at + d.REDELIVERY_SPACING_SECONDS
    assert followed(resting)[g].due == rest_ends  # the check of that minute asks for it
    assert [a.guid for a in d.due_now(resting.state.followed, rest_ends - MINUTE, rest_ends)] == [g]


# -- the pace ------------------------------------------------------------------------------------------


def test_candidates_are_paced_oldest_first_a_minute_at_a_time_and_pages_slower_for_telegram():
    h = History()
    runs = [h.guid() for _ in range(5)]
    comments = [h.guid() for _ in range(4)]
    attempts = [h.attempt(g, 500, ago=50 - i) for i, g in enumerate(runs)]
    attempts += [h.attempt(g, 500, ago=40 - i, event="issue_comment", action="created") for i, g in enumerate(comments)]
    settings = make_settings(sweep_max_redeliveries=3)
    p = plan(*attempts, settings=settings, pages=lambda e, a: e == "issue_comment")
    dues = {r.guid: (r.due - NOW) / MINUTE for r in p.state.followed}
    assert asked(p) == runs[:3] and [dues[g] for g in runs] == [0, 0, 0, 1, 1]
    assert [dues[g] for g in comments] == [1, 2, 2, 2] or [dues[g] for g in comments] == [1, 2, 2, 3]
    assert max(sum(1 for v in dues.values() if v == m) for m in range(4)) <= 3
    # each later minute's are the check's, once
    state = p.state
    queue = d.queue_of(state.to_data())  # what the check reads: the head alone
    minute_1 = d.due_now(queue, NOW, NOW + MINUTE)
    assert [a.guid for a in minute_1] == [g for g in (*runs, *comments) if dues[g] == 1]
    assert d.due_now(queue, NOW + MINUTE, NOW + 2 * MINUTE)
    assert not d.due_now(queue, max(NOW - MINUTE, state.ran_at), NOW)  # the run asked for its own minute


def test_a_page_pace_of_its_own_keeps_a_backlog_of_comments_under_telegrams_limit():
    rows = [Followed(f"c{i}", i + 1, NOW - 600 + i, "issue_comment", "created", 7, 1, i + 1, NOW - 600 + i, 500, False)
            for i in range(30)]
    paced = d.pace([(r, NOW) for r in rows], d.Pace(40, pages=lambda e, a: True), start=NOW, above=100)
    per_minute = [sum(1 for r in paced if r.due == NOW + 60 * m) for m in range(-(-30 // d.PAGES_PER_MINUTE))]
    assert per_minute == paced_counts(30, d.PAGES_PER_MINUTE)


def test_a_minute_full_of_pages_still_takes_events_whose_handler_sends_no_message():
    rows = [Followed(f"c{i}", i + 1, NOW - 600 + i, "issue_comment", "created", 7, 1, i + 1, NOW - 600 + i, 500, False)
            for i in range(d.PAGES_PER_MINUTE)]
    rows.append(Followed("run", 99, NOW - 300, "workflow_run", "completed", 7, 1, 99, NOW - 300, 500, False))
    paced = d.pace([(r, NOW) for r in rows], d.Pace(10, pages=lambda e, a: e == "issue_comment"), start=NOW, above=100)
    assert {r.guid: r.due for r in paced}["run"] == NOW and {r.due for r in paced} == {NOW}


def test_a_new_plan_keeps_the_minutes_a_check_may_be_asking_for_and_paces_again_the_later_ones():
    h = History()
    gs = [h.guid() for _ in range(8)]
    settings = make_settings(sweep_max_redeliveries=1)
    first = plan(*(h.attempt(g, 500, ago=20 - i) for i, g in enumerate(gs)), settings=settings, now=NOW - 2 * MINUTE)
    assert asked(first) == gs[:1]
    # two minutes later the checks asked for gs[1], and this minute's for gs[2] (due now): awaited, and this
    # minute is full; the next three minutes' are kept as queued (a check that read the plan before may ask for
    # them), the later ones paced again after them
    second = plan(state=first.state, every=read(), settings=settings)
    dues = {g: (r.due - NOW) / MINUTE for g, r in followed(second).items()}
    assert asked(second) == [] and second.counts["awaiting"] == 3
    assert [dues[g] for g in gs[3:]] == [1, 2, 3, 4, 5]


# -- holds ---------------------------------------------------------------------------------------------


def test_a_hold_asks_for_nothing_queues_nothing_and_an_attempt_made_during_it_does_not_count():
    h = History()
    g = h.guid()
    held = plan(h.attempt(g, 500, ago=30), held=NOW - 31 * MINUTE)
    assert asked(held) == [] and followed(held)[g].due == 0 and held.counts["held"] == 1
    probe = h.attempt(g, 502, ago=10, redelivery=True)  # with no passed delivery to probe with, it served
    released = plan(probe, state=held.state, released=(NOW - 31 * MINUTE, NOW - 1))
    assert followed(released)[g].attempts == 1 and asked(released) == [g]


def test_what_the_checks_were_to_ask_for_during_a_hold_is_asked_for_after_it():
    h = History()
    gs = [h.guid() for _ in range(3)]
    settings = make_settings(sweep_max_redeliveries=1)
    first = plan(*(h.attempt(g, 500, ago=20 - i) for i, g in enumerate(gs)), settings=settings, now=NOW - 5 * MINUTE)
    # a hold began half a minute later: the checks asked for nothing since
    after = plan(state=first.state, every=read(), settings=settings, released=(NOW - 4.5 * MINUTE, NOW - 1))
    assert asked(after) == gs[1:2] and after.counts["awaiting"] == 1


# -- naming ---------------------------------------------------------------------------------------


def test_an_event_github_forgets_within_hours_is_named_and_still_asked_for_within_minutes_only_named():
    h = History()
    soon, now_gone = h.guid(), h.guid()
    attempts = [h.attempt(soon, 500, ago=(GITHUB_RETENTION - 3600) / MINUTE),
                h.attempt(now_gone, 500, ago=(GITHUB_RETENTION - 60) / MINUTE)]
    p = plan(*attempts)
    assert asked(p) == [soon] and set(p.change.opened) == {ENTRY + soon, ENTRY + now_gone}
    assert p.change.opened[ENTRY + soon]["reason"] == "GitHub forgets it soon, still failing"


def test_however_many_events_fail_each_is_followed_and_the_plan_gives_a_minute_only_to_the_next_half_hour():
    h = History()
    gs = [h.guid() for _ in range(5000)]
    p = plan(*(h.attempt(g, 500, ago=3000 - i * 0.5) for i, g in enumerate(gs)), settings=make_settings(sweep_max_redeliveries=40))
    rows = followed(p)
    assert set(rows) == set(gs) and p.change.opened == {}  # none named for want of room
    queued = [g for g in gs if rows[g].due]
    assert queued == gs[:40 * d.QUEUE_MINUTES] and asked(p) == gs[:40]  # oldest first, the rest for later plans
    assert {rows[g].due for g in queued} == {NOW + MINUTE * m for m in range(d.QUEUE_MINUTES)}


def test_an_event_to_name_is_kept_until_the_alarm_shows_it():
    h = History()
    g = h.guid()
    p = plan(h.attempt(g, 500, ago=50), h.attempt(g, 502, ago=30, redelivery=True), h.attempt(g, 502, ago=20, redelivery=True))
    assert set(p.change.opened) == {ENTRY + g} and p.change.opened[ENTRY + g]["reason"] == "all attempts failed"
    # the alarm's change did not happen: the next run names it again; once the alarm shows it, it is let go
    again = plan(state=p.state, every=read())
    assert set(again.change.opened) == {ENTRY + g}
    shown = plan(state=p.state, every=read(), entries={g: NOW})
    assert followed(shown) == {} and shown.change.opened == {}


def test_an_entry_whose_event_passed_closes_also_when_the_alarms_change_did_not_happen_that_run():
    h = History()
    g = h.guid()
    entries = {g: NOW - 3600}
    passed = plan(h.attempt(g, 200, ago=5, redelivery=True), entries=entries)
    assert passed.change.closed == (ENTRY + g,) and passed.state.closing == (g,)
    later = plan(state=passed.state, every=read(), entries=entries)  # the change failed: the entry is still open
    assert later.change.closed == (ENTRY + g,)
    from pager.engine.perform import TOOK, Done
    from pager.sweep.acts import ChangeAlarm

    done = d.fold(later.state, [Done(ChangeAlarm({}, later.change.closed), TOOK)])
    assert done.closing == () and not done.alarm_due


def test_a_hundred_events_whose_attempts_are_used_up_are_all_named():
    h = History()
    attempts = []
    for i in range(100):
        g = h.guid()
        attempts += [h.attempt(g, 500, ago=200 - i), h.attempt(g, 500, ago=150 - i, redelivery=True),
                     h.attempt(g, 500, ago=100 - i, redelivery=True)]
    assert len(plan(*attempts).change.opened) == 100


def test_an_entry_closes_when_its_event_passes_shows_a_new_failure_and_is_counted_once_github_forgets_it():
    h = History()
    passed, again, old, other = h.guid(), h.guid(), h.guid(), h.guid()
    entries = {passed: NOW - 4 * 86400 + 10 * 3600, again: NOW - 3600, old: NOW - GITHUB_RETENTION - 60, other: NOW - 60}
    p = plan(h.attempt(passed, 200, ago=5, redelivery=True), h.attempt(again, 502, ago=4, redelivery=True),
             h.attempt(h.guid(), 200, ago=3), entries=entries)
    assert set(p.change.closed) == {ENTRY + passed, ENTRY + old} and p.change.forgotten == (ENTRY + old,)
    assert p.change.opened[ENTRY + again]["reason"] == "delivered again, failed again"
    assert ENTRY + other not in p.change.closed


def test_an_event_whose_entry_is_open_already_opens_none_and_an_alarm_change_stays_due_until_applied():
    h = History()
    g = h.guid()
    attempts = [h.attempt(g, 500, ago=40), h.attempt(g, 500, ago=25, redelivery=True), h.attempt(g, 500, ago=20, redelivery=True)]
    assert plan(*attempts, entries={g: NOW - 20 * MINUTE}).change.opened == {}
    due = plan(*attempts).state
    assert due.alarm_due and plan(state=due, every=read()).state.alarm_due


# -- reading ------------------------------------------------------------------------------------------


def test_the_failure_list_fills_in_below_the_floor_once_and_each_delivery_counts_once():
    h = History()
    old = h.guid()
    below = h.attempt(old, 500, ago=600)
    fresh = h.attempt(h.guid(), 200, ago=1)
    first = plan(fresh, state=State(), failures=read(below, ended=END), every=read(fresh, scan=Scan(top=fresh.id, top_at=fresh.at)))
    assert asked(first) == [old] and first.state.floor == fresh.id and first.state.backfilled
    twice = plan(fresh, state=State(), failures=read(below, fresh), every=read(fresh))
    assert [r.attempts for r in twice.state.followed] == [1]


def test_a_pass_that_finds_the_list_ending_before_the_pass_before_says_what_github_forgot_unread():
    h = History()
    state = State(every=Scan(top=5, top_at=NOW - 4 * 86400), floor=1, backfilled=True)
    newer = h.attempt(h.guid(), 200, ago=60)
    p = plan(state=state, every=Read((newer,), Scan(top=newer.id, top_at=newer.at, low=newer.id, low_at=newer.at), 1, END))
    assert [(g.since, g.until) for g in p.gaps] == [(NOW - 4 * 86400, newer.at)]


def test_a_pass_that_ends_within_the_overlap_of_the_pass_before_forgot_nothing_and_one_past_it_says_so():
    from pager.sweep.lists import OVERLAP_SECONDS

    h = History()
    state = State(every=Scan(top=5, top_at=NOW - 3600), floor=1, backfilled=True)
    newer = h.attempt(h.guid(), 200, ago=1)

    def gaps(low_at: float) -> list[tuple[float, float]]:
        scan = Scan(top=newer.id, top_at=newer.at, low=newer.id, low_at=low_at)
        return [(g.since, g.until) for g in plan(state=state, every=Read((newer,), scan, 1, END)).gaps]

    assert gaps(NOW - 3600 + OVERLAP_SECONDS) == []
    assert gaps(NOW - 3600 + OVERLAP_SECONDS + 1) == [(NOW - 3600, NOW - 3600 + OVERLAP_SECONDS + 1)]


def test_the_probe_is_the_newest_passed_delivery_read_while_github_keeps_it():
    h = History()
    a, b = h.attempt(h.guid(), 200, ago=50), h.attempt(h.guid(), 200, ago=40)
    p = plan(a, b, h.attempt(h.guid(), 500, ago=30))
    assert p.state.probe == (b.id, b.guid, b.at)
    assert plan(state=p.state, every=read(), now=NOW + GITHUB_RETENTION).state.probe is None


def test_the_probe_is_given_up_when_github_forgets_it_within_the_retention_margin():
    h = History()
    b = h.attempt(h.guid(), 200, ago=40)
    p = plan(b)
    edge = b.at + GITHUB_RETENTION - d.RETENTION_MARGIN  # a hold's probe GitHub may no longer deliver again
    assert plan(state=p.state, every=read(), now=edge - 1).state.probe == (b.id, b.guid, b.at)
    assert plan(state=p.state, every=read(), now=edge).state.probe is None


def test_a_delivery_picked_by_the_refused_job_is_awaited_then_named_if_it_fails_again():
    h = History()
    refused = h.attempt(h.guid(), 401, ago=60)
    state = d.with_picks(State(floor=1, backfilled=True, every=Scan(top=refused.id, top_at=refused.at)), [refused], NOW - 5 * MINUTE)
    assert plan(state=state, every=read()).counts["awaiting"] == 1
    failed = plan(h.attempt(refused.guid, 500, ago=4, redelivery=True), state=state)
    assert failed.change.opened[ENTRY + refused.guid]["reason"] == "delivered again, failed again"


# -- the stored state ---------------------------------------------------------------------------------


def test_each_followed_event_gets_one_verdict_in_the_decisions_order():
    row = Followed("g", 1, NOW - 600, "issues", "opened", 7, 1, 1, NOW - 600, 500, False)
    context = d.Context(NOW, 3, lambda e, a: True)
    assert d.judge(row, context) is Reason.CANDIDATE
    assert d.judge(replace(row, code=200), context) is Reason.PASSED
    assert d.judge(replace(row, code=404), context) is Reason.REFUSED
    assert d.judge(row, replace(context, acts_on=lambda e, a: False)) is Reason.IGNORED
    assert d.judge(replace(row, attempts=3), context) is Reason.EXHAUSTED
    assert d.judge(replace(row, due=NOW - 60, above=5), context) is Reason.AWAITING
    assert d.judge(replace(row, again=True, newest_at=NOW - 60), context) is Reason.RESTING


def test_a_redelivery_rests_until_its_spacing_is_over_and_an_event_is_forgotten_from_the_last_chances_margin():
    row = Followed("g", 1, NOW - 600, "issues", "opened", 7, 1, 1, NOW - 600, 500, False)
    context = d.Context(NOW, 3, lambda e, a: True)
    resting = replace(row, again=True, newest_at=NOW - 14 * MINUTE + 1)  # docs/sweep.md: "less than 14 minutes ago"
    assert d.judge(resting, context) is Reason.RESTING
    assert d.judge(replace(resting, newest_at=NOW - 14 * MINUTE), context) is Reason.CANDIDATE
    forgotten = NOW - GITHUB_RETENTION + d.LAST_CHANCE_MARGIN
    assert d.judge(replace(row, at=forgotten), context) is Reason.FORGOTTEN  # named, no longer asked for
    assert d.judge(replace(row, at=forgotten + 1), context) is Reason.LAST_CHANCE


def test_an_ask_is_awaited_until_ten_minutes_after_its_minute_and_asked_again_from_then():
    row = Followed("g", 1, NOW - 600, "issues", "opened", 7, 1, 1, NOW - 600, 500, False, above=5)
    context = d.Context(NOW, 3, lambda e, a: True)
    assert d.judge(replace(row, due=NOW - d.ASK_WAIT_SECONDS + MINUTE), context) is Reason.AWAITING
    assert d.judge(replace(row, due=NOW - d.ASK_WAIT_SECONDS), context) is Reason.CANDIDATE  # GitHub did not take it


def test_the_state_round_trips_through_its_stored_form():
    h = History()
    p = plan(h.attempt(h.guid(), 500, ago=9), h.attempt(h.guid(), 0, ago=8, event="issues", action="opened", repo=None),
             h.attempt(h.guid(), 200, ago=1))
    state = replace(p.state, holds=(Hold(NOW - 900, NOW - 800), Hold(NOW - 700, NOW - 600, counts=True)), last_event="evt-1", probed=(("guid-9", NOW - 60),))
    stored = json.loads(json.dumps(state.to_data()))
    assert State.from_data(stored, state.followed) == state  # the followed rows are the chunks' (pager.sweep.followed)
    assert State.from_data(stored) == replace(state, followed=())
    assert State.from_data({"v": 2, "cursor": [1, 2]}) == State()
    # a head of version 3 held its rows itself: read as they were
    old = {**stored, "v": 3, "followed": d.pack(state.followed)}
    assert State.from_data(old) == state and d.queue_of(old) == tuple(r for r in state.followed if d.askable(r))
    # holds stored as (since, until) before they said whether their attempts count: they do not
    assert State.from_data({**stored, "holds": [[NOW - 900, NOW - 800]]}).holds == (Hold(NOW - 900, NOW - 800, False),)


def test_the_largest_head_stays_well_under_dynamodbs_item_limit():
    # the head holds its rows queued for the next half hour at the fastest pace the settings take, inline
    # rows up to pager.sweep.followed.INLINE_ROWS (never both at their largest: the queue is a part of them)
    from pager.sweep import followed as f

    rows = big_rows(max(f.INLINE_ROWS, d.QUEUE_MINUTES * 100))
    state = State(every=Scan(top=10**12, top_at=NOW, head=10**12 + 5, head_at=NOW, next_url="https://api.github.com/app/hook/"
                             "deliveries?per_page=100&cursor=" + "x" * 300, recent=tuple(range(400)), head_recent=tuple(range(400))),
                  followed=rows, probe=(1, "g", NOW), holds=tuple(Hold(NOW - i, NOW) for i in range(d.HOLDS_KEPT)),
                  probed=tuple((f"{i:08d}-0000-4000-8000-000000000000", NOW) for i in range(300)),
                  closing=tuple(f"{i:08d}-0000-4000-8000-000000000000" for i in range(100)))
    assert len(json.dumps({**state.to_data(), "followed": d.pack(rows)})) < 350_000


def big_rows(n: int) -> tuple[Followed, ...]:
    """`n` followed rows as incompressible as GitHub's guids and ids make them."""
    rng = random.Random(7)
    return tuple(Followed(f"{rng.getrandbits(128):032x}"[:8] + "-1234-4abc-8def-" + f"{rng.getrandbits(48):012x}",
                          10**11 + 3 * i, NOW - rng.uniform(0, GITHUB_RETENTION), "pull_request_review_comment",
                          "created", rng.getrandbits(40), 2, 10**11 + 3 * i + 2, NOW - rng.uniform(0, 3600),
                          rng.choice((0, 500, 502, 429)), True, NOW + rng.uniform(0, 7200), 10**11 + 9 * n)
                 for i in range(n))


def test_a_pass_that_spans_runs_reads_a_redelivery_before_its_first_delivery_and_counts_both_once():
    h = History()
    done, failing = h.guid(), h.guid()
    first_done, first_failing = h.attempt(done, 502, ago=40), h.attempt(failing, 502, ago=39)
    again_done = h.attempt(done, 200, ago=10, redelivery=True)  # someone's Redeliver: it passed
    again_failing = h.attempt(failing, 500, ago=9, redelivery=True)  # and this one failed
    under_way = Scan(head=again_failing.id + 5, head_at=NOW, next_url="link")
    newer = plan(state=State(floor=1, backfilled=True),
                 every=Read((again_done, again_failing), under_way, 1, "pages"))
    assert asked(newer) == [] and newer.state.settled == (done,)  # the first run of the pass: nothing asked, nothing named
    assert followed(newer)[failing].first == 0 and newer.counts["unsure"] == 1 and newer.change.opened == {}
    older = plan(state=newer.state, every=Read((first_done, first_failing), Scan(top=under_way.head, top_at=NOW), 1, MET))
    row = followed(older)[failing]  # its Redeliver failed 9 minutes ago: it rests, then comes again (its third)
    assert row.attempts == 2 and row.first == first_failing.id and older.counts["resting"] == 1 and older.change.opened == {}
    assert done not in followed(older) and older.state.settled == ()


def test_events_whose_rest_ends_are_paced_with_the_others_never_more_than_a_minute_holds():
    h = History()
    comments = [h.guid() for _ in range(30)]
    runs = [h.guid() for _ in range(30)]
    attempts = []
    for g in comments:  # failed twice, the second 20 minutes ago: their rest ends together, now
        attempts += [h.attempt(g, 500, ago=40, event="issue_comment", action="created"),
                     h.attempt(g, 502, ago=20, redelivery=True, event="issue_comment", action="created")]
    attempts += [h.attempt(g, 500, ago=5) for g in runs]  # and fresh candidates
    p = plan(*attempts, settings=make_settings(sweep_max_redeliveries=10), pages=lambda e, a: e == "issue_comment")
    minutes: dict[float, list[str]] = {}
    for r in p.state.followed:
        minutes.setdefault(r.due, []).append(r.event)
    assert all(len(events) <= 10 and events.count("issue_comment") <= d.PAGES_PER_MINUTE for events in minutes.values())
    assert len(p.state.followed) == 60 and all(r.due >= NOW for r in p.state.followed)
