"""Recovery that follows the outage (pager.sweep.recovery), through the sweep function's lambda_handler
with its two schedules: the every-minute check and the 15-minute run, pager's real handlers answering
GitHub's deliveries in the fake world.
"""

from __future__ import annotations

import pytest

from pager.errors import DeadlineExceeded, GitHubUnavailable, StoreUnavailable, TelegramUnavailable, Uncertain
from pager.store import MemoryStore
from pager.sweep import plan, recovery
from pager.sweep.run import check
from pager.values import parse_iso
from pager.waiting import Waiting, note, noted, service_of
from pager_world.cases import issue_comment_by
from pager_world.world import CONTROL


def comment(n: int) -> dict:
    return issue_comment_by("alice", comment_id=9000 + n, number=200 + n)


def shown(world) -> str:
    return " ".join(m.text for m in world.telegram.chat())


def state_writes(world) -> int:
    return sum(1 for service, name in world.world.faults.log if service == "store" and name == f"save {plan.STATE_KEY}")


def test_with_nothing_waiting_or_due_the_check_is_two_reads_and_no_call(sweeps):
    loads, calls = sweeps.store.loads, sweeps.services.calls
    assert sweeps.check()["outcome"] == "nothing waits"
    # what comes due (the attention index) and what waits for a failed service (the sweep's state)
    assert sweeps.store.loads - loads == 2 and sweeps.services.calls == calls


def test_a_telegram_outage_spends_no_attempt_and_the_check_sweeps_within_a_minute_of_its_end(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    guids = [f"comment-{n}" for n in range(3)]
    for n, guid in enumerate(guids):
        assert sweeps.world.deliver("issue_comment", comment(n), guid=guid)[0] == 500
        sweeps.advance(1)
    assert state_writes(sweeps) == 1  # noted once per outage, not per delivery

    for minute in range(45):  # the outage lasts: a check every minute, a scheduled run every 15
        summary = sweeps.sweep() if minute % 15 == 14 else sweeps.check()
        if minute % 15 == 14:
            assert summary["recovery"] == "held: telegram still failing" and summary["redeliveries"] == 0
            assert summary["decisions"]["held"] == 3
        else:
            assert summary["outcome"] == "waiting: telegram still failing"
        sweeps.advance(1)
    assert all(len(sweeps.attempts(g)) == 1 for g in guids)  # no attempt spent while it would fail again

    sweeps.world.faults.rules.remove(outage)  # Telegram is back
    summary = sweeps.check()
    assert summary["redeliveries"] == 3 and summary["recovery"].startswith("recovered: waited")
    assert [[a["status_code"] for a in sweeps.attempts(g)] for g in guids] == [[500, 200]] * 3
    assert all(f"issuecomment-{9000 + n}" in shown(sweeps) for n in range(3))
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "nothing waits"


def test_more_failed_events_than_a_run_may_ask_for_come_back_over_checks_a_minute_apart(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    for n in range(25):
        sweeps.world.deliver("issue_comment", comment(n), guid=f"comment-{n}")
    sweeps.advance(3)
    sweeps.world.faults.rules.remove(outage)
    runs = []
    while True:
        summary = sweeps.check()
        runs.append(summary)
        sweeps.advance(1)
        if summary["outcome"] == "nothing waits" or len(runs) > 6:
            break
    assert [r.get("redeliveries") for r in runs] == [10, 10, 5, None]  # ten a run at most, a run a minute
    assert [r.get("recovery", "")[:8] for r in runs[:3]] == ["waiting:", "waiting:", "recovere"]
    assert all(r["calls_used"] <= r["call_budget"] for r in runs[:3])
    assert all(f"issuecomment-{9000 + n}" in shown(sweeps) for n in range(25))


def test_an_outage_of_three_hours_alarms_nothing_and_every_event_is_shown_within_minutes_of_its_end(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    for n in range(12):  # one every quarter hour, for three hours
        sweeps.world.deliver("issue_comment", comment(n), guid=f"comment-{n}")
        for minute in range(15):
            if minute == 14:
                sweeps.sweep()
            else:
                sweeps.check()
            sweeps.advance(1)
    sweeps.world.faults.rules.remove(outage)
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
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    sweeps.world.deliver("issue_comment", comment(1))
    sweeps.world.faults.rules.remove(outage)
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 503)
    sweeps.advance(1)
    failed = sweeps.check()
    assert failed["outcome"].startswith("aborted") and failed["recovery"] == "waiting: the run did not complete"
    for _ in range(3):
        sweeps.advance(1)
        assert sweeps.check()["outcome"] == "waiting: retry later"
    sweeps.advance(2)
    assert sweeps.check()["redeliveries"] == 1


def test_a_service_that_answers_the_probe_but_still_fails_the_call_gets_its_attempts_spaced_not_spent(sweeps):
    # A chat's flood limit: sendMessage answers 429 while getMe (the probe) answers.
    flood = sweeps.world.faults.fail("telegram", r"^sendMessage$", kind="telegram-429", count=10**9)
    assert sweeps.world.deliver("issue_comment", comment(1), guid="c1")[0] == 500
    for _ in range(10):  # the checks run the sweep every minute or so: one attempt, then a rest
        sweeps.advance(1)
        sweeps.check()
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 500]
    sweeps.world.faults.rules.remove(flood)
    while sweeps.check()["outcome"] != "nothing waits":
        sweeps.advance(1)
    attempts = sweeps.attempts("c1")
    assert [a["status_code"] for a in attempts] == [500, 500, 200] and sweeps.entries() == {}
    assert parse_iso(attempts[2]["delivered_at"]) - parse_iso(attempts[1]["delivered_at"]) >= plan.REDELIVERY_SPACING_SECONDS


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


@pytest.mark.parametrize(("error", "service"), [
    (TelegramUnavailable("x"), "telegram"), (GitHubUnavailable("x"), "github"), (StoreUnavailable("x"), "store"),
    (DeadlineExceeded("x"), "any"), (Uncertain("x"), "any")])
def test_each_transient_failure_names_its_service(error, service):
    assert service_of(error) == service


def test_the_every_minute_schedule_sends_what_the_function_takes_for_a_check():
    import json
    from pathlib import Path

    template = (Path(__file__).resolve().parents[1] / "template.yaml").read_text()
    assert f"Input: '{json.dumps(recovery.CHECK_EVENT)}'" in template and "Schedule: rate(1 minute)" in template


def test_an_outage_holds_the_events_for_days_asking_nothing_while_the_probe_fails(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    sweeps.world.deliver("issue_comment", comment(1), guid="long")
    for _ in range(2 * 24 * 4):  # two days of scheduled runs
        sweeps.advance(15)
        assert sweeps.sweep()["recovery"] == "held: telegram still failing"
    assert len(sweeps.attempts("long")) == 1  # no attempt spent while Telegram was down
    sweeps.world.faults.rules.remove(outage)
    sweeps.advance(1)
    sweeps.check()
    assert [a["status_code"] for a in sweeps.attempts("long")] == [500, 200]


@pytest.mark.parametrize("schedule", ["check", "sweep"])
def test_a_table_throttled_before_a_run_begins_is_logged_and_answered_not_raised(make_sweeps, schedule, log_lines):
    sweeps = make_sweeps(through_handler=True)
    sweeps.world.faults.fail("store", r"^load sweep#state$", kind="store")
    summary = getattr(sweeps, schedule)()
    assert summary["outcome"] == "aborted: StoreUnavailable"
    [line] = [line for line in log_lines() if line["message"] == "sweep run"]
    assert line["level"] == "ERROR" and "ThrottlingException" in line["error"]


def test_a_redelivery_github_failed_to_take_is_asked_for_again_at_the_next_check(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.faults.rules.remove(outage)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502)
    sweeps.advance(1)
    first = sweeps.check()
    assert first["redeliveries_failed"] == 1 and first["recovery"] == "waiting: 1 still to come back"
    sweeps.advance(1)
    assert sweeps.check()["redeliveries"] == 1
    assert [a["status_code"] for a in sweeps.attempts("c1")] == [500, 200]


# -- the note lives in the sweep's state item: one outage, two writes -------------------------------------


def test_an_outage_costs_two_writes_the_note_and_the_commit_of_the_run_that_clears_it(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    for n in range(3):
        sweeps.world.deliver("issue_comment", comment(n), guid=f"c{n}")
    for _ in range(5):
        sweeps.advance(1)
        sweeps.check()
    sweeps.world.faults.rules.remove(outage)
    sweeps.advance(1)
    assert sweeps.check()["recovery"].startswith("recovered")
    assert state_writes(sweeps) == 2  # no write while the probe fails, none after the run's commit
    assert "waiting" not in sweeps.store.load(plan.STATE_KEY).data
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "nothing waits"


class Racing(MemoryStore):
    """A store in which `between` runs once, right after the first load of the sweep's state."""

    def __init__(self, between):
        super().__init__()
        self.between = between

    def load(self, key, item=""):
        record = super().load(key, item)
        if key == plan.STATE_KEY and self.between:
            between, self.between = self.between, None
            between(self)
        return record


def test_a_note_racing_a_run_is_kept_and_the_run_steps_aside(sweeps):
    sweeps.sweep()  # a state to race on
    ran = sweeps.store.load(plan.STATE_KEY).data

    def a_delivery_fails(store):
        note(sweeps.services, "telegram")  # the services' store is `store`

    store = Racing(None)
    store.save(store.load(plan.STATE_KEY), ran)
    sweeps.services.store = sweeps.world.store = store
    store.between = a_delivery_fails
    sweeps.advance(15)
    summary = sweeps.sweep()
    assert summary["outcome"] == "skipped: what waits was noted meanwhile"
    assert summary["state"] == "not saved: a note of what waits came first"
    kept = sweeps.store.load(plan.STATE_KEY).data
    assert kept["waiting"]["services"] == ["telegram"] and {k: v for k, v in kept.items() if k != "waiting"} == ran


def test_a_run_committing_between_a_notes_read_and_write_does_not_lose_the_note(sweeps):
    sweeps.sweep()
    ran = sweeps.store.load(plan.STATE_KEY).data

    def a_run_commits(store):
        store.save(store.load(plan.STATE_KEY), {**ran, "ran_at": ran["ran_at"] + 60})

    store = Racing(None)
    store.save(store.load(plan.STATE_KEY), ran)
    sweeps.services.store = store
    store.between = a_run_commits
    note(sweeps.services, "github")
    kept = store.load(plan.STATE_KEY).data
    assert kept["waiting"]["services"] == ["github"] and kept["ran_at"] == ran["ran_at"] + 60


def test_a_note_made_while_a_run_asks_is_kept_and_what_github_failed_to_take_is_asked_for_at_the_next_check(sweeps, monkeypatch):
    # The check's run commits (clearing what waited), GitHub takes c1 and delivers it at once while the
    # run goes on; Telegram fails that delivery, so the webhook notes it; then GitHub fails to take c2.
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.deliver("issue_comment", comment(2), guid="c2")
    sweeps.world.faults.rules.remove(outage)
    github = sweeps.services.github
    take = github.redeliver

    def redeliver(delivery_id):
        taken = take(delivery_id)
        monkeypatch.setattr(github, "redeliver", take)
        sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=1)
        sweeps.github.deliver_pending()  # c1 fails again, and is noted
        sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502)  # c2 is not taken
        return taken

    monkeypatch.setattr(github, "redeliver", redeliver)
    sweeps.advance(1)
    first = sweeps.check()
    assert first["redeliveries_failed"] == 1 and first["state"] == "saved"
    assert sweeps.store.load(plan.STATE_KEY).data["waiting"]["services"] == ["telegram"]  # noted, and put back
    sweeps.advance(1)
    assert sweeps.check()["redeliveries"] >= 1
    assert [a["status_code"] for a in sweeps.attempts("c2")] == [500, 200]


def test_a_redelivery_github_refuses_is_named_not_awaited_by_the_check(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    sweeps.world.deliver("issue_comment", comment(1), guid="c1")
    sweeps.world.faults.rules.remove(outage)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 422, count=10**9)
    sweeps.advance(1)
    first = sweeps.check()
    assert first["redeliveries_refused"] == 1 and first["recovery"].startswith("recovered")
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "nothing waits"  # the 15-minute runs carry on with it, as before the outage


def test_a_state_that_cannot_be_read_keeps_what_waits_and_the_run_holds(sweeps):
    sweeps.sweep()
    record = sweeps.store.load(plan.STATE_KEY)
    sweeps.store.save(record, {**record.data, "asked": [["g", "not a time", 1]]})
    sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    assert sweeps.world.deliver("issue_comment", comment(1), guid="c1")[0] == 500
    sweeps.advance(15)
    summary = sweeps.sweep()
    assert summary["recovery"] == "held: telegram still failing" and summary["redeliveries"] == 0
    assert sweeps.store.load(plan.STATE_KEY).data["waiting"]["services"] == ["telegram"]


def test_a_run_cut_short_by_its_deadline_has_the_check_wait_before_the_next(sweeps):
    outage = sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    sweeps.world.deliver("issue_comment", comment(1))
    sweeps.world.faults.rules.remove(outage)
    sweeps.advance(1)
    cut = check(sweeps.services, now=sweeps.now, run_id="slow", seconds=0.0)
    assert cut["outcome"].startswith("aborted") and cut["recovery"] == "waiting: the run did not complete"
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "waiting: retry later"
    sweeps.advance(5)
    assert sweeps.check()["redeliveries"] == 1
