"""Holds and recovery (pager.sweep.recovery, pager.waiting), through the sweep function's lambda_handler with
its two schedules: the every-minute check and the 15-minute run, pager's real handlers answering GitHub's
deliveries in the fake world.
"""

from __future__ import annotations

import pytest
from support import paced

from pager.errors import DeadlineExceeded, GitHubUnavailable, StoreUnavailable, TelegramUnavailable, Uncertain
from pager.sweep import recovery
from pager.sweep.deliveries import PAGES_PER_MINUTE, REDELIVERY_SPACING_SECONDS, undone_of
from pager.sweep.run import check, run_sweep
from pager.values import parse_iso
from pager.waiting import CHECK_EVENT, SWEEP_KEY, Waiting, merged, note, noted, service_of
from pager_world.cases import issue_comment_by
from pager_world.world import CONTROL


def comment(n: int) -> dict:
    return issue_comment_by("alice", comment_id=9000 + n, number=200 + n)


def shown(world) -> str:
    return " ".join(m.text for m in world.telegram.chat())


def sweep_writes(world, item: str | None = None) -> int:
    return sum(1 for service, name in world.world.faults.log if service == "store" and name.startswith(f"save {SWEEP_KEY} ")
               and (item is None or name == f"save {SWEEP_KEY} [{item}]"))


def outage(world):
    return world.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)


def test_with_nothing_waiting_or_due_the_check_is_two_reads_and_no_call(sweeps):
    loads, calls = sweeps.store.loads, sweeps.services.calls
    assert sweeps.check()["outcome"] == "nothing waits"
    # what comes due (the attention index) and the sweep's items (one query)
    assert sweeps.store.loads - loads == 2 and sweeps.services.calls == calls


def test_a_telegram_outage_spends_no_attempt_and_the_check_sweeps_within_a_minute_of_its_end(sweeps):
    down = outage(sweeps)
    guids = [f"comment-{n}" for n in range(3)]
    for n, guid in enumerate(guids):
        assert sweeps.world.deliver("issue_comment", comment(n), guid=guid)[0] == 500
        sweeps.advance(1)
    assert sweep_writes(sweeps, "waiting") == 1  # noted once per outage, not per delivery

    for minute in range(45):  # the outage lasts: a check every minute, a scheduled run every 15
        summary = sweeps.sweep() if minute % 15 == 14 else sweeps.check()
        if minute % 15 == 14:
            assert summary["recovery"] == "waiting: telegram" and summary["redeliveries"] == 0
            assert summary["decisions"]["held"] == 3
        else:
            assert summary["outcome"] == "waiting: telegram still failing"
        sweeps.advance(1)
    assert all(len(sweeps.attempts(g)) == 1 for g in guids)  # no attempt spent while it would fail again

    sweeps.world.faults.rules.remove(down)  # Telegram is back
    summary = sweeps.check()
    assert summary["redeliveries"] == 3 and summary["recovery"] == "recovered"
    assert [[a["status_code"] for a in sweeps.attempts(g)] for g in guids] == [[500, 200]] * 3
    assert all(f"issuecomment-{9000 + n}" in shown(sweeps) for n in range(3))
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "nothing waits"


def test_more_failed_events_than_a_minute_takes_come_back_a_minute_at_a_time_one_lease_a_minute(make_sweeps):
    sweeps = make_sweeps(through_handler=True, sweep_max_redeliveries=10)
    sweeps.answer = None
    down = outage(sweeps)
    for n in range(25):
        sweeps.world.deliver("issue_comment", comment(n), guid=f"comment-{n}")
    sweeps.advance(3)
    sweeps.world.faults.rules.remove(down)
    writes = sweep_writes(sweeps)
    runs = sweeps.minutes(7)
    pace = paced(25, min(10, PAGES_PER_MINUTE))  # comments page: Telegram's pace, within the minute's ten
    assert [r.get("redeliveries") for r in runs] == pace + [None] * (7 - len(pace))
    # the release's commit, the note cleared, its run's lease taken and given back; then one lease a minute
    # that asks (the checks'), never more than one write per ten events
    assert runs[0]["recovery"] == "recovered"
    assert sweep_writes(sweeps) - writes == 4 + (len(pace) - 1) == 4 + sweep_writes(sweeps, "lease") - 2
    assert all(f"issuecomment-{9000 + n}" in shown(sweeps) for n in range(25))


def test_an_outage_of_three_hours_alarms_nothing_and_every_event_is_shown_within_minutes_of_its_end(sweeps):
    down = outage(sweeps)
    for n in range(12):  # one every quarter hour, for three hours
        sweeps.world.deliver("issue_comment", comment(n), guid=f"comment-{n}")
        sweeps.minutes(14)
        sweeps.sweep()
        sweeps.advance(1)
    sweeps.world.faults.rules.remove(down)
    ended = sweeps.now
    while sweeps.check()["outcome"] != "nothing waits":
        sweeps.advance(1)
    assert sweeps.now - ended <= 4 * 60
    assert all(f"issuecomment-{9000 + n}" in shown(sweeps) for n in range(12))
    assert sweeps.entries() == {} and all(CONTROL not in m.text for m in sweeps.telegram.chat())


def test_a_github_outage_is_probed_on_the_repositories_api(sweeps):
    sweeps.github.fail(r"^(GET|POST) /(repos|app/installations)/", 502, count=10**9)
    status, _ = sweeps.world.deliver("issue_comment", comment(1), guid="drafted")
    assert status == 500  # the draft's dispatch failed
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "waiting: github still failing"
    sweeps.github.heal()
    sweeps.advance(1)
    assert sweeps.check()["redeliveries"] == 1
    assert [a["status_code"] for a in sweeps.attempts("drafted")] == [500, 200]


def test_a_run_that_could_not_complete_has_the_check_wait_five_minutes(sweeps):
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1))
    sweeps.world.faults.rules.remove(down)
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 503)
    sweeps.advance(1)
    failed = sweeps.check()
    assert failed["outcome"].startswith("aborted") and failed["recovery"] == "waiting: telegram"
    for _ in range(3):
        sweeps.advance(1)
        assert sweeps.check()["outcome"] == "waiting: retry later"
    sweeps.advance(2)
    assert sweeps.check()["redeliveries"] == 1


def test_a_service_that_answers_the_probe_but_still_fails_the_call_gets_its_attempts_spaced_not_spent(sweeps):
    # A chat's flood limit: sendMessage answers 429 while getMe (the probe) answers.
    flood = sweeps.world.faults.fail("telegram", r"^sendMessage$", kind="telegram-429", count=10**9)
    assert sweeps.world.deliver("issue_comment", comment(1), guid="c1")[0] == 500
    sweeps.minutes(10)  # the checks run the sweep each minute: one attempt, then a rest
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 500]
    sweeps.world.faults.rules.remove(flood)
    sweeps.minutes(10)
    attempts = sweeps.attempts("c1")
    assert [a["status_code"] for a in attempts] == [500, 500, 200] and sweeps.entries() == {}
    assert parse_iso(attempts[2]["delivered_at"]) - parse_iso(attempts[1]["delivered_at"]) >= REDELIVERY_SPACING_SECONDS


def test_an_outage_holds_the_events_for_days_asking_nothing_while_the_probe_fails_and_says_so_after_half_an_hour(sweeps):
    github_down = sweeps.github.fail(r"^(GET|POST) /(repos|app/installations)/", 502, count=10**9)
    sweeps.world.deliver("issue_comment", comment(1), guid="long")
    for _ in range(2 * 24 * 4):  # two days of scheduled runs
        sweeps.advance(15)
        assert sweeps.sweep()["recovery"] == "waiting: github"
    assert len(sweeps.attempts("long")) == 1  # no attempt spent while GitHub was down
    assert "GitHub has failed pager's calls since" in sweeps.alarm_text()
    sweeps.world.faults.rules.remove(github_down)
    sweeps.advance(1)
    sweeps.check()
    assert [a["status_code"] for a in sweeps.attempts("long")] == [500, 200]
    assert sweeps.alarm_text().startswith("✅ pager is well again")


@pytest.mark.parametrize("schedule", ["check", "sweep"])
def test_a_table_throttled_before_a_run_begins_is_logged_and_answered_not_raised(make_sweeps, schedule, log_lines):
    sweeps = make_sweeps(through_handler=True)
    sweeps.world.faults.fail("store", r"^query sweep$", kind="store")
    summary = getattr(sweeps, schedule)()
    assert summary["outcome"].startswith("aborted")
    [line] = [line for line in log_lines() if line["message"] == "sweep run"]
    assert line["level"] == "ERROR" and "ThrottlingException" in line["error"]


def test_a_redelivery_github_failed_to_take_is_asked_for_again_at_the_next_check(sweeps):
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.faults.rules.remove(down)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502)
    sweeps.advance(1)
    first = sweeps.check()
    assert first["redeliveries_failed"] == 1 and first["recovery"] == "waiting: redelivery"
    sweeps.advance(1)
    # no passed delivery to probe with: the event itself is, and the run it releases awaits it, never asks twice
    again = sweeps.check()
    assert again["decisions"]["awaiting"] == 1 and again["redeliveries"] == 0
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 200]


def test_githubs_redeliveries_failing_while_its_api_answers_are_held_probed_by_one_and_said_after_half_an_hour(sweeps):
    # GitHub's webhooks degraded: the redelivery endpoint answers 502, the repositories' API answers.
    probe = sweeps.deliver("workflow_run", "completed", 1)  # a passed delivery: what the hold probes with
    sweeps.sweep()
    down = outage(sweeps)
    for n in range(3):
        sweeps.world.deliver("issue_comment", comment(n), guid=f"c{n}")
    sweeps.world.faults.rules.remove(down)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502, count=10**9)
    writes, leases, outcomes = sweep_writes(sweeps), sweep_writes(sweeps, "lease"), set()
    for minute in range(60):  # a check every minute, a scheduled run every 15
        start = sweeps.now
        summary = sweeps.sweep() if minute % 15 == 14 else sweeps.check()
        outcomes.add(summary["outcome"] if minute % 15 != 14 else summary["recovery"])
        sweeps.now = start + 60
    assert [len(sweeps.attempts(f"c{n}")) for n in range(3)] == [1, 1, 1]
    assert outcomes - {"redeliveries asked", "done"} == {"waiting: redelivery still failing", "waiting: redelivery"}
    assert "GitHub has failed to deliver events again since" in sweeps.alarm_text()
    # beyond the four runs' own commits: the release's commit, the note, the hold said (the health, the alarm's
    # record in the run's state); and the lease, taken and given back by each run, taken by the check that asked
    # for the minute's redeliveries and by each that asks GitHub for its probe (the first ten minutes of the
    # hold, then every fifth): not one a minute past the first ten
    leases = sweep_writes(sweeps, "lease") - leases
    assert sweep_writes(sweeps) - writes - leases - 4 == 4 and leases <= 2 * 4 + 1 + 10 + 10
    sweeps.github.heal()
    sweeps.minutes(3)
    assert [[a["status_code"] for a in sweeps.attempts(f"c{n}")] for n in range(3)] == [[500, 200]] * 3
    assert sweeps.alarm_text().startswith("✅ pager is well again")
    assert len(sweeps.attempts(probe)) == 2  # the probe GitHub took, the one that ended the hold


@pytest.mark.parametrize("probe", ["none known", "refused"])
def test_with_no_passed_delivery_to_probe_with_githubs_redeliveries_are_held_not_tried_each_minute(sweeps, probe):
    passed = sweeps.deliver("workflow_run", "completed", 1) if probe == "refused" else None
    sweeps.sweep()
    down = outage(sweeps)
    for n in range(3):
        sweeps.world.deliver("issue_comment", comment(n), guid=f"c{n}")
    sweeps.world.faults.rules.remove(down)
    if passed:  # GitHub refuses to deliver the probe again (gone, say): a refusal says nothing of the endpoint
        probe_id = sweeps.attempts(passed)[-1]["id"]
        sweeps.github.fail(rf"^POST /app/hook/deliveries/{probe_id}/attempts$", 404, count=10**9)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502, count=10**9)
    writes, leases = sweep_writes(sweeps), sweep_writes(sweeps, "lease")
    sweeps.quarter_hours(60)
    assert [len(sweeps.attempts(f"c{n}")) for n in range(3)] == [1, 1, 1]  # the oldest event probed, no attempt spent
    leases = sweep_writes(sweeps, "lease") - leases  # each run's, and each probe minute's
    assert sweep_writes(sweeps) - writes - leases <= 4 + 4  # the four runs' own, and a constant: not one a minute
    assert "GitHub has failed to deliver events again since" in sweeps.alarm_text()
    sweeps.github.heal()
    sweeps.quarter_hours(16)
    assert [[a["status_code"] for a in sweeps.attempts(f"c{n}")] for n in range(3)] == [[500, 200]] * 3


def test_a_redelivery_hold_is_not_probed_by_asking_while_telegram_is_still_down(sweeps):
    probe = sweeps.deliver("workflow_run", "completed", 1)
    sweeps.sweep()
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")  # noted: telegram
    note(sweeps.services, "redelivery")
    sweeps.quarter_hours(30)
    assert len(sweeps.attempts(probe)) == 1  # getMe first: nothing asked of GitHub while Telegram fails
    sweeps.world.faults.rules.remove(down)
    sweeps.quarter_hours(3)
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 200]


def test_with_pagers_endpoint_and_githubs_redeliveries_both_held_one_ask_a_minute_probes_githubs(make_sweeps):
    sweeps = make_sweeps()
    sweeps.down = 502
    pages = [sweeps.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    sweeps.advance(15)
    assert sweeps.sweep()["recovery"] == "waiting: pager"
    note(sweeps.services, "redelivery")
    for _ in range(12):
        start = len(sweeps.github.requests)
        sweeps.check()
        asks = [r.path for r in sweeps.github.requests[start:] if r.path.endswith("/attempts")]
        assert len(asks) <= 1, asks  # GitHub's redeliveries probed by one ask; pager's endpoint by its ping alone
        sweeps.advance(1)
    sweeps.down = None
    sweeps.quarter_hours(20)
    assert all(sweeps.attempts(g)[-1]["status_code"] == 200 for g in pages) and sweeps.entries() == {}


def test_a_hold_of_pagers_endpoint_ends_when_its_ping_passes_though_the_oldest_event_fails_on_its_own(make_sweeps):
    sweeps = make_sweeps()
    sweeps.down = 502
    pages = [sweeps.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    sweeps.advance(15)
    assert sweeps.sweep()["recovery"] == "waiting: pager"  # its ping failed (no delivery ever passed)
    sweeps.down = None
    sweeps.answer = lambda guid, redelivery: 502 if guid == pages[0] else 200  # fixed, but for one event
    sweeps.quarter_hours(60)
    assert [sweeps.attempts(g)[-1]["status_code"] for g in pages[1:]] == [200, 200]
    assert sweeps.store.load(SWEEP_KEY, "waiting").data.get("services") in (None, [])


def test_both_holds_end_though_the_oldest_held_event_fails_on_its_own(make_sweeps):
    sweeps = make_sweeps()
    sweeps.down = 502
    pages = [sweeps.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    sweeps.advance(15)
    assert sweeps.sweep()["recovery"] == "waiting: pager"
    note(sweeps.services, "redelivery")
    sweeps.down = None
    sweeps.answer = lambda guid, redelivery: 502 if guid == pages[0] else 200  # fixed, but for one event
    sweeps.quarter_hours(60)
    assert [sweeps.attempts(g)[-1]["status_code"] for g in pages[1:]] == [200, 200]
    assert sweeps.store.load(SWEEP_KEY, "waiting").data.get("services") in (None, [])


def test_a_rate_limits_wait_is_taken_for_an_hour_at_most(sweeps):
    assert noted(None, "github", 0.0, retry_after=4 * 86400) == Waiting(("github",), 0.0, 3600.0)
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.faults.rules.remove(down)
    # a wait of four days (a header gone wrong): held past it, GitHub would forget the event first
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 429, count=1, headers={"retry-after": str(4 * 86400)})
    sweeps.quarter_hours(75)
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 200]


def test_a_rate_limit_a_handler_noted_holds_the_scheduled_runs_until_github_said(sweeps):
    # The installation's rate limit: the handlers' calls refused until its reset, the app's own (JWT) answer.
    limited = sweeps.github.fail(r"^POST /app/installations/\d+/access_tokens$", 429, count=10**9,
                                 body={"message": "API rate limit exceeded"}, headers={"retry-after": "3000"})
    assert sweeps.world.deliver("issue_comment", comment(1), guid="c1")[0] == 500
    for _ in range(3):  # the scheduled runs within the 50 minutes: none spends an attempt
        sweeps.advance(15)
        assert sweeps.sweep()["redeliveries"] == 0
    assert len(sweeps.attempts("c1")) == 1 and sweeps.entries() == {}
    sweeps.world.faults.rules.remove(limited)
    sweeps.advance(6)
    sweeps.minutes(2)
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 200]


def test_an_entry_says_what_its_delivery_left_undone_as_the_webhooks_last_answer_tells(sweeps):
    # GitHub refuses nothing and answers reads, but fails every dispatch: the comment is shown, its draft never asked.
    sweeps.github.fail(r"^POST /repos/[^/]+/[^/]+/dispatches$", 502, count=10**9)
    assert sweeps.world.deliver("issue_comment", comment(1), guid="c1")[0] == 500
    for minute in range(120):
        start = sweeps.now
        sweeps.sweep() if minute % 15 == 14 else sweeps.check()
        sweeps.now = start + 60
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 500, 500]
    [entry] = [v for k, v in sweeps.store.dump().items() if k.endswith("[entry:delivery:c1]")]
    assert entry["title"] == "pager missed the draft of Codertocat/Hello-World#201 — press ↻ Deliver again"
    assert entry["detail"].startswith("alice's comment on Codertocat/Hello-World#201 is shown, its draft was not asked "
                                      "for: all attempts failed (3 deliveries, the last answered 500)"), entry["detail"]
    assert "💬 alice commented" in shown(sweeps)


@pytest.mark.parametrize("answer, undone", [
    ('{"error": "github dispatch: GitHub answered 502"}', "is shown, its draft was not asked for"),
    ('{"error": "telegram sendMessage: Telegram answered 502: Bad Gateway"}', ""),  # an edit, a reply: shown before
    ('{"error": "telegram editMessageText: Telegram answered 502: Bad Gateway"}', ""),
    ('{"error": "internal error: KeyError"}', ""), ('{"outcome": "ignored"}', ""), ("[1]", ""), ("not json", ""), (None, ""),
])
def test_what_a_delivery_left_undone_is_read_from_the_step_its_answer_names(answer, undone):
    assert undone_of(answer) == undone


def test_an_outage_costs_five_writes_whatever_its_size(sweeps):
    down = outage(sweeps)
    for n in range(3):
        sweeps.world.deliver("issue_comment", comment(n), guid=f"c{n}")
    sweeps.minutes(5)
    sweeps.world.faults.rules.remove(down)
    assert sweeps.minutes(1)[0]["recovery"] == "recovered"
    # the note, the release's run (its lease taken, its commit, its lease given back), the note cleared; none while
    # the probe fails, none after
    assert sweep_writes(sweeps) == 5 and sweeps.store.load(SWEEP_KEY, "waiting").data == {}
    assert sweeps.minutes(1)[0]["outcome"] == "nothing waits"


def test_a_note_made_while_a_run_works_is_kept_beside_what_the_run_saves(sweeps, monkeypatch):
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.faults.rules.remove(down)
    github = sweeps.services.github
    take = github.redeliver

    def redeliver(delivery_id):  # while the released run asks, GitHub fails a handler: the webhook notes it
        monkeypatch.setattr(github, "redeliver", take)
        note(sweeps.services, "github")
        return take(delivery_id)

    monkeypatch.setattr(github, "redeliver", redeliver)
    sweeps.advance(1)
    assert sweeps.check()["redeliveries"] == 1
    assert sweeps.store.load(SWEEP_KEY, "waiting").data["services"] == ["github"]


def test_a_redelivery_github_refuses_is_named_not_asked_for_again(sweeps):
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.faults.rules.remove(down)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 422, count=10**9)
    sweeps.advance(1)
    first = sweeps.check()
    assert first["redeliveries_refused"] == 1 and first["recovery"] == "recovered"
    sweeps.advance(15)
    assert sweeps.sweep()["entries_opened"] == 1
    assert "GitHub refused to deliver it again (422)" in sweeps.alarm_text()


def test_a_state_that_cannot_be_read_keeps_what_waits_and_the_run_holds(sweeps):
    sweeps.sweep()
    record = sweeps.store.load(SWEEP_KEY, "deliveries")
    sweeps.store.save(record, {**record.data, "followed": "not packed"})
    outage(sweeps)
    assert sweeps.world.deliver("issue_comment", comment(1), guid="c1")[0] == 500
    sweeps.advance(15)
    summary = sweeps.sweep()
    assert summary["recovery"] == "waiting: telegram" and summary["redeliveries"] == 0


def test_a_run_cut_short_by_its_deadline_has_the_check_wait_before_the_next(sweeps):
    down = outage(sweeps)
    sweeps.world.deliver("issue_comment", comment(1))
    sweeps.world.faults.rules.remove(down)
    sweeps.advance(1)
    cut = check(sweeps.services, now=sweeps.now, run_id="slow", seconds=0.0)
    assert cut["outcome"].startswith("aborted")
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "waiting: retry later"
    sweeps.advance(5)
    assert sweeps.check()["redeliveries"] == 1


# -- pager's own endpoint -----------------------------------------------------------------------------


def test_pagers_own_outage_is_observed_by_its_ping_and_no_event_spends_an_attempt_on_it(make_sweeps):
    sweeps = make_sweeps()
    passed = sweeps.deliver("workflow_run", "completed", 1)
    sweeps.down = 502
    pages = [sweeps.deliver("issue_comment", "created", 10 + i) for i in range(5)]
    sweeps.advance(15)
    assert sweeps.sweep()["recovery"] == "waiting: pager"  # the run's ping failed
    sweeps.minutes(30)  # each check pings it again, asking GitHub for nothing
    assert all(len(sweeps.attempts(g)) == 1 for g in pages) and len(sweeps.attempts(passed)) == 1
    sweeps.down = None
    sweeps.minutes(2)  # the ping passes, the check runs the sweep, the pages come back
    assert all([a["status_code"] for a in sweeps.attempts(g)] == [502, 200] for g in pages) and sweeps.entries() == {}


def test_a_hold_of_pagers_endpoint_whose_release_was_not_saved_ends_at_the_next_check(make_sweeps):
    world = make_sweeps()
    world.down = 502
    world.deliver("workflow_run", "completed", 1)
    failing = world.deliver("issue_comment", "created", 2)
    world.deliver("issue_comment", "created", 3)
    assert world.sweep()["recovery"] == "waiting: pager"
    world.down = None
    world.answer = lambda guid, redelivery: 502 if guid == failing else 200  # pager answers; one event fails alone
    world.minutes(1)  # the ping passes
    world.world.faults.fail("store", r"^save sweep \[waiting\]$", status=0, count=3)  # each of its tries
    world.minutes(1)  # the release's run: its hold's end not saved, and the probe's answer read already
    world.minutes(1)  # the next check pings again, and the run it starts ends the hold
    assert not world.store.load(SWEEP_KEY, "waiting").data.get("services")
    assert len(world.attempts(failing)) == 2  # its first delivery, and the release's ask: no probe spends one
    for _ in range(3):
        world.advance(15)
        world.sweep()
    assert failing in world.entries()  # and named, once its attempts are spent


def test_what_a_run_read_of_pagers_health_survives_a_table_that_throttles_its_save_twice(make_sweeps):
    world = make_sweeps()
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.answer = lambda guid, redelivery: 404  # a delivery answered 404: pager:answered opens
    world.deliver("issue_comment", "created", 10)
    world.answer = lambda guid, redelivery: 200
    world.advance(15)
    world.world.faults.fail("store", r"^save sweep \[health\]$", status=0, count=2)
    world.sweep()
    world.deliver("workflow_run", "completed", 1)
    world.advance(15)
    world.sweep()
    assert world.store.dump()["alarm#control [entry:pager:answered]"]["state"] == "open"


def test_githubs_redeliveries_are_probed_with_the_newest_passed_delivery_else_each_held_event_in_turn():
    from pager.sweep.deliveries import Followed, State

    now = 1_800_000_000.0
    state = State(probe=(5, "older", now - 3600))
    assert recovery.passed_probe(state, now).delivery_id == 5
    row = Followed("f", 3, now - 900, "issues", "opened", 1, 1, 3, now - 900, 502, False)
    newer = Followed("g", 4, now - 800, "issues", "opened", 1, 1, 4, now - 800, 502, False)
    gone = State(probe=(5, "older", now - 3 * 86400), followed=(newer, row))
    assert recovery.passed_probe(gone, now) is None
    assert [recovery.held_in_turn(gone, now + 60 * m).guid for m in range(4)] == ["f", "g", "f", "g"]
    assert [m for m in range(0, 120) if recovery.probe_minute(m * 60)] == [*range(10), 10, 15, 20, 25, 30, 35, 40, 45,
                                                                          50, 55, 60, 75, 90, 105]


def test_pagers_own_endpoint_is_held_when_its_ping_fails_and_released_when_it_passes():
    held = recovery.hold(None, released=False, now=5.0, own=False)
    assert held == Waiting(("pager",), 5.0)
    assert recovery.hold(held, released=False, now=6.0, own=None) == held  # not pinged: nothing known
    assert recovery.hold(held, released=False, now=6.0, own=True) is None
    told = Waiting(("telegram",), 1.0)
    assert recovery.hold(told, released=False, now=5.0, own=False) == Waiting(("pager", "telegram"), 5.0)  # a new outage


# -- the pure parts ---------------------------------------------------------------------------------------


def test_a_failure_is_noted_once_per_service():
    first = noted(None, "telegram", 100.0)
    assert first == Waiting(("telegram",), 100.0)
    assert noted(first, "telegram", 200.0) is None  # no write
    assert noted(first, "github", 200.0) == Waiting(("github", "telegram"), 200.0)  # a new outage: held from now
    assert Waiting.from_data(first.to_data()) == first and Waiting.from_data({}) is None
    # a rate limit's wait moves the check's next sweep, written only when it changes the minute
    limited = noted(first, "telegram", 200.0, retry_after=300)
    assert limited == Waiting(("telegram",), 100.0, 500.0)
    assert noted(limited, "telegram", 210.0, retry_after=300) is None
    assert merged(first, Waiting(("github",), 50.0, 9.0)) == Waiting(("github", "telegram"), 50.0, 9.0)


@pytest.mark.parametrize(("error", "service"), [
    (TelegramUnavailable("x"), "telegram"), (GitHubUnavailable("x"), "github"), (StoreUnavailable("x"), "store"),
    (DeadlineExceeded("x"), "any"), (Uncertain("x"), "any")])
def test_each_transient_failure_names_its_service(error, service):
    assert service_of(error) == service


def test_the_every_minute_schedule_sends_what_the_function_takes_for_a_check():
    import json
    from pathlib import Path

    template = (Path(__file__).resolve().parents[1] / "template.yaml").read_text()
    assert f"Input: '{json.dumps(CHECK_EVENT)}'" in template and "Schedule: rate(1 minute)" in template


def test_what_the_run_that_ends_a_hold_asks_for_is_awaited_not_asked_again_by_the_next_run(make_sweeps):
    world = make_sweeps()
    _, held = world.pager_held()
    world.down = None
    world.answer = lambda guid, redelivery: 200
    world.deliver("workflow_run", "completed", 2)  # pager answers again
    world.advance(14.5)
    # GitHub takes its asks (202) and carries them out after the next run, a minute on
    ended = run_sweep(world.services, now=world.now, run_id="ends-the-hold")
    assert ended["recovery"] == "recovered" and ended["redeliveries"] == 3
    world.advance(1)
    after = run_sweep(world.services, now=world.now, run_id="a-minute-on")
    world.github.deliver_pending()
    assert after["redeliveries"] == 0 and after["decisions"]["awaiting"] == 3
    assert all([a["status_code"] for a in world.attempts(g)] == [502, 200] for g in held)


def test_a_hold_of_pagers_endpoint_asks_github_for_nothing_and_ends_with_its_ping_in_a_long_pass(make_sweeps):
    world = make_sweeps(sweep_all_pages=2)
    passed, pages = world.pager_held()
    world.minutes(5)  # five checks: five pings, each answered 502, and nothing asked of GitHub
    assert len(world.attempts(passed)) == 1 and all(len(world.attempts(g)) == 1 for g in pages)
    world.down = None
    world.answer = lambda guid, redelivery: 200
    for i in range(500):  # pager answers again; a busy fleet: five pages since, read over several runs
        world.deliver("workflow_run", "completed", 100 + i % 7)
    world.advance(1)
    first = world.check()  # the ping passes: the check's run reads the first pages
    assert first["pass"] == "under way" and first["recovery"] == "waiting: any"
    world.minutes(10)
    world.advance(15)
    world.sweep()
    world.minutes(10)
    assert all(world.attempts(g)[-1]["status_code"] == 200 for g in pages)
    assert world.entries() == {}, world.alarm_text()


def alices_comment(world, n: int, *, status: int, prefix: str) -> str:
    """Someone outside comments (a page), delivered while pager's endpoint answers `status`: its guid."""
    comment = issue_comment_by("alice", comment_id=9100 + n, number=300 + n)
    assert world.world.deliver("issue_comment", comment, guid=f"{prefix}{n}")[0] == status
    return f"{prefix}{n}"


def test_a_deployment_broken_from_its_first_delivery_brings_every_page_back_as_itself_after_the_fix(make_sweeps):
    """No delivery ever passed, a page every 30 minutes, pager's endpoint down 3 hours: every page comes back as
    itself within 30 minutes of the fix, none is named, and no event is delivered more than three times."""
    world = make_sweeps(through_handler=True)
    world.answer = None
    world.down = 502  # broken from the first delivery
    pages = []
    for n in range(6):
        pages.append(alices_comment(world, n, status=502, prefix="page"))
        for _ in range(30):
            world.advance(1)
            world.sweep() if int(world.now // 60) % 15 == 0 else world.check()
    world.down = None  # the fix, 3 hours in
    fixed = world.now
    while world.now < fixed + 30 * 60:
        world.advance(1)
        world.sweep() if int(world.now // 60) % 15 == 0 else world.check()
    for guid in pages:
        codes = [a["status_code"] for a in world.attempts(guid)]
        assert codes[-1] == 200 and len(codes) <= 3, (guid, codes)
        passed_at = parse_iso(world.attempts(guid)[-1]["delivered_at"])
        assert passed_at <= fixed + 30 * 60
    assert world.entries() == {}, world.alarm_text()
    shown = [m.text for m in world.telegram.chat() if m.text.startswith("💬 alice commented")]
    assert len(shown) == len(pages)  # each page as itself, once


def test_a_hold_whose_end_the_table_throttled_once_asks_nothing_twice(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = None
    down = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    for n in range(3):
        comment = issue_comment_by("alice", comment_id=9000 + n, number=200 + n)
        assert sweeps.world.deliver("issue_comment", comment, guid=f"c{n}")[0] == 500
    sweeps.advance(2)
    assert sweeps.check()["outcome"] == "waiting: telegram still failing"
    sweeps.advance(1)
    sweeps.world.faults.rules.remove(down)
    carry_out, sweeps.github.deliver_pending = sweeps.github.deliver_pending, lambda: []  # GitHub takes minutes
    sweeps.world.faults.fail("store", r"^save sweep \[waiting\]$", status=0)  # the hold's end throttled once
    start = len(sweeps.github.redelivery_requests)
    for _ in range(3):
        sweeps.check()
        sweeps.advance(1)
    carry_out()
    asked = sweeps.github.redelivery_requests[start:]
    assert len(asked) == 3 and len(set(asked)) == 3  # each held event asked for once


def test_a_redirect_before_pagers_endpoint_is_its_outage_and_what_it_turned_away_comes_back_after_the_fix(make_sweeps):
    """A 3xx (a custom domain moved, http to https): GitHub does not follow it, so pager never ran. The ping's
    redirect holds pager's endpoint, no attempt is spent on it, and every page comes back once the URL is fixed."""
    world = make_sweeps(through_handler=True)
    world.answer = None  # the real handler answers what reaches it
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.down = 301
    pages = [alices_comment(world, n, status=301, prefix="moved") for n in range(3)]
    for _ in range(4):
        world.advance(15)
        summary = world.sweep()
    assert summary["recovery"] == "waiting: pager" and all(len(world.attempts(g)) == 1 for g in pages)
    world.down = None  # the app's webhook URL fixed
    world.minutes(3)
    for guid in pages:
        assert [a["status_code"] for a in world.attempts(guid)] == [301, 200], guid
    assert world.entries() == {}
    assert len([m for m in world.telegram.chat() if m.text.startswith("💬 alice commented")]) == len(pages)
