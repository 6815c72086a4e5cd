"""The sweep's pure planner (pager.sweep.plan): lists, state, settings and `now` in, a plan out; no I/O."""

from __future__ import annotations

import itertools
from dataclasses import replace

import pytest

from pager.settings import Settings
from pager.sweep import plan as planner
from pager.sweep.plan import ALARM_CALLS, Attempt, Entry, Limits, ListRead, State

NOW = 1_800_000_000.0
MINUTE = 60.0


def make_settings(**overrides) -> Settings:
    base = dict(
        table="pager-test",
        github_app_id="12345",
        github_app_slug="pager-test",
        github_private_key="unused",
        github_webhook_secret="unused",
        telegram_bot_token="unused",
        telegram_webhook_secret="unused",
        telegram_chat_id="-1001",
        control_repository="maintainer/pager",
    )
    base.update(overrides)
    return Settings(**base)


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


def plan(*, failures=(), outcomes=(), state=State(), settings=None, calls_used=None, failures_cut=False,
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
    assert "3 attempts failed (last: 504)" in entry["title"] and "workflow_run.completed" in entry["title"]


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
    assert entry["title"].startswith("ping of no repository: 3 attempts failed (last: no answer)")


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


# -- supersession -------------------------------------------------------------------------------------


def test_a_newer_passed_event_of_the_same_kind_and_repository_supersedes_a_failed_one():
    h = History()
    stale, fresh = h.guid(), h.guid()
    failed = h.attempt(stale, 502, ago=30)
    passed = h.attempt(fresh, 200, ago=20)
    result = plan(failures=[failed], outcomes=[failed, passed])
    assert asked(result) == []
    assert result.counts["superseded"] == 1


def test_a_newer_event_that_passed_only_on_its_redelivery_still_supersedes():
    h = History()
    stale, fresh = h.guid(), h.guid()
    failed = h.attempt(stale, 0, ago=40, event="issues", action="opened")
    fresh_attempts = [h.attempt(fresh, 500, ago=30, event="issues", action="edited"),
                      h.attempt(fresh, 200, ago=15, redelivery=True, event="issues", action="edited")]
    result = plan(failures=fresh_attempts, outcomes=[failed, *fresh_attempts])
    assert asked(result) == []


def test_a_pass_of_another_repository_or_kind_supersedes_nothing():
    h = History()
    failed_g = h.guid()
    failed = h.attempt(failed_g, 502, ago=30, repo=7)
    other_repo = h.attempt(h.guid(), 200, ago=20, repo=8)
    other_kind = h.attempt(h.guid(), 200, ago=20, repo=7, event="check_suite")
    result = plan(failures=[failed], outcomes=[failed, other_repo, other_kind])
    assert asked(result) == [failed_g]


def test_a_comment_overtakes_nothing_and_always_comes_again():
    h = History()
    g = h.guid()
    comment = h.attempt(g, 500, ago=30, event="issue_comment", action="created")
    newer = h.attempt(h.guid(), 200, ago=20, event="issue_comment", action="created")
    result = plan(failures=[comment], outcomes=[comment, newer])
    assert asked(result) == [g]


def test_an_older_event_passing_late_does_not_supersede_a_newer_failure():
    h = History()
    older, newer = h.guid(), h.guid()
    older_first = h.attempt(older, 500, ago=60)
    newer_first = h.attempt(newer, 500, ago=50)
    older_pass = h.attempt(older, 200, ago=10, redelivery=True)
    result = plan(failures=[older_first, newer_first], outcomes=[older_first, newer_first, older_pass])
    assert asked(result) == [newer]


def test_a_remembered_newest_pass_still_supersedes_after_its_page_was_read():
    h = History()
    fresh = h.attempt(h.guid(), 200, ago=50)
    first = plan(outcomes=[fresh])
    stale_g = h.guid()
    # A failure of an older event that only now shows (its first delivery is on the failure list).
    stale = Attempt(fresh.id - 1, stale_g, fresh.at - 1, False, 502, "workflow_run", "completed", 7)
    later = plan(failures=[stale], outcomes=[], state=first.state)
    assert asked(later) == []
    assert later.counts["superseded"] == 1


# -- order, caps, budget --------------------------------------------------------------------------------


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
    pending = {"gone": Entry("t", NOW - 600, 1, "issues", 7)}
    state = State(cursor=cursor, entries=pending, shown=frozenset({"shown-before"}))
    result = plan(failures=failed, state=state, no_room=True)
    assert result.no_room and result.redeliver == () and not result.alarm_change
    assert result.state.cursor == cursor and result.state.entries == pending
    assert result.state.shown == state.shown


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


def shown(result) -> State:
    return result.applied()


def test_an_entry_closes_when_a_later_attempt_passes_even_after_the_window():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    opened = shown(plan(failures=attempts, outcomes=attempts))
    assert opened.shown == {g}
    manual = Attempt(h.attempt(g, 200, ago=0).id, g, NOW + 300 * MINUTE, True, 200, "workflow_run", "completed", 7)
    later = plan(outcomes=[manual], state=opened, now=NOW + 301 * MINUTE)
    assert later.closed == (f"delivery:{g}",) and later.state.entries == {}


def test_an_entry_closes_when_a_newer_event_of_its_kind_and_repository_passed():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    opened = shown(plan(failures=attempts, outcomes=attempts))
    newer = h.attempt(h.guid(), 200, ago=5)
    later = plan(outcomes=[newer], state=opened)
    assert later.closed == (f"delivery:{g}",)


def test_an_entry_stays_open_past_the_window_until_github_stops_listing_the_event():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    opened = shown(plan(failures=attempts, outcomes=attempts))
    after_window = plan(state=opened, now=NOW + 240 * MINUTE)
    assert after_window.closed == () and g in after_window.state.entries
    after_retention = plan(state=opened, now=NOW + 3 * 24 * 60 * MINUTE)
    assert after_retention.closed == (f"delivery:{g}",)


def test_an_alarm_change_that_did_not_happen_is_offered_again_by_the_next_plan():
    h = History()
    g = h.guid()
    attempts = exhausted(h, g)
    failed_change = plan(failures=attempts, outcomes=attempts).state  # Telegram failed: nothing shown
    again = plan(failures=attempts, state=failed_change)
    assert list(again.opened) == [f"delivery:{g}"]
    done = again.applied()
    assert plan(failures=attempts, state=done).opened == {}


def test_entries_beyond_their_cap_wait_and_are_counted():
    h = History()
    attempts = [a for _ in range(3) for a in exhausted(h, h.guid(), event="issue_comment")]
    result = plan(failures=attempts, limits=Limits(entries=2))
    assert len(result.opened) == 2 and result.counts["entries_full"] == 1


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


def test_a_trimmed_memory_stops_counting_the_events_it_may_have_cut():
    h = History()
    olds = [h.attempt(h.guid(), 0, ago=100 - i) for i in range(5)]
    news = [h.attempt(h.guid(), 0, ago=50 - i) for i in range(3)]
    run1 = plan(outcomes=[*olds, *news], limits=Limits(remembered=3), settings=make_settings(sweep_max_redeliveries=0))
    assert run1.state.horizon == (olds[-1].id, olds[-1].at)
    assert any(g.list == "memory" for g in run1.gaps)
    run2 = plan(state=run1.applied(), limits=Limits(remembered=3))
    assert asked(run2) == [a.guid for a in news]


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
    result = plan(failures=attempts, outcomes=[*attempts, h.attempt(h.guid(), 0, ago=3, repo=None, action=None)])
    state = result.applied()
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
    passes = {f"{'e' * 40}/{10**12 + i}": (10**12 + i, NOW - 60) for i in range(limits.passes * 2)}
    entries = {f"{i:036d}": Entry("t" * 220, NOW, 10**12, "e" * 40, 10**12) for i in range(limits.entries)}
    state = State(cursor=(10**13, NOW), remembered=remembered, passes=passes, entries=entries,
                  shown=frozenset(entries), ran_at=NOW)
    result = plan(state=state, settings=make_settings(sweep_max_redeliveries=0))
    assert len(result.state.remembered) == limits.remembered and len(result.state.passes) == limits.passes
    assert result.applied().encoded_size() < 300_000




def test_a_newer_event_the_pager_only_ignores_does_not_overtake_a_failed_one():
    from pager.signals import acts_on

    h = History()
    failed, progress = h.guid(), h.guid()
    attempts = [h.attempt(failed, 502, ago=20, action="completed"),
                h.attempt(progress, 200, ago=10, action="in_progress")]
    result = plan(failures=attempts, outcomes=attempts, acts_on=acts_on)
    assert asked(result) == [failed] and result.counts["superseded"] == 0


def test_when_remembered_passes_are_dropped_the_events_they_could_overtake_are_no_longer_counted():
    from dataclasses import replace

    h = History()
    old_fail, old_pass = h.guid(), h.guid()
    other = [h.guid() for _ in range(2)]
    attempts = [h.attempt(old_fail, 502, ago=60, repo=1), h.attempt(old_pass, 200, ago=55, repo=1),
                h.attempt(other[0], 200, ago=50, repo=2), h.attempt(other[1], 200, ago=45, repo=3)]
    first = plan(failures=attempts, outcomes=attempts, limits=replace(planner.LIMITS, passes=2))
    assert asked(first) == [] and first.counts["superseded"] == 1
    assert _kind_key_of(1) not in first.state.passes and first.state.horizon is not None
    # The next run no longer sees the pass of repository 1, and must not ask for the failure it overtook.
    second = plan(failures=[attempts[0]], outcomes=[], state=first.state, now=NOW + 15 * MINUTE,
                  limits=replace(planner.LIMITS, passes=2))
    assert asked(second) == []


def _kind_key_of(repo: int) -> str:
    return f"workflow_run/{repo}"
