"""The sweep's pure planner (pager.sweep.plan): lists, state, settings and `now` in, a plan out; no I/O."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest
from support import make_settings

from pager.sweep import plan as planner
from pager.sweep.plan import ALARM_CALLS, Attempt, Event, Limits, ListRead, Reason, State, Verdict

NOW = 1_800_000_000.0
NO_STATE = State()  # a first run's state (frozen: one instance serves every call)
MINUTE = 60.0


class History:
    """Attempts with ids growing with time, as GitHub lists them."""

    def __init__(self) -> None:
        self._ids = itertools.count(10_000)
        self._guids = itertools.count(1)

    def guid(self) -> str:
        return f"guid-{next(self._guids)}"

    def attempt(self, guid: str, code: int, *, ago: float, redelivery: bool = False, event: str = "workflow_run",
                repo: int | None = 7, action: str | None = "completed") -> Attempt:
        return Attempt(next(self._ids), guid, NOW - ago * MINUTE, redelivery, code, event, action, repo)


def plan(*, failures=(), outcomes=(), state=NO_STATE, entries=None, settings=None, calls_used=None, failures_cut=False,
         outcomes_cut=False, no_room=False, now=NOW, limits=planner.LIMITS, acts_on=None):
    """Plan as the shell would: readings from the settings, the lists as given (newest first)."""
    settings = settings or make_settings()
    failure_reading = planner.failure_reading(settings, now, 0)
    fail_items = tuple(sorted((a for a in failures if 400 <= a.status_code <= 599), key=lambda a: -a.id))
    failures_read = ListRead(fail_items, 1, cut_short=failures_cut)
    all_reading = planner.all_reading(settings, state, now, 1)
    outcomes_read = None if no_room else ListRead(tuple(sorted(outcomes, key=lambda a: -a.id)), 1, cut_short=outcomes_cut)
    return planner.plan_run(
        failures=failures_read,
        failure_reading=failure_reading,
        outcomes=outcomes_read,
        all_reading=all_reading,
        state=state,
        entries=entries or {},
        settings=settings,
        now=now,
        calls_used=2 if calls_used is None else calls_used,
        limits=limits,
        **({} if acts_on is None else {"acts_on": acts_on}),
    )


def asked(result) -> list[str]:
    return [r.guid for r in result.redeliver]


# -- outcomes -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("code", "outcome"),
    [(200, "passed"), (302, "passed"), (399, "passed"), (400, "refused"), (401, "refused"), (499, "refused"),
     (500, "failed"), (502, "failed"), (599, "failed"), (0, "no answer"), (100, "no answer"), (199, "no answer"), (600, "no answer")],
)
def test_status_codes_map_to_passed_refused_failed_or_no_answer(code, outcome):
    assert planner.outcome_of(code) == outcome


def test_a_list_item_becomes_an_attempt_with_its_time_and_a_missing_status_code_as_no_answer():
    item = {"id": 12, "guid": "g", "delivered_at": "2026-11-12T10:00:00Z", "redelivery": True, "status_code": None,
            "event": "issues", "action": None, "repository_id": None, "status": "timed out"}
    attempt = Attempt.from_github(item)
    assert attempt is not None
    assert attempt.outcome == "no answer" and attempt.redelivery and attempt.repository_id is None
    assert planner.format_time(attempt.at) == "2026-11-12T10:00:00Z"
    assert Attempt.from_github({"guid": "g", "delivered_at": "2026-11-12T10:00:00Z"}) is None


# -- which events come again ------------------------------------------------------------------------


def test_an_event_whose_first_delivery_got_a_5xx_is_asked_for_again_by_its_newest_attempt():
    h = History()
    g = h.guid()
    first = h.attempt(g, 502, ago=30)
    again = h.attempt(g, 503, ago=15, redelivery=True)
    result = plan(failures=[first, again], outcomes=[first, again])
    assert [(r.guid, r.delivery_id, r.attempts) for r in result.redeliver] == [(g, again.id, 2)]


def test_an_answer_that_did_not_come_is_asked_for_again_and_remembered_for_the_next_runs():
    h = History()
    g = h.guid()
    first = h.attempt(g, 0, ago=5)
    result = plan(outcomes=[first])
    assert asked(result) == [g]
    assert first in result.state.remembered


def test_a_4xx_is_never_asked_for_again():
    h = History()
    g1, g2 = h.guid(), h.guid()
    refused = h.attempt(g1, 401, ago=20)
    failed_then_refused = [h.attempt(g2, 500, ago=19), h.attempt(g2, 400, ago=5, redelivery=True)]
    result = plan(failures=[refused, *failed_then_refused], outcomes=[refused, *failed_then_refused])
    assert asked(result) == []
    assert result.counts["refused"] == 2


def test_an_event_the_pager_only_ignores_is_never_asked_for_again_nor_remembered():
    from pager.signals import acts_on

    h = History()
    job, started, done = h.guid(), h.guid(), h.guid()
    attempts = [h.attempt(job, 0, ago=30, event="workflow_job", action="queued"),
                h.attempt(started, 502, ago=20, action="in_progress"),
                h.attempt(done, 0, ago=10, action="completed")]
    result = plan(failures=attempts, outcomes=attempts, acts_on=acts_on)
    assert asked(result) == [done]
    assert result.counts["ignored"] == 2
    assert [a.guid for a in result.state.remembered] == [done]


def test_an_event_that_passed_on_a_later_attempt_is_done():
    h = History()
    g = h.guid()
    attempts = [h.attempt(g, 500, ago=40), h.attempt(g, 200, ago=20, redelivery=True)]
    result = plan(failures=attempts, outcomes=attempts)
    assert asked(result) == [] and result.opened == {}


def test_an_event_with_all_its_attempts_failed_becomes_one_entry_instead_of_a_fourth_attempt():
    h = History()
    g = h.guid()
    attempts = [h.attempt(g, 502, ago=50), h.attempt(g, 0, ago=35, redelivery=True), h.attempt(g, 504, ago=20, redelivery=True)]
    result = plan(failures=attempts, outcomes=attempts)
    assert asked(result) == []
    assert list(result.opened) == [f"delivery:{g}"]
    entry = result.opened[f"delivery:{g}"]
    assert entry["url"] == "https://github.com/settings/apps/pager-test/advanced"
    assert entry["order"] == planner.format_time(attempts[-1].at)
    assert entry["title"] == "workflow run on repository 7: all attempts failed (3 deliveries, the last answered 504)"


def test_the_attempts_allowed_come_from_the_settings():
    h = History()
    g = h.guid()
    attempts = [h.attempt(g, 502, ago=50), h.attempt(g, 502, ago=35, redelivery=True), h.attempt(g, 502, ago=20, redelivery=True)]
    result = plan(failures=attempts, outcomes=attempts, settings=make_settings(sweep_max_attempts=4))
    assert asked(result) == [g] and result.opened == {}


def test_an_entry_links_to_the_advanced_page_of_an_app_owned_by_an_organization():
    h = History()
    g = h.guid()
    attempts = [h.attempt(g, 0, ago=50, event="ping", repo=None, action=None),
                h.attempt(g, 0, ago=35, redelivery=True, event="ping", repo=None, action=None),
                h.attempt(g, 0, ago=20, redelivery=True, event="ping", repo=None, action=None)]
    result = plan(outcomes=attempts, settings=make_settings(github_app_owner="acme"))
    entry = result.opened[f"delivery:{g}"]
    assert entry["url"] == "https://github.com/organizations/acme/settings/apps/pager-test/advanced"
    assert entry["title"] == "a ping event of no repository: all attempts failed (3 deliveries, the last without an answer in time)"


def test_an_event_whose_first_delivery_is_unseen_is_never_asked_for_again():
    h = History()
    g = h.guid()
    h.attempt(g, 200, ago=200)  # the first delivery passed long ago; nobody remembers it
    manual = h.attempt(g, 502, ago=10, redelivery=True)
    result = plan(failures=[manual], outcomes=[manual])
    assert asked(result) == [] and result.opened == {}
    assert result.counts["unseen"] == 1


def test_an_event_whose_first_delivery_left_the_window_is_never_asked_for_again():
    h = History()
    g = h.guid()
    first = h.attempt(g, 500, ago=181)
    result = plan(failures=[first], outcomes=[first])
    assert asked(result) == []


def test_when_the_failure_list_is_cut_short_only_events_newer_than_its_oldest_failure_count():
    h = History()
    old, new = h.guid(), h.guid()
    old_first = h.attempt(old, 0, ago=100)  # remembered no answer; its 5xx attempts may lie beyond the pages
    state = State(remembered=(old_first,))
    oldest_read = h.attempt(h.guid(), 404, ago=60)
    new_first = h.attempt(new, 500, ago=30)
    result = plan(failures=[oldest_read, new_first], state=state, failures_cut=True)
    assert asked(result) == [new]
    assert [g.list for g in result.gaps] == ["failures"]
    assert result.gaps[0].reached == oldest_read.at


# -- nothing is dropped because another event passed ----------------------------------------------------


def test_a_newer_passed_event_of_the_same_kind_and_repository_drops_nothing():
    # Another pull request's synchronize, another workflow's success: the list does not say what an
    # event is about, so the failed one comes again and its own record decides whether it is stale.
    h = History()
    failed, newer = h.guid(), h.guid()
    attempts = [h.attempt(failed, 502, ago=30, event="pull_request", action="opened"),
                h.attempt(newer, 200, ago=10, event="pull_request", action="synchronize")]
    result = plan(failures=attempts, outcomes=attempts)
    assert asked(result) == [failed]


def test_a_deferred_event_is_followed_past_the_window_and_asked_for_by_a_later_run():
    h = History()
    events = [h.guid() for _ in range(12)]
    attempts = [h.attempt(g, 502, ago=170 - i, event="issue_comment", action="created") for i, g in enumerate(events)]
    first = plan(failures=attempts, outcomes=attempts)
    assert asked(first) == events[:10] and first.counts["deferred"] == 2
    assert first.state.followed_guids == set(events)
    # Two hours later the ten asked for have passed, and the two left waiting are outside the window,
    # yet still counted.
    passes = [Attempt(10**6 + i, g, NOW + 5 * MINUTE, True, 200, "issue_comment", "created", 7) for i, g in enumerate(events[:10])]
    later = plan(outcomes=passes, state=first.state, now=NOW + 120 * MINUTE)
    assert asked(later) == events[10:]
    assert later.counts["followed_past_window"] == 2 and later.state.followed_guids == set(events[10:])


def test_an_event_still_failing_as_github_is_about_to_forget_it_is_named_instead():
    h = History()
    g = h.guid()
    first = h.attempt(g, 502, ago=10, event="issue_comment", action="created")
    followed = plan(failures=[first], outcomes=[first], settings=make_settings(sweep_max_redeliveries=0)).state
    late = NOW + planner.GITHUB_RETENTION - planner.RETENTION_MARGIN + 10 * MINUTE
    result = plan(state=followed, now=late, settings=make_settings(sweep_max_redeliveries=0))
    assert asked(result) == [] and list(result.opened) == [f"delivery:{g}"]
    assert "GitHub forgets it soon" in result.opened[f"delivery:{g}"]["title"]


def test_an_event_github_is_about_to_forget_is_named_and_still_asked_for_while_github_keeps_it():
    h = History()
    g = h.guid()
    first = h.attempt(g, 502, ago=10, event="issue_comment", action="created")
    held = plan(failures=[first], outcomes=[first], settings=make_settings(sweep_max_redeliveries=0)).state
    forgotten_at = first.at + planner.GITHUB_RETENTION
    # A service back in the event's last hours: named, and asked for (oldest first, as a candidate is).
    late = plan(state=held, now=forgotten_at - planner.RETENTION_MARGIN + 10 * MINUTE)
    assert asked(late) == [g] and list(late.opened) == [f"delivery:{g}"]
    # Its redelivery failed moments ago: not asked again before the spacing; nor minutes before GitHub forgets it.
    again = h.attempt(g, 502, ago=-planner.GITHUB_RETENTION / MINUTE + planner.RETENTION_MARGIN / MINUTE - 11,
                      redelivery=True, event="issue_comment", action="created")
    resting = plan(failures=[again], outcomes=[again], state=late.state, entries={g: again.at},
                   now=again.at + 5 * MINUTE)
    assert asked(resting) == [] and g in resting.state.followed_guids  # still followed: asked for after the rest
    last_minutes = plan(failures=[again], outcomes=[again], state=late.state, entries={g: again.at},
                        now=forgotten_at - planner.LAST_CHANCE_MARGIN + MINUTE)
    assert asked(last_minutes) == []


def test_events_beyond_the_room_to_follow_them_are_named_in_the_alarm_at_once():
    h = History()
    events = [h.guid() for _ in range(5)]
    attempts = [h.attempt(g, 502, ago=60 - i) for i, g in enumerate(events)]
    result = plan(failures=attempts, outcomes=attempts, limits=replace(planner.LIMITS, followed=3),
                  settings=make_settings(sweep_max_redeliveries=0))
    assert result.state.followed_guids == set(events[2:])  # the newest kept
    assert set(result.opened) == {f"delivery:{g}" for g in events[:2]}
    assert "too many failed events to follow" in result.opened[f"delivery:{events[0]}"]["title"]
    assert result.counts["unfollowed"] == 2


def test_redeliveries_go_oldest_first_and_stop_at_the_per_run_cap():
    h = History()
    firsts = [h.attempt(h.guid(), 500, ago=170 - i, event="issue_comment") for i in range(14)]
    result = plan(failures=firsts, outcomes=firsts)
    assert asked(result) == [a.guid for a in firsts[:10]]
    assert result.counts["deferred"] == 4


def test_redeliveries_stop_where_the_budget_ends():
    h = History()
    firsts = [h.attempt(h.guid(), 500, ago=100 - i, event="issue_comment") for i in range(8)]
    result = plan(failures=firsts, outcomes=firsts, calls_used=45)
    assert len(result.redeliver) == 5


def test_the_every_outcome_list_leaves_calls_for_ten_redeliveries_and_one_alarm_change():
    settings = make_settings()
    assert planner.all_reading(settings, State(), NOW, 3).pages == 20
    assert planner.all_reading(settings, State(), NOW, 33).pages == 50 - 33 - 10 - ALARM_CALLS
    assert planner.all_reading(settings, State(), NOW, 50 - 10 - ALARM_CALLS).pages == 0
    assert planner.failure_reading(make_settings(sweep_call_budget=2), NOW, 0).pages == 2


def test_without_room_for_a_page_of_every_outcome_nothing_is_asked_and_the_alarm_and_cursor_stay():
    h = History()
    g = h.guid()
    failed = [h.attempt(g, 500, ago=30)]
    cursor = (h.attempt(h.guid(), 200, ago=20).id, NOW - 20 * MINUTE)
    state = State(cursor=cursor)
    result = plan(failures=failed, state=state, entries={"gone": NOW - 600}, no_room=True)
    assert result.no_room and result.redeliver == () and not result.alarm_change
    assert result.state.cursor == cursor and result.opened == {} and result.closed == ()


def test_the_alarm_change_fits_only_when_an_edit_and_a_send_are_left():
    settings = make_settings()
    assert planner.alarm_fits(settings, 50 - ALARM_CALLS)
    assert not planner.alarm_fits(settings, 50 - ALARM_CALLS + 1)


# -- reading the lists ----------------------------------------------------------------------------------


def test_the_every_outcome_list_reads_back_to_the_cursor_and_a_first_run_to_the_windows_start():
    h = History()
    older = h.attempt(h.guid(), 200, ago=40)
    cursor_item = h.attempt(h.guid(), 200, ago=20)
    newer = h.attempt(h.guid(), 200, ago=10)
    state = State(cursor=(cursor_item.id, cursor_item.at))
    reading = planner.all_reading(make_settings(), state, NOW, 3)
    assert not reading.reached([newer]) and not reading.reached([newer, cursor_item])
    assert reading.reached([newer, cursor_item, older])  # a little past the cursor: see the next test
    assert reading.wanted == cursor_item.at
    first_run = planner.all_reading(make_settings(), State(), NOW, 3)
    assert not first_run.reached([newer, cursor_item, older])
    assert first_run.reached([h.attempt(h.guid(), 200, ago=181)])
    assert first_run.wanted == NOW - 180 * MINUTE


def test_the_every_outcome_list_reads_a_little_past_the_cursor_for_a_no_answer_listed_late():
    h = History()
    timed_out = h.attempt(h.guid(), 0, ago=10.1)  # started first, listed only after GitHub's 10 s wait
    cursor_item = h.attempt(h.guid(), 200, ago=10)
    reading = planner.all_reading(make_settings(), State(cursor=(cursor_item.id, cursor_item.at)), NOW, 3)
    late = replace(timed_out, id=cursor_item.id - 1)
    assert not reading.reached([late])  # within the overlap: the next page is read too
    result = plan(outcomes=[late], state=State(cursor=(cursor_item.id, cursor_item.at)))
    assert asked(result) == [late.guid]


def test_a_cursor_that_left_the_window_reads_back_only_to_the_windows_start():
    stale = State(cursor=(5, NOW - 400 * MINUTE))
    reading = planner.all_reading(make_settings(), stale, NOW, 3)
    assert reading.stop_id is None and reading.wanted == NOW - 180 * MINUTE


def test_a_list_cut_short_by_its_page_cap_is_a_reach_gap_saying_how_far_it_reached_and_wanted():
    h = History()
    cursor = h.attempt(h.guid(), 200, ago=60)
    read = [h.attempt(h.guid(), 200, ago=12), h.attempt(h.guid(), 200, ago=2)]
    result = plan(outcomes=read, outcomes_cut=True, state=State(cursor=(cursor.id, cursor.at)))
    (gap,) = result.gaps
    assert gap.to_log() == {"list": "all", "reached": planner.format_time(NOW - 12 * MINUTE),
                            "wanted": planner.format_time(cursor.at), "pages": 1}
    assert result.state.cursor == (read[-1].id, read[-1].at)


def test_lists_that_reached_their_stop_or_their_end_leave_no_reach_gap():
    h = History()
    result = plan(outcomes=[h.attempt(h.guid(), 200, ago=5)])
    assert result.gaps == ()


def test_the_cursor_moves_to_the_newest_delivery_read_and_never_back():
    h = History()
    a = h.attempt(h.guid(), 200, ago=30)
    b = h.attempt(h.guid(), 0, ago=10)
    first = plan(outcomes=[a, b])
    assert first.state.cursor == (b.id, b.at)
    second = plan(outcomes=[], state=first.state)
    assert second.state.cursor == (b.id, b.at)


# -- entries --------------------------------------------------------------------------------------------


def exhausted(h: History, guid: str, *, ago: float = 50, **kw) -> list[Attempt]:
    return [h.attempt(guid, 502, ago=ago, **kw), h.attempt(guid, 502, ago=ago - 15, redelivery=True, **kw),
            h.attempt(guid, 502, ago=ago - 30, redelivery=True, **kw)]


def test_an_entry_closes_when_a_later_attempt_passes_even_after_the_window():
    h = History()
    g = h.guid()
    manual = Attempt(h.attempt(g, 200, ago=0).id, g, NOW + 300 * MINUTE, True, 200, "workflow_run", "completed", 7)
    later = plan(outcomes=[manual], entries={g: NOW - 20 * MINUTE}, now=NOW + 301 * MINUTE)
    assert later.closed == (f"delivery:{g}",)


def test_a_newer_event_of_its_kind_and_repository_passing_closes_no_entry():
    h = History()
    g = h.guid()
    newer = h.attempt(h.guid(), 200, ago=5)
    assert plan(outcomes=[newer], entries={g: NOW - 20 * MINUTE}).closed == ()


def test_an_entry_stays_open_past_the_window_until_github_stops_listing_the_event():
    h = History()
    g = h.guid()
    entries = {g: NOW - 20 * MINUTE}
    assert plan(entries=entries, now=NOW + 240 * MINUTE).closed == ()
    assert plan(entries=entries, now=NOW + 3 * 24 * 60 * MINUTE).closed == (f"delivery:{g}",)


def test_an_event_whose_entry_is_open_already_opens_none():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    assert plan(failures=attempts, outcomes=attempts, entries={g: attempts[-1].at}).opened == {}


def test_an_alarm_change_that_did_not_happen_is_due_until_a_run_applies_it():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    failed_change = plan(failures=attempts, outcomes=attempts).state  # Telegram failed: nothing written
    assert failed_change.alarm_due and g in failed_change.followed_guids  # followed until it is named
    again = plan(state=failed_change, now=NOW + 200 * MINUTE)  # even after the window
    assert list(again.opened) == [f"delivery:{g}"]
    # The entry was written, but its render failed: the next run renders again, with nothing to change.
    rendered_later = plan(state=again.state, entries={g: attempts[-1].at}, now=NOW + 215 * MINUTE)
    assert rendered_later.opened == {} and rendered_later.alarm_change
    assert not rendered_later.applied().alarm_due and g not in rendered_later.state.followed_guids


def test_a_hundred_events_that_used_up_their_attempts_are_all_named():
    h = History()
    attempts = [a for _ in range(100) for a in exhausted(h, h.guid(), event="issue_comment")]
    assert len(plan(failures=attempts).opened) == 100


# -- state ----------------------------------------------------------------------------------------------


def test_the_state_keeps_no_answers_and_passed_redeliveries_and_forgets_what_left_the_window():
    h = History()
    g = h.guid()
    no_answer = h.attempt(g, 0, ago=60)
    failed = h.attempt(h.guid(), 500, ago=50)
    passed_first = h.attempt(h.guid(), 200, ago=40)
    passed_again = h.attempt(g, 200, ago=30, redelivery=True)
    result = plan(failures=[failed], outcomes=[no_answer, failed, passed_first, passed_again])
    assert set(result.state.remembered) == {no_answer, passed_again}
    later = plan(state=result.state, now=NOW + 150 * MINUTE)
    assert set(later.state.remembered) == {passed_again}
    assert plan(state=result.state, now=NOW + 200 * MINUTE).state.remembered == ()


def test_a_remembered_passed_redelivery_keeps_the_event_from_coming_again():
    h = History()
    g = h.guid()
    first = h.attempt(g, 503, ago=40)
    passed = h.attempt(g, 200, ago=25, redelivery=True)
    run1 = plan(failures=[first], outcomes=[first, passed])
    run2 = plan(failures=[first], outcomes=[], state=run1.applied())  # the pass is behind the cursor now
    assert asked(run2) == []


def test_a_trimmed_memory_stops_counting_the_events_it_may_have_cut_but_never_a_followed_one():
    h = History()
    olds = [h.attempt(h.guid(), 0, ago=100 - i) for i in range(5)]
    news = [h.attempt(h.guid(), 0, ago=50 - i) for i in range(3)]
    run1 = plan(outcomes=[*olds, *news], limits=Limits(remembered=3), settings=make_settings(sweep_max_redeliveries=0))
    assert run1.state.horizon == (olds[-1].id, olds[-1].at)
    assert any(g.list == "memory" for g in run1.gaps)
    # Each of them failed and was counted: it is followed, whatever the memory's trim.
    run2 = plan(state=run1.applied(), limits=Limits(remembered=3))
    assert asked(run2) == [a.guid for a in [*olds, *news]]
    # An event the runs never counted, older than the horizon, is not counted now.
    stray = Attempt(olds[0].id + 1, "stray", olds[0].at, False, 0, "workflow_run", "completed", 7)
    assert "stray" not in asked(plan(outcomes=[stray], state=run1.applied(), limits=Limits(remembered=3)))


def test_an_event_whose_remembered_attempt_was_trimmed_is_not_asked_for_a_fourth_time():
    h = History()
    g = h.guid()
    first = h.attempt(g, 500, ago=60)  # always back on the failure list
    no_answers = [h.attempt(g, 0, ago=45, redelivery=True), h.attempt(g, 0, ago=30, redelivery=True)]
    run1 = plan(failures=[first], outcomes=[first, *no_answers], limits=Limits(remembered=1))
    assert run1.state.remembered == (no_answers[-1],)
    run2 = plan(failures=[first], state=run1.applied(), limits=Limits(remembered=1))
    assert asked(run2) == []


def test_the_state_round_trips_through_its_stored_form():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    followed = h.attempt(h.guid(), 502, ago=10)
    result = plan(failures=[*attempts, followed], outcomes=[*attempts, h.attempt(h.guid(), 0, ago=3, repo=None, action=None)],
                  settings=make_settings(sweep_max_redeliveries=0))
    state = result.state
    assert state.followed and state.alarm_due
    assert State.from_data(state.to_data()) == state
    assert State.from_data({}) == State() and State.from_data({"v": 99, "cursor": [1, 2]}) == State()


def test_the_largest_state_stays_well_under_dynamodbs_item_limit():
    long = "x" * 100
    ids = itertools.count(10**12)
    limits = planner.LIMITS
    remembered = tuple(
        Attempt(next(ids), f"{i:036d}", NOW - 60, bool(i % 2), 0, long, long, 10**12)
        for i in range(limits.remembered * 2)
    )
    # Long names are cut when read from GitHub; the state gets only what Attempt.from_github made.
    remembered = tuple(replace(a, event=a.event[:40], action=a.action[:40]) for a in remembered)
    followed = tuple(
        Attempt(next(ids), f"f{i // 3:035d}", NOW - 60, bool(i % 3), 502, "e" * 40, "a" * 40, 10**12)
        for i in range(limits.followed * 2)
    )
    state = State(cursor=(10**13, NOW), remembered=remembered, followed=followed, alarm_due=True, ran_at=NOW)
    result = plan(state=state, settings=make_settings(sweep_max_redeliveries=0))
    assert len(result.state.remembered) == limits.remembered and len(result.state.followed) <= limits.followed
    assert result.state.encoded_size() < 300_000


# -- the phases: (a) merge the attempts -----------------------------------------------------------------


def test_merging_counts_a_delivery_read_twice_once_and_groups_the_attempts_by_event_oldest_first():
    h = History()
    g1, g2 = h.guid(), h.guid()
    first = h.attempt(g1, 0, ago=30)
    other = h.attempt(g2, 500, ago=20)
    again = h.attempt(g1, 502, ago=10, redelivery=True)
    events = planner.merge_attempts([first], [again, other], [other, first])
    assert [(e.guid, e.attempts) for e in events] == [(g1, (first, again)), (g2, (other,))]
    assert events[0].first == first and events[0].newest == again and not events[0].passed


def test_merging_keeps_the_later_sources_copy_of_a_delivery():
    h = History()
    listed = h.attempt(h.guid(), 200, ago=10)
    remembered = replace(listed, status_code=0)
    (event,) = planner.merge_attempts([remembered], [listed])
    assert event.attempts == (listed,) and event.passed


def test_an_event_whose_first_delivery_the_run_does_not_know_has_none():
    h = History()
    manual = h.attempt(h.guid(), 502, ago=10, redelivery=True)
    (event,) = planner.merge_attempts([manual])
    assert event.first is None and event.newest == manual


def always(event, action):
    return True


# -- (b) one verdict per event --------------------------------------------------------------------------


def test_the_view_is_complete_from_the_oldest_failure_of_a_cut_list_and_above_a_trimmed_memorys_horizon():
    h = History()
    failures = (h.attempt(h.guid(), 500, ago=20), h.attempt(h.guid(), 502, ago=10))
    whole, cut = ListRead(failures, 1, cut_short=False), ListRead(failures, 3, cut_short=True)
    assert planner.counted_from(whole, None) <= 0
    assert planner.counted_from(cut, None) == failures[0].id
    assert planner.counted_from(whole, (failures[1].id, failures[1].at)) == failures[1].id + 1
    assert planner.counted_from(ListRead((), 3, cut_short=True), None) == float("inf")


def verdict(codes, *, ago=30, first_known=True, counted_from=-1, followed=False, acts=True, max_attempts=3, failures_from=-1,
            gap_after=None, **kw):
    h = History()
    g = h.guid()
    attempts = [h.attempt(g, code, ago=ago - 5 * n, redelivery=n > 0 or not first_known, **kw) for n, code in enumerate(codes)]
    (event,) = planner.merge_attempts(attempts)
    return planner.judge(event, start=NOW - 180 * MINUTE, counted_from=counted_from,
                         followed=frozenset({g}) if followed else frozenset(), now=NOW,
                         max_attempts=max_attempts, acts_on=lambda event, action: acts, failures_from=failures_from,
                         gap_after=gap_after).reason


def test_each_event_gets_one_verdict_in_the_decisions_order():
    assert verdict([500, 200]) is verdict([200], first_known=False) is Reason.PASSED
    assert verdict([502], first_known=False) is verdict([502], ago=181) is Reason.UNSEEN
    assert verdict([502], counted_from=10**9) is Reason.UNSEEN
    assert verdict([502], ago=181, followed=True) is verdict([502], counted_from=10**9, followed=True) is Reason.CANDIDATE
    assert verdict([500, 404]) is verdict([404], acts=False) is Reason.REFUSED
    assert verdict([502], acts=False) is Reason.IGNORED
    assert verdict([502, 0]) is verdict([502, 0, 502], max_attempts=4) is Reason.CANDIDATE
    assert verdict([502, 0, 502]) is Reason.EXHAUSTED
    assert verdict([502], ago=3 * 24 * 60, followed=True) is Reason.FORGOTTEN
    # in GitHub's last two hours (but its last minutes): named, and still asked for
    assert verdict([502], ago=3 * 24 * 60 - 60, followed=True) is Reason.LAST_CHANCE
    assert verdict([502, 502], ago=3 * 24 * 60 - 60, followed=True) is Reason.LAST_CHANCE
    # Its redelivery failed minutes ago: asked for again a schedule's interval later, not at the next check.
    assert verdict([502, 502], ago=10) is Reason.RESTING and verdict([502], ago=1) is Reason.CANDIDATE
    # Followed, but a redelivery since may lie beyond the failure pages that were cut short: not asked for.
    assert verdict([502], followed=True, failures_from=10**18, gap_after=NOW) is Reason.UNSURE
    assert verdict([502], followed=False, failures_from=10**18, gap_after=NOW) is Reason.CANDIDATE
    # ... but not when the every-outcome list saw everything since it: a redelivery would be on it
    assert verdict([502], followed=True, failures_from=10**18) is Reason.CANDIDATE


def test_the_failure_list_reads_back_to_the_newest_attempt_of_each_followed_event():
    h = History()
    g = h.guid()
    old = h.attempt(g, 502, ago=300)
    settings = make_settings()
    state = State(followed=(old, h.attempt(g, 502, ago=250, redelivery=True)))
    assert planner.failure_reading(settings, NOW, 0, state).stop_at == NOW - 250 * MINUTE
    assert planner.failure_reading(settings, NOW, 0, State()).stop_at == NOW - settings.sweep_window_minutes * MINUTE


def test_the_counts_leave_out_an_unseen_refusal_since_nothing_would_come_again_anyway():
    h = History()
    unseen_refusal = Event("a", (h.attempt("a", 404, ago=10, redelivery=True),))
    unseen_failure = Event("b", (h.attempt("b", 502, ago=10, redelivery=True),))
    verdicts = [Verdict(unseen_refusal, Reason.UNSEEN), Verdict(unseen_failure, Reason.UNSEEN)]
    assert not verdicts[0].counted and verdicts[1].counted
    assert planner.tally(verdicts) == {"candidates": 0, "forgotten": 0, "refused": 0, "ignored": 0, "exhausted": 0,
                                       "unseen": 1, "passed": 0, "unsure": 0, "awaiting": 0, "resting": 0}


# -- (c) choose the redeliveries ------------------------------------------------------------------------


def candidates(h: History, count: int) -> list[Event]:
    made = []
    for i in range(count):
        g = h.guid()
        made.append(Event(g, (h.attempt(g, 502, ago=100 - i), h.attempt(g, 0, ago=50 - i, redelivery=True))))
    return made


def test_redeliveries_are_chosen_oldest_first_by_first_delivery_each_by_its_newest_attempt():
    h = History()
    made = candidates(h, 3)
    chosen = planner.choose_redeliveries(reversed(made), settings=make_settings(), calls_used=2)
    assert [(r.guid, r.delivery_id, r.event, r.attempts) for r in chosen] == [
        (e.guid, e.newest.id, "workflow_run", 2) for e in made]


def test_the_choice_stops_at_the_per_run_cap_and_at_the_calls_left():
    made = candidates(History(), 5)
    assert len(planner.choose_redeliveries(made, settings=make_settings(sweep_max_redeliveries=2), calls_used=0)) == 2
    assert len(planner.choose_redeliveries(made, settings=make_settings(), calls_used=49)) == 1
    assert planner.choose_redeliveries(made, settings=make_settings(), calls_used=51) == ()


# -- (d) follow the failing events ---------------------------------------------------------------------


def test_the_events_followed_are_the_candidates_and_those_to_name_whose_entry_is_not_open_yet():
    h = History()
    made = candidates(h, 3)
    verdicts = [Verdict(made[0], Reason.CANDIDATE), Verdict(made[1], Reason.EXHAUSTED), Verdict(made[2], Reason.EXHAUSTED)]
    followed, unfollowed = planner.follow(verdicts, 100, {made[2].guid: NOW})
    assert [e.guid for e in followed] == [made[1].guid, made[0].guid] and unfollowed == ()


def test_past_the_room_to_follow_the_oldest_events_are_handed_back():
    made = candidates(History(), 4)  # two attempts each
    followed, unfollowed = planner.follow([Verdict(e, Reason.CANDIDATE) for e in made], 5, {})
    assert [e.guid for e in followed] == [made[3].guid, made[2].guid]
    assert [e.guid for e in unfollowed] == [made[1].guid, made[0].guid]


# -- (e) reconcile the entries --------------------------------------------------------------------------


def test_entries_close_when_their_event_passed_or_left_githubs_retention_which_is_said_and_otherwise_stay():
    h = History()
    passed_g = h.guid()
    entries = {passed_g: NOW - 60 * MINUTE, "gone": NOW - planner.GITHUB_RETENTION - 1, "stays": NOW - planner.GITHUB_RETENTION}
    passed = Verdict(Event(passed_g, (h.attempt(passed_g, 200, ago=1, redelivery=True),)), Reason.PASSED)
    opened, closed, forgotten = planner.reconcile_entries(entries, [passed], (), now=NOW, url="https://advanced")
    assert opened == {} and sorted(closed) == sorted(("delivery:gone", f"delivery:{passed_g}"))
    assert forgotten == ("delivery:gone",)  # GitHub no longer keeps it: counted in the alarm, not closed silently


def test_each_event_to_name_opens_one_entry_oldest_first_unless_it_is_open():
    h = History()
    made = [Event(e.guid, (*e.attempts, h.attempt(e.guid, 504, ago=1, redelivery=True))) for e in candidates(h, 3)]
    verdicts = [Verdict(e, Reason.EXHAUSTED) for e in reversed(made)]
    opened, closed, _ = planner.reconcile_entries({made[1].guid: NOW}, verdicts, (), now=NOW, url="https://advanced")
    assert list(opened) == [f"delivery:{made[0].guid}", f"delivery:{made[2].guid}"] and closed == ()
    assert opened[f"delivery:{made[0].guid}"] == {
        "title": "workflow run on repository 7: all attempts failed (3 deliveries, the last answered 504)",
        "url": "https://advanced", "order": planner.format_time(made[0].newest.at),
        "delivery_id": made[0].newest.id, "repository_id": 7, "guid": made[0].guid, "event": "workflow_run",
        "reason": "all attempts failed", "attempts": 3, "last": "answered 504"}
    assert made[0].guid not in opened[f"delivery:{made[0].guid}"]["title"]  # no GUID reaches the chat


# -- (f) trim the state ---------------------------------------------------------------------------------


def next_state(state=NO_STATE, *, attempts=(), followed=(), read=(), acts_on=always, limits=planner.LIMITS):
    return planner.next_state(state, events=planner.merge_attempts(attempts), followed=followed, read=read,
                              start=NOW - 180 * MINUTE, now=NOW, alarm_due=False, acts_on=acts_on, limits=limits)


def test_the_next_state_remembers_the_windows_no_answers_and_passed_redeliveries_of_events_a_handler_acts_on():
    from pager.signals import acts_on

    h = History()
    g = h.guid()
    kept = [h.attempt(g, 0, ago=30), h.attempt(g, 200, ago=20, redelivery=True)]
    forgotten = [h.attempt(h.guid(), 0, ago=181), h.attempt(h.guid(), 200, ago=20), h.attempt(h.guid(), 502, ago=20),
                 h.attempt(h.guid(), 0, ago=20, action="in_progress")]
    state = next_state(attempts=[*kept, *forgotten], acts_on=acts_on)
    assert state.remembered == tuple(kept) and state.horizon is None and state.ran_at == NOW


def test_a_cap_keeps_the_newest_and_moves_the_horizon_up_to_the_newest_one_dropped():
    h = History()
    no_answers = [h.attempt(h.guid(), 0, ago=50 - i) for i in range(4)]
    state = next_state(attempts=no_answers, limits=Limits(remembered=2))
    assert state.remembered == tuple(no_answers[2:]) and state.horizon == (no_answers[1].id, no_answers[1].at)


def test_the_next_state_keeps_every_attempt_of_the_followed_events_whatever_their_age():
    h = History()
    made = candidates(h, 2)
    old = Event("old", (h.attempt("old", 502, ago=500),))
    state = next_state(followed=[*made, old])
    assert {a.guid for a in state.followed} == {made[0].guid, made[1].guid, "old"} and len(state.followed) == 5


def test_a_horizon_that_left_the_window_is_forgotten_and_one_inside_it_stays():
    inside, outside = (5, NOW - 100 * MINUTE), (6, NOW - 181 * MINUTE)
    assert next_state(State(horizon=inside)).horizon == inside
    assert next_state(State(horizon=outside)).horizon is None


def test_the_cursor_moves_to_the_newest_delivery_read_and_not_back():
    h = History()
    older, newer = h.attempt(h.guid(), 200, ago=20), h.attempt(h.guid(), 200, ago=10)
    assert next_state(read=[newer, older]).cursor == (newer.id, newer.at)
    assert next_state(State(cursor=(newer.id, newer.at)), read=[older]).cursor == (newer.id, newer.at)
    assert next_state(State(cursor=(newer.id, newer.at))).cursor == (newer.id, newer.at)


def test_an_entry_names_the_answer_of_its_newest_attempt_a_refusal_too():
    h = History()
    g = h.guid()
    event = Event(g, (h.attempt(g, 502, ago=40), h.attempt(g, 0, ago=25, redelivery=True), h.attempt(g, 422, ago=10, redelivery=True)))
    assert "(3 deliveries, the last answered 422)" in planner._entry(event, "all attempts failed", "u")["title"]
    timed_out = Event(g, event.attempts[:2])
    assert "the last without an answer in time" in planner._entry(timed_out, "x", "u")["title"]
