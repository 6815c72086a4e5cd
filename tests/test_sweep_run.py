"""The sweep's shell in scenarios (pager.sweep.run_sweep, run.check): runs 15 minutes apart and a check each
minute, against GitHub's list.

Played in the fake world (`pager_world.World`): GitHub's list of the app's deliveries is served page by page
to the real client (Link headers, `status=failure` filtering), each delivery and each redelivery the sweep
asks for is answered by the endpoint (here scripted with `answer`, or pager's real handlers), and the
control repository's alarm is the real one on the fake chat. `Sweeps.sweep` is a scheduled run,
`Sweeps.minutes(n)` n minutes of the every-minute check; `through_handler=True` runs them through
functions/sweep/app.py:lambda_handler instead.
"""

from __future__ import annotations

import pytest
from support import Sweeps, json_lines

from pager.observe import metrics
from pager.store import MemoryStore
from pager.sweep import run_sweep
from pager.sweep.deliveries import ASK_WAIT_SECONDS
from pager.waiting import SWEEP_KEY

DELIVERIES = f"{SWEEP_KEY} [deliveries]"
LEASE = f"{SWEEP_KEY} [lease]"


@pytest.fixture
def world(make_sweeps) -> Sweeps:
    return make_sweeps()


def stored(world: Sweeps, item: str = "deliveries") -> dict:
    return world.store.load(SWEEP_KEY, item).data


def test_a_first_run_reads_back_to_its_window_then_a_quiet_run_is_one_list_call_and_its_ping(world):
    for i in range(250):  # a long list from before: the first run reads it back to the window's start
        world.deliver("workflow_run", "completed", 1 + i % 5)
        world.now += 10
    first = world.sweep()
    assert first["pages"] == {"all": 3, "failures": 1} and first["pass"] == "read"  # the failure list, once
    for repo in (1, 2, 3):
        world.deliver("workflow_run", "completed", repo)
    world.advance(15)
    seen, calls = len(world.github.requests), world.services.github.calls
    summary = world.sweep()
    # the webhook's config (where GitHub delivers), the ping there, one page of the list
    assert world.services.github.calls - calls == 3 and summary["pages"] == {"all": 1, "failures": 0}
    assert summary["redeliveries"] == 0 and summary["calls_used"] == 3 and summary["reach_gaps"] == []
    listed = world.requests_since(seen)
    assert [r.path for r in listed] == ["/app/hook/config", "/app/hook/deliveries"]
    assert [r.query.get("status") for r in listed if r.path.endswith("/deliveries")] == [None]
    assert stored(world)["every"]["top"] == world.github.deliveries[-1]["id"]


def test_each_run_reads_only_what_came_since_the_one_before_each_delivery_once(world):
    world.sweep()
    for _ in range(3):
        for repo in range(40):
            world.deliver("workflow_run", "completed", repo)
        world.advance(15)
        assert world.sweep()["deliveries_seen"] == 40


def test_the_failures_of_an_outage_come_back_within_minutes_once(world):
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.down = 502  # pager's endpoint fails: every delivery, and the run's ping
    failed = [world.deliver("issue_comment", "created", 10 + i) for i in range(6)]
    failed += [world.deliver("workflow_run", "completed", 20 + i) for i in range(3)]
    world.advance(15)
    held = world.sweep()
    assert held["redeliveries"] == 0 and held["recovery"] == "waiting: pager" and held["decisions"]["held"] == 9
    world.minutes(3)  # each check pings it, which fails: still held, and nothing asked of GitHub
    assert all(len(world.attempts(g)) == 1 for g in failed)
    world.down = None  # the endpoint works again
    world.minutes(3)
    for guid in failed:
        assert [(a["status_code"], a["redelivery"]) for a in world.attempts(guid)] == [(502, False), (200, True)]
    world.advance(15)
    again = world.sweep()
    assert again["redeliveries"] == 0 and world.entries() == {} and world.telegram.view() == {}


def test_a_third_failure_opens_an_entry_and_a_manual_redelivery_that_passes_closes_it(world):
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issue_comment", "created", 10)
    for _ in range(2):
        world.advance(15)
        assert world.sweep()["redeliveries"] == 1
    assert [a["status_code"] for a in world.attempts(guid)] == [500, 500, 500]
    world.advance(15)
    summary = world.sweep()
    assert summary["redeliveries"] == 0 and summary["entries_opened"] == 1
    entry = world.store.dump()[f"alarm#control [entry:delivery:{guid}]"]
    # named as GitHub's pages name the thing, and linked to it: the comment, not the app's deliveries
    assert entry["state"] == "open" and entry["url"].endswith("/issues/1#issuecomment-492700400")
    assert entry["title"] == "pager missed a comment on Codertocat/Hello-World#1 — press ↻ Deliver again"
    assert entry["detail"] == ("Codertocat's comment on Codertocat/Hello-World#1: all attempts failed "
                               "(3 deliveries, the last answered 500)")
    assert entry["order"] == world.attempts(guid)[-1]["delivered_at"]
    assert entry["title"] in world.alarm_text() and entry["detail"] in world.alarm_text() and guid not in world.alarm_text() and len(world.telegram.sent) == 1

    world.advance(15)
    assert world.sweep()["redeliveries"] == 0 and len(world.telegram.sent) == 1 and world.telegram.edits == []
    assert len(world.attempts(guid)) == 3

    world.answer = lambda guid, redelivery: 200
    world.redeliver_by_hand(guid)
    world.advance(15)
    summary = world.sweep()
    assert summary["entries_closed"] == 1 and world.entries() == {} and world.alarm_text().startswith("✅ pager is well again")


def test_a_busy_hour_more_than_a_run_may_read_is_read_whole_over_runs_a_minute_apart(make_sweeps, log_lines):
    world = make_sweeps(sweep_all_pages=8)
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.advance(0.5)
    failed = []
    for i in range(2100):  # 2,100 deliveries and 9 failures in the 15 minutes to the next run
        if i % 260 == 5:
            world.answer = lambda guid, redelivery: 502
            failed.append(world.deliver("issue_comment", "created", 77))
            world.answer = lambda guid, redelivery: 200
        world.deliver("workflow_run", "completed", 1000 + i % 10)
        world.now += 0.4
    first = world.sweep()
    assert first["pages"]["all"] == 8 and first["pass"] == "under way" and first["recovery"] == "waiting: any"
    summaries = world.minutes(5)  # the check runs the sweep each minute until the pass is read
    assert [s["pages"]["all"] for s in summaries if "pages" in s] == [8, 6]
    assert all(len(world.attempts(g)) == 2 and world.attempts(g)[-1]["status_code"] == 200 for g in failed)
    assert not [line for line in log_lines() if line["message"] == "reach gap"]
    assert summaries[-1]["outcome"] == "nothing waits"


def test_a_run_moments_after_another_never_asks_again_for_what_it_asked_and_a_duplicate_invocation_steps_aside(world):
    world.answer = lambda guid, redelivery: 502
    guid = world.deliver("issue_comment", "created", 10)
    world.answer = lambda guid, redelivery: 200
    world.advance(5)
    first = run_sweep(world.services, now=world.now, run_id="a", event_id="scheduled-1")
    # A deliberate run a second later: GitHub has not listed the attempt yet.
    second = run_sweep(world.services, now=world.now + 1, run_id="b")
    assert first["redeliveries"] == 1 and second["redeliveries"] == 0 and second["decisions"]["awaiting"] == 1
    calls = world.services.github.calls
    duplicate = run_sweep(world.services, now=world.now + 2, run_id="c", event_id="scheduled-1")  # EventBridge, twice
    assert duplicate["outcome"].startswith("skipped: a duplicate invocation") and world.services.github.calls == calls
    world.github.deliver_pending()
    world.advance(15)
    assert world.sweep()["outcome"] == "done" and [a["status_code"] for a in world.attempts(guid)] == [502, 200]


def test_a_redelivery_github_carries_out_late_is_not_asked_for_twice_and_one_it_lost_is_asked_again(world):
    world.answer = lambda guid, redelivery: 502
    guid = world.deliver("issue_comment", "created", 10)

    def run(minutes: float) -> dict:
        world.advance(minutes)
        return run_sweep(world.services, now=world.now, run_id=f"at-{world.now}")  # GitHub carries out nothing yet

    assert run(1)["redeliveries"] == 1
    assert run(5)["decisions"]["awaiting"] == 1  # GitHub took it (202) and is slow: awaited, not asked again
    world.github.deliver_pending()  # carried out late, and failed
    assert run(15)["redeliveries"] == 1  # the third attempt, not a fourth
    world.github.pending.clear()  # and this one GitHub loses
    assert run(5)["decisions"]["awaiting"] == 1
    assert run(ASK_WAIT_SECONDS / 60)["redeliveries"] == 1  # ten minutes on, asked for again
    world.github.deliver_pending()
    assert len(world.attempts(guid)) == 3


def test_a_telegram_failure_of_the_alarm_stops_no_redelivery_and_the_change_waits_for_the_next_run(world):
    world.answer = lambda guid, redelivery: 500
    doomed = world.deliver("issue_comment", "created", 10)
    world.advance(15)
    world.sweep()
    world.advance(15)
    world.sweep()
    fresh = world.deliver("issue_comment", "created", 11)
    world.world.faults.fail_next("telegram-5xx", "sendMessage")
    world.advance(15)
    summary = world.sweep()
    assert summary["redeliveries"] == 1 and world.attempts(fresh)[-1]["redelivery"]
    assert summary["alarm"].startswith("waiting: TelegramUnavailable") and world.telegram.view() == {}
    assert doomed in world.entries()  # recorded; the message waits
    world.advance(15)
    summary = world.sweep()
    assert summary["alarm"] == "applied" and world.alarm_text().startswith("⚙️ ") and "pager missed " in world.alarm_text()


def test_entries_a_run_had_no_reads_left_for_say_where_by_name_and_a_later_run_names_them(make_sweeps):
    from pager.sweep.units import NAMED_ENTRIES

    world = make_sweeps(sweep_max_attempts=1)  # each first failure spent at once: all open in one run
    world.answer = lambda guid, redelivery: 500
    guids = [world.deliver("issue_comment", "created", 10) for _ in range(NAMED_ENTRIES + 3)]
    opened = 0
    while opened < len(guids):  # their redeliveries, then the run that names them all
        world.advance(15)
        opened += world.sweep()["entries_opened"]
    details = {g: world.store.dump()[f"alarm#control [entry:delivery:{g}]"]["detail"] for g in guids}
    assert sum(t.startswith("Codertocat's comment on Codertocat/Hello-World#1") for t in details.values()) == NAMED_ENTRIES
    # the others: where, by the name this run read for the same repository, never by its id
    assert sorted(t.split(":")[0] for t in details.values() if not t.startswith("Codertocat's")) == \
        ["a comment on Codertocat/Hello-World"] * 3
    titles = {world.store.dump()[f"alarm#control [entry:delivery:{g}]"]["title"] for g in guids}
    assert titles == {"pager missed a comment on Codertocat/Hello-World#1 — press ↻ Deliver again",
                      "pager missed a comment in Codertocat/Hello-World — press ↻ Deliver again"}
    world.advance(15)
    assert world.sweep()["entries_opened"] == 0
    entries = [world.store.dump()[f"alarm#control [entry:delivery:{g}]"] for g in guids]
    assert all(e["detail"].startswith("Codertocat's comment on Codertocat/Hello-World#1: ") for e in entries)
    assert len({e["detail"] for e in entries}) == 1  # the rest of each line as it was
    assert {e["title"] for e in entries} == {"pager missed a comment on Codertocat/Hello-World#1 — press ↻ Deliver again"}
    assert all(e["url"].endswith("/issues/1#issuecomment-492700400") for e in entries)


def test_an_entry_github_will_never_name_takes_no_read_from_the_ones_it_can(make_sweeps):
    from pager.sweep.units import NAMED_ENTRIES

    world = make_sweeps(sweep_max_attempts=1)  # each first failure spent at once: all open in one run
    world.answer = lambda guid, redelivery: 500
    guids = [world.deliver("issue_comment", "created", 10) for _ in range(2 * NAMED_ENTRIES + 1)]
    opened = 0
    while opened < len(guids):
        world.advance(15)
        opened += world.sweep()["entries_opened"]
    entry = lambda g: world.store.dump()[f"alarm#control [entry:delivery:{g}]"]  # noqa: E731
    unnamed = [g for g in guids if not entry(g).get("thing")]
    assert len(unnamed) == NAMED_ENTRIES + 1
    for g in unnamed[:NAMED_ENTRIES]:  # GitHub no longer has these deliveries
        world.github.fail(rf"^GET /app/hook/deliveries/{entry(g)['delivery_id']}$", 404, count=100,
                          body={"message": "Not Found"})
    world.advance(15)
    world.sweep()
    world.advance(15)
    world.sweep()
    assert entry(unnamed[-1])["detail"].startswith("Codertocat's comment on Codertocat/Hello-World#1: ")
    assert all(entry(g)["detail"].startswith("a comment on Codertocat/Hello-World: ") for g in unnamed[:NAMED_ENTRIES])
    reads = [r for r in world.requests_since(0) if r.path.startswith("/app/hook/deliveries/") and r.method == "GET"]
    world.advance(15)
    world.sweep()  # nothing is left to name: no read
    assert [r for r in world.requests_since(0) if r.path.startswith("/app/hook/deliveries/") and r.method == "GET"] == reads


def test_a_run_without_room_for_a_page_asks_for_nothing_and_keeps_its_state(make_sweeps):
    world = make_sweeps(sweep_call_budget=12, sweep_max_redeliveries=11)
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    summary = world.sweep()
    assert summary["outcome"].startswith("aborted: no call left") and summary["redeliveries"] == 0
    assert stored(world)["every"]["top"] == 0 and world.entries() == {}


def test_a_redelivery_that_github_refuses_is_logged_and_the_run_goes_on(world):
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("issue_comment", "created", 10 + i) for i in range(2)]
    world.answer = lambda guid, redelivery: 200
    world.github.fail(r"/attempts$", 404, count=1, body={"message": "Not Found"})
    world.advance(5)
    summary = world.sweep()
    assert (summary["redeliveries"], summary["redeliveries_refused"]) == (1, 1)
    assert [len(world.attempts(g)) for g in guids] == [1, 2]


def test_githubs_rate_limit_stops_the_minutes_redeliveries_and_the_check_waits_as_github_says(world):
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("issue_comment", "created", 10 + i) for i in range(2)]
    world.answer = lambda guid, redelivery: 200
    world.github.fail(r"/attempts$", 429, count=1, body={"message": "API rate limit exceeded"},
                      headers={"retry-after": "120"})
    world.advance(5)
    summary = world.sweep()
    assert (summary["redeliveries"], summary["redeliveries_refused"], summary["redeliveries_failed"]) == (0, 0, 2)
    assert stored(world, "waiting")["services"] == ["redelivery"]
    outcomes = [s["outcome"] for s in world.minutes(3)]
    assert outcomes[:2] == ["waiting: retry later", "waiting: retry later"]
    world.minutes(12)
    assert [len(world.attempts(g)) for g in guids] == [2, 2]


def test_a_list_github_does_not_serve_asks_for_nothing_keeps_the_pass_and_counts_it_for_the_alarm(world):
    world.sweep()
    saved = stored(world)
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.github.fail(r"^GET /app/hook/deliveries$", 503)
    world.advance(15)
    summary = world.sweep()
    assert summary["outcome"] == "aborted: GitHub did not serve the deliveries list (5xx or no answer)"
    assert not any(r.path.endswith("/attempts") for r in world.github.requests)
    assert stored(world, "health")["unserved"]["runs"] == 1  # counted, for the alarm to say so if it lasts
    kept = stored(world)
    assert {k: v for k, v in kept.items() if k not in ("ran_at", "last_event")} == \
        {k: v for k, v in saved.items() if k not in ("ran_at", "last_event")}


def test_the_state_is_committed_only_on_the_version_the_run_read_and_a_run_that_lost_does_nothing(world):
    class Racing(MemoryStore):
        def items(self, key, after="#"):
            found = super().items(key, after)
            if key == SWEEP_KEY:
                self.save(self.load(SWEEP_KEY, "deliveries"), {"written": "by someone else"})
            return found

    world.services.store = world.world.store = Racing()
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    summary = world.sweep()
    assert summary["outcome"] == "skipped: another run committed first"
    assert not any(r.path.endswith("/attempts") for r in world.github.requests)
    assert stored(world) == {"written": "by someone else"}


def test_a_run_logs_one_summary_line_and_emits_its_metrics(world, capsys, log_lines):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    metrics.clear_metrics()
    capsys.readouterr()
    world.sweep()
    metrics.flush_metrics()
    (summary,) = [line for line in log_lines() if line["message"] == "sweep run"]
    assert summary["service"] == "pager" and summary["redeliveries"] == 1 and summary["calls_used"] == 5  # and its ping
    assert summary["pages"] == {"all": 1, "failures": 1} and summary["reach_gaps"] == []
    assert "entries_opened" in summary and "entries_closed" in summary and "deliveries_seen" in summary
    emf = [line for line in json_lines(capsys.readouterr().out) if "_aws" in line]
    # Only the dead man's switch every run; the counters only when not zero (none here).
    assert [{m["Name"] for d in line["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]} for line in emf] == [{"SweepCompleted"}]
    assert emf[0]["SweepCompleted"] == [1.0] and emf[0]["service"] == "pager"


def test_an_unreadable_state_item_is_logged_and_the_run_reads_like_a_first_run(world, log_lines):
    record = world.store.load(SWEEP_KEY, "deliveries")
    world.store.save(record, {"v": 3, "every": {"top": "not an id"}, "followed": "not packed"})
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    summary = world.sweep()
    assert summary["redeliveries"] == 1 and summary["state"] == "saved"
    assert any(line["message"] == "sweep state unreadable, starting afresh" for line in log_lines())


def test_past_its_deadline_a_run_starts_no_call_and_keeps_the_pass(world):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    summary = run_sweep(world.services, now=world.now, run_id="late", seconds=0)
    assert summary["outcome"].startswith("aborted: no call left for the deliveries list, or the run's deadline")
    assert world.services.github.calls == 0 and stored(world)["every"]["top"] == 0
    assert stored(world, "health") == {}  # the run's own deadline says nothing of GitHub


def test_through_the_lambda_handler_a_third_failure_pages_once_in_the_control_repositorys_alarm(make_sweeps):
    world = make_sweeps(through_handler=True)
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issues", "opened", 10)
    for _ in range(3):
        world.advance(15)
        world.sweep()
    assert len(world.attempts(guid)) == 3
    (message,) = world.telegram.chat()
    assert message.text.startswith("⚙️ ") and "pager missed issue Codertocat/Hello-World#1 — press ↻ Deliver " \
        "again</a>\n" in message.text and message.notified
    assert "Codertocat's issue Codertocat/Hello-World#1: Spelling error in the README file: all attempts failed" in message.text
    assert guid not in message.text and 'href="https://github.com/Codertocat/Hello-World/issues/1"' in message.text
    # no Start fix for failed deliveries; ↻ asks GitHub for one more attempt of the newest one
    assert message.buttons == [[{"text": "↻ Deliver again: Codertocat/Hello-World#1",
                                 "callback_data": f"again:{world.attempts(guid)[-1]['id']}"}]]
    world.advance(15)
    world.sweep()
    assert len(world.telegram.chat()) == 1 and world.telegram.chat()[0].edits == 0

    world.answer = lambda guid, redelivery: 200
    world.redeliver_by_hand(guid)
    world.advance(15)
    summary = world.sweep()
    assert summary["entries_closed"] == 1 and summary["alarm"] == "applied"
    assert world.telegram.chat()[0].text.startswith("✅ pager is well again")


def test_a_run_writes_its_deliveries_once_and_once_more_only_when_the_alarm_changes_and_checks_write_nothing(world):
    def saves(lease: bool = False) -> list[str]:
        return [name.removeprefix("save ") for service, name in world.world.faults.log[since:] if service == "store"
                and name.startswith("save") and (lease or name != f"save {LEASE}")]

    since = len(world.world.faults.log)
    world.sweep()
    assert saves(lease=True) == [LEASE, DELIVERIES, LEASE]  # taken, the commit, given back
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issue_comment", "created", 10)
    for _ in range(3):
        world.advance(15)
        since = len(world.world.faults.log)
        summary = world.sweep()
    assert summary["alarm"] == "applied"
    # The deliveries' commit, the alarm's entry and message, the deliveries again.
    assert saves()[0] == DELIVERIES and saves()[-1] == DELIVERIES and saves().count(DELIVERIES) == 2
    assert f"alarm#control [entry:delivery:{guid}]" in saves()
    world.advance(15)
    since = len(world.world.faults.log)
    world.sweep()
    world.minutes(5)
    assert saves(lease=True) == [LEASE, DELIVERIES, LEASE]  # the checks, with nothing to ask, take no lease


def test_the_checks_carry_out_the_minutes_a_run_queued_and_write_only_the_lease_of_a_minute_that_asks(make_sweeps):
    world = make_sweeps(sweep_max_redeliveries=4)
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("workflow_run", "completed", i) for i in range(10)]
    world.answer = lambda guid, redelivery: 200
    world.deliver("workflow_run", "completed", 99)  # pager answers again (no hold)
    world.advance(5)
    writes = sum(world.store.writes.values())
    first = world.sweep()
    assert first["redeliveries"] == 4 and first["queued"] == 6
    # each check asks for the minute that has begun: the first, 20 s after the run, for the run's own minute
    asked = [s.get("redeliveries", 0) for s in world.minutes(4)]
    # the run's commit and its lease taken and given back; the lease of each minute that asks; no more
    assert asked == [0, 4, 2, 0] and sum(world.store.writes.values()) - writes == 1 + 2 + 2
    assert all(world.attempts(g)[-1]["status_code"] == 200 for g in guids)


# -- closed loop: pager's real handlers answer, the sweep's redeliveries go through them again ------------

from pager_world.cases import issue_comment_by, outside, run  # noqa: E402


def real(world: Sweeps) -> Sweeps:
    world.answer = None  # pager's own handlers answer each delivery
    return world


def test_a_neighbours_pass_drops_nothing_the_failed_events_come_back_and_are_shown(world):
    real(world)
    world.world.faults.fail("telegram", "^sendMessage$", kind="telegram-5xx", count=2)
    pull_10 = world.world.deliver("pull_request", outside("pull_request", "opened", who="pull_request",
                                                          **{"pull_request.number": 10, "number": 10}))
    deploy = world.world.deliver("workflow_run", run("failure", workflow_id=77, name="deploy"))
    assert pull_10[0] == deploy[0] == 500
    world.advance(2)
    # A maintainer pushes to pull request #3, and lint passes on main: both answered, both pass.
    assert world.world.deliver("pull_request", {**outside("pull_request", "synchronize", who="pull_request"),
                                                "number": 3})[0] == 200
    assert world.world.deliver("workflow_run", run("success", workflow_id=78, name="lint", number=170))[0] == 200
    world.advance(13)
    summary = world.sweep()
    assert summary["redeliveries"] == 2
    texts = [text for text, _ in world.telegram.view().values()]
    assert any("opened pull request" in t and "#10" in t for t in texts)
    assert any("deploy run #163 failed" in t for t in texts)


def test_a_stale_failure_redelivered_after_its_success_changes_nothing(world):
    real(world)
    world.world.faults.fail("telegram", "^sendMessage$", kind="telegram-5xx")
    failed = "deploy-5-failed"
    assert world.world.deliver("workflow_run", run("failure", workflow_id=77, name="deploy", number=5), guid=failed)[0] == 500
    assert world.world.deliver("workflow_run", run("success", workflow_id=77, name="deploy", number=6))[0] == 200
    world.advance(15)
    assert world.sweep()["redeliveries"] == 1
    # Delivered again late, the run that failed before a newer one passed opens nothing.
    assert [a["status_code"] for a in world.attempts(failed)] == [500, 200]
    assert world.world.answers[failed] == {"outcome": "alarm unchanged"}
    assert world.telegram.view() == {}


def test_forty_comments_during_a_three_hour_telegram_outage_are_each_shown_afterwards(world):
    real(world)
    outage = world.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    comments = []
    for n in range(40):  # one every 4.5 minutes, for three hours, a check every minute, a run every 15
        guid = f"comment-{n}"
        world.world.deliver("issue_comment", issue_comment_by("alice", comment_id=9000 + n, number=200 + n), guid=guid)
        comments.append(guid)
        world.minutes(4)
        if n % 3 == 2:
            world.sweep()
    assert all(len(world.attempts(g)) == 1 for g in comments)  # held: no attempt spent while Telegram was down
    world.world.faults.rules.remove(outage)  # Telegram is back
    world.minutes(10)
    shown = {text for text, _ in world.telegram.view().values()}
    assert [g for n, g in enumerate(comments) if not any(f"issuecomment-{9000 + n}" in t for t in shown)] == []
    assert world.entries() == {}


def test_a_release_opened_with_github_token_gets_no_check_suite_and_the_sweep_offers_merge(world):
    from pager_world.cases import live_pull, pull

    real(world)
    live_pull(world.world, mergeable_state="unknown")  # GitHub is still computing it
    assert world.world.deliver("pull_request", pull("opened"))[0] == 200
    world.advance(15)
    assert world.sweep()["releases_checked"] == ["Codertocat/Hello-World#2: not ready: unknown"]
    live_pull(world.world)  # no workflow ran, so no check_suite event will ever come; GitHub calls it clean
    world.advance(15)
    assert world.sweep()["releases_checked"] == ["Codertocat/Hello-World#2: Merge offered"]
    [(text, buttons)] = world.telegram.view().values()
    assert "release 1.2.0" in text and buttons == (("🔀 Merge",),)
    world.advance(15)
    assert world.sweep()["releases_checked"] == []  # offered: not read again


# -- what a second look found ------------------------------------------------------------------------------


def test_a_run_keeps_what_it_read_when_its_deadline_or_github_stops_the_reading_and_the_next_reads_on(world, monkeypatch):
    from pager.sweep import units as shell

    for i in range(600):  # six pages
        world.deliver("workflow_run", "completed", 100 + i % 5)
        world.now += 1
    world.answer = lambda guid, redelivery: 502
    failed = world.deliver("issue_comment", "created", 10)  # the newest: on the first page
    world.answer = lambda guid, redelivery: 200
    world.deliver("workflow_run", "completed", 2)
    pages = {"n": 0}

    def two_pages_a_run() -> bool:  # GitHub so slow that a run reaches its reading margin after two pages
        pages["n"] += 1
        return pages["n"] % 3 != 0

    monkeypatch.setattr(shell, "_time_left", two_pages_a_run)
    first = world.sweep()
    assert first["pages"]["all"] == 2 and first["pass"] == "under way" and first["redeliveries"] == 1
    assert [a["status_code"] for a in world.attempts(failed)] == [502, 200]
    world.github.fail(r"^GET /app/hook/deliveries$", 503)  # and GitHub fails the next run's second page
    pages["n"] = -10
    monkeypatch.setattr(shell, "_time_left", lambda: True)
    world.advance(1)
    read_on = run_sweep(world.services, now=world.now, run_id="next")
    assert read_on["outcome"].startswith("aborted")  # its first page: nothing read, nothing lost
    world.advance(1)
    after = run_sweep(world.services, now=world.now, run_id="after")
    assert after["outcome"] == "done" and after["pass"] == "read"
    assert stored(world)["every"]["top"] >= world.github.deliveries[-1]["id"] - 1


def test_a_hold_a_scheduled_run_ends_counts_none_of_its_probes(world):
    _, pages = world.pager_held()
    world.minutes(5)  # five pings, each 502
    world.down = None
    world.answer = lambda guid, redelivery: 200
    ended = world.sweep()  # the scheduled run's ping, not the check's, sees it first
    assert ended["recovery"] == "recovered" and ended["redeliveries"] == 3 and world.entries() == {}
    assert all([a["status_code"] for a in world.attempts(g)] == [502, 200] for g in pages)


def test_a_run_never_asks_past_its_budget_and_what_it_could_not_ask_comes_next(make_sweeps):
    world = make_sweeps(sweep_call_budget=1 + 10 + 1 + 5 + 4, sweep_max_redeliveries=10)
    world.answer = lambda guid, redelivery: 502
    failed = [world.deliver("workflow_run", "completed", 10 + i) for i in range(10)]
    world.answer = lambda guid, redelivery: 200
    for i in range(900):  # nine pages to read first
        world.deliver("workflow_run", "completed", 100 + i % 5)
    world.advance(5)
    summary = world.sweep()
    assert summary["calls_used"] <= 21
    world.minutes(20)
    world.advance(15)
    world.sweep()
    world.minutes(5)
    assert all(world.attempts(g)[-1]["status_code"] == 200 for g in failed)


@pytest.mark.parametrize("github_lags_minutes", [0, 15])
def test_a_sweep_down_four_days_says_what_github_forgot_unread_even_if_github_still_lists_it_a_little_longer(
        make_sweeps, log_lines, github_lags_minutes):
    world = make_sweeps()
    world.deliver("workflow_run", "completed", 1)
    world.advance(1)
    world.sweep()
    for i in range(4 * 24 * 6):  # no run for four days; the fleet delivers every ten minutes
        if i == 30:  # a failure on the first day, beyond GitHub's three days before any run reads it
            world.answer = lambda guid, redelivery: 502
            world.deliver("issue_comment", "created", 10)
            world.answer = lambda guid, redelivery: 200
        world.deliver("workflow_run", "completed", 2)
        world.advance(10)
    world.github.prune(world.now - github_lags_minutes * 60)  # GitHub's three days, its clean-up behind or not
    summary = world.sweep()
    assert summary["reach_gaps"] and [line for line in log_lines() if line["message"] == "reach gap"]
    assert "which pager never read" in world.alarm_text()


def refuse_cursors(world: Sweeps, count: int) -> None:
    """GitHub answers 422 ("Validation failed, or the endpoint has been spammed", its documented answer of the
    list) to the next `count` list calls that follow a link; the head page is served."""
    from pager_world.http import HttpResponse

    real, left = world.github._list, {"n": count}

    def listing(request):
        if "cursor" in request.query and left["n"] > 0:
            left["n"] -= 1
            return HttpResponse(422, {"message": "Validation failed, or the endpoint has been spammed."})
        return real(request)

    world.github._list = listing


def test_a_link_github_keeps_refusing_costs_a_run_three_calls_and_is_said_not_looped_on(world):
    world.list_of(350)
    refuse_cursors(world, 10**9)
    calls = world.services.github.calls
    summary = world.sweep()
    assert world.services.github.calls - calls <= 6  # the ping (two calls), the head, the refused link, the head, refused
    assert summary["recovery"] != "waiting: any, github"  # GitHub answered: nothing waits for it
    calls = world.services.github.calls
    world.minutes(3)
    assert world.services.github.calls - calls <= 12


def test_a_pass_begun_anew_counts_no_attempt_twice(make_sweeps):
    world = make_sweeps(sweep_all_pages=2, sweep_max_attempts=4)
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.advance(15)
    world.answer = lambda guid, redelivery: 502
    guid = world.deliver("issues", "opened", 10)  # its first delivery fails
    world.answer = lambda guid, redelivery: 200
    for _ in range(250):  # two and a half pages between it and its redeliveries
        world.deliver("workflow_run", "completed", 100)
        world.now += 1
    world.answer = lambda guid, redelivery: 502
    world.redeliver_by_hand(guid)
    world.redeliver_by_hand(guid)  # both redeliveries on the head page, failed
    world.answer = lambda guid, redelivery: 200
    world.advance(1)
    assert world.sweep()["pass"] == "under way"  # the two redeliveries read, not the first delivery
    refuse_cursors(world, 1)
    world.advance(1)
    world.sweep()  # the link refused: the pass begins anew and reads the two redeliveries again
    world.advance(1)
    world.sweep()  # and reads the first delivery: three attempts of four
    assert "all attempts failed" not in world.alarm_text()


def serve_with(world: Sweeps, tweak) -> None:
    """GitHub's list pages, changed by `tweak(request, response)`."""
    real = world.github._list
    world.github._list = lambda request: tweak(request, real(request))


@pytest.mark.parametrize("item", ["a string", None, 7, ["x"],
                                  {"id": 6, "guid": "g-null", "status_code": None, "event": "issues", "action": "opened"}])
def test_a_malformed_item_of_githubs_list_neither_crashes_the_function_nor_hides_a_failure(make_sweeps, item):
    from pager.values import iso
    from pager_world.http import HttpResponse

    world = make_sweeps(through_handler=True)
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.advance(15)
    world.answer = lambda guid, redelivery: 502
    failed = world.deliver("issue_comment", "created", 10)
    world.answer = lambda guid, redelivery: 200

    def tweak(request, response):
        if "cursor" in request.query or request.query.get("status"):
            return response
        odd = {**item, "delivered_at": iso(world.now)} if isinstance(item, dict) else item
        return HttpResponse(response.status, [odd, *response.body], response.headers)

    serve_with(world, tweak)
    assert world.sweep()["outcome"] == "done"
    assert world.attempts(failed)[-1]["status_code"] == 200


@pytest.mark.parametrize("link, followed", [
    ('</app/hook/deliveries?per_page=100&cursor={c}>; rel="next"', True),  # relative (RFC 8288)
    ('<https://api.github.test:443/app/hook/deliveries?per_page=100&cursor={c}>; rel="next"', True),
    ('<https://API.github.test/app/hook/deliveries?per_page=100&cursor={c}>; rel="next"', True),
    ('<https://elsewhere.test/app/hook/deliveries?per_page=100&cursor={c}>; rel="next"', False),
    ("garbage; rel=next", False),
])
def test_a_link_of_any_shape_never_crashes_the_function_and_the_jwt_goes_to_the_api_host_only(make_sweeps, link, followed):
    from pager_world.http import HttpResponse

    world = make_sweeps(through_handler=True)
    world.deliver("workflow_run", "completed", 1)
    world.sweep()
    world.advance(15)
    for i in range(150):
        world.deliver("workflow_run", "completed", 100 + i % 5)
    world.answer = lambda guid, redelivery: 502
    failed = world.deliver("issue_comment", "created", 10)
    world.answer = lambda guid, redelivery: 200

    def tweak(request, response):
        if "Link" not in response.headers:
            return response
        cursor = response.headers["Link"].split("cursor=")[1].split(">")[0]
        return HttpResponse(response.status, response.body, {"Link": link.replace("{c}", cursor)})

    serve_with(world, tweak)
    world.advance(1)
    outcome = world.sweep()["outcome"]
    assert outcome == "done" if followed else outcome.endswith("(its links to the next pages refused); the next run reads on")
    assert world.attempts(failed)[-1]["status_code"] == 200  # on the newest page, asked for all the same


def test_with_one_page_a_run_a_link_github_keeps_refusing_is_said_not_called_a_done_run(make_sweeps):
    world = make_sweeps(sweep_all_pages=1)
    world.list_of(250)
    refuse_cursors(world, 10**9)
    outcomes = []
    for _ in range(4):
        world.advance(15)
        outcomes.append(world.sweep()["outcome"])
    assert any("links to the next pages refused" in o for o in outcomes), outcomes


def test_a_checks_redelivery_it_had_no_time_for_notes_nothing_to_wait_for_github(make_sweeps, monkeypatch):
    from pager.errors import DeadlineExceeded

    world = make_sweeps(sweep_max_redeliveries=4)
    world.answer = lambda guid, redelivery: 502
    for i in range(10):
        world.deliver("workflow_run", "completed", i)
    world.answer = lambda guid, redelivery: 200
    world.deliver("workflow_run", "completed", 99)
    world.advance(5)
    assert world.sweep()["queued"] == 6  # four asked by the run, six queued for the check's minutes

    def out_of_time(delivery_id):
        raise DeadlineExceeded("the invocation's deadline passed before the redelivery")

    monkeypatch.setattr(world.services.github, "redeliver", out_of_time)
    assert any(s.get("redeliveries_failed") for s in world.minutes(2))
    assert "github" not in world.store.load(SWEEP_KEY, "waiting").data.get("services", [])
