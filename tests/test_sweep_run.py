"""The sweep's shell in scenarios (pager.sweep.run_sweep): runs 15 minutes apart against GitHub's list.

Played in the fake world (`pager_world.World`): GitHub's list of the app's deliveries is served page
by page to the real client (Link headers, `status=failure` filtering), each delivery and each
redelivery the sweep asks for is answered by the endpoint (here scripted with `answer`, or pager's
real handlers), and the control repository's alarm is the real one on the fake chat. Every run goes
through `Sweeps.sweep`, the one place that invokes the sweep; `through_handler=True` runs it through
functions/sweep/app.py:lambda_handler instead.
"""

from __future__ import annotations

import pytest
from support import Sweeps, json_lines

from pager.observe import metrics
from pager.store import MemoryStore
from pager.sweep import run_sweep
from pager.sweep.run import STATE_KEY


@pytest.fixture
def world(make_sweeps) -> Sweeps:
    return make_sweeps()


def test_a_quiet_run_makes_two_list_calls_with_one_jwt(world):
    for i in range(250):  # a long list from before: the first run reads it back to the window's start
        world.deliver("workflow_run", "completed", 1 + i % 5)
        world.now += 10
    first = world.sweep()
    assert first["pages"] == {"failures": 1, "all": 3}
    for repo in (1, 2, 3):
        world.deliver("workflow_run", "completed", repo)
    world.advance(15)
    seen = len(world.github.requests)
    calls = world.services.github.calls
    summary = world.sweep()
    assert world.services.github.calls - calls == 2
    assert summary["pages"] == {"failures": 1, "all": 1}
    assert summary["redeliveries"] == 0 and summary["calls_used"] == 2 and summary["reach_gaps"] == []
    listed = world.requests_since(seen)
    assert [r.query.get("status") for r in listed] == ["failure", None]
    assert len({r.headers["Authorization"] for r in listed}) == 1
    assert world.store.load(STATE_KEY).exists


def test_an_outages_failures_come_back_on_the_next_run_and_once(world):
    world.sweep()
    world.answer = lambda guid, redelivery: 502  # Telegram is down: every handler answers 500
    failed = [world.deliver("issue_comment", "created", 10 + i) for i in range(6)]
    failed += [world.deliver("workflow_run", "completed", 20 + i) for i in range(3)]
    world.answer = lambda guid, redelivery: 0  # then the pager does not answer in time
    failed.append(world.deliver("issues", "opened", 30))
    world.answer = lambda guid, redelivery: 200  # the outage is over
    world.advance(15)
    summary = world.sweep()
    assert summary["redeliveries"] == len(failed) == 10
    for guid in failed:
        attempts = world.attempts(guid)
        assert [a["redelivery"] for a in attempts] == [False, True] and attempts[-1]["status_code"] == 200
    world.advance(15)
    again = world.sweep()
    assert again["redeliveries"] == 0 and world.entries() == {} and world.telegram.view() == {}
    assert all(len(world.attempts(guid)) == 2 for guid in failed)


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
    assert entry["title"] == ("Codertocat's comment on Codertocat/Hello-World#1: all attempts failed "
                              "(3 deliveries, the last answered 500)")
    assert entry["order"] == world.attempts(guid)[-1]["delivered_at"]
    assert entry["title"] in world.alarm_text() and guid not in world.alarm_text() and len(world.telegram.sent) == 1

    world.advance(15)
    assert world.sweep()["redeliveries"] == 0 and len(world.telegram.sent) == 1 and world.telegram.edits == []
    assert len(world.attempts(guid)) == 3

    world.answer = lambda guid, redelivery: 200
    world.redeliver_by_hand(guid)
    world.advance(15)
    summary = world.sweep()
    assert summary["entries_closed"] == 1 and world.entries() == {} and world.alarm_text().startswith("✅ pager is well again")


def test_a_busy_day_logs_a_reach_gap_for_the_every_outcome_list_while_every_5xx_is_still_found(world, log_lines):
    cursor = world.github.deliver("ping", {"zen": "x"})
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
    summary = world.sweep()

    assert summary["pages"] == {"failures": 1, "all": 20}
    (gap,) = summary["reach_gaps"]
    newest_first = sorted(world.github.deliveries[: -len(failed)], key=lambda d: -d["id"])
    assert gap == {"list": "all", "reached": newest_first[1999]["delivered_at"],
                   "wanted": cursor["delivered_at"], "pages": 20}
    logged = [line for line in log_lines() if line["message"] == "reach gap"]
    assert [(line["list"], line["reached"], line["wanted"]) for line in logged] == [("all", gap["reached"], gap["wanted"])]

    hidden = [g for g in failed if world.attempts(g)[0]["id"] < newest_first[1999]["id"]]
    assert hidden, "some failures lie in the part of the list the pages did not reach"
    assert summary["redeliveries"] == len(failed)
    assert all(world.attempts(g)[-1]["redelivery"] for g in failed)
    assert summary["calls_used"] == 1 + 20 + len(failed) <= 50


def test_a_run_moments_after_another_never_asks_again_for_what_it_asked_and_a_duplicate_invocation_steps_aside(world):
    world.answer = lambda guid, redelivery: 502
    guid = world.deliver("issue_comment", "created", 10)
    world.answer = lambda guid, redelivery: 200
    world.advance(5)
    first = run_sweep(world.services, now=world.now, run_id="a", event_id="scheduled-1")
    # A deliberate run a second later (the recovery check's): GitHub has not listed the attempt yet.
    second = run_sweep(world.services, now=world.now + 1, run_id="b")
    assert first["redeliveries"] == 1 and second["redeliveries"] == 0 and second["decisions"]["awaiting"] == 1
    calls = world.services.github.calls
    duplicate = run_sweep(world.services, now=world.now + 2, run_id="c", event_id="scheduled-1")  # EventBridge, twice
    assert duplicate["outcome"].startswith("skipped: a duplicate invocation") and world.services.github.calls == calls
    world.github.deliver_pending()
    world.advance(15)
    assert world.sweep()["outcome"] == "done" and [a["status_code"] for a in world.attempts(guid)] == [502, 200]


def test_a_redelivery_github_carries_out_late_is_not_asked_for_twice_and_one_it_lost_is_asked_again_after_an_hour(world):
    world.answer = lambda guid, redelivery: 502
    guid = world.deliver("issue_comment", "created", 10)

    def run(minutes: float) -> dict:
        world.advance(minutes)
        return run_sweep(world.services, now=world.now, run_id=f"at-{world.now}")  # GitHub carries out nothing yet

    assert run(1)["redeliveries"] == 1
    for _ in range(3):  # GitHub accepted it (202) and is slow: the attempt is awaited, not asked for again
        assert run(15)["decisions"]["awaiting"] == 1
    world.github.deliver_pending()  # carried out 45 minutes late
    assert run(15)["redeliveries"] == 1  # the third attempt, not a fourth
    world.github.pending.clear()  # and this one GitHub loses
    for _ in range(3):
        assert run(15)["decisions"]["awaiting"] == 1
    assert run(15)["redeliveries"] == 1  # an hour on, asked for again
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
    assert summary["alarm"] == "waiting: TelegramUnavailable" and world.telegram.view() == {}
    assert doomed in world.entries()  # recorded; the message waits
    world.advance(15)
    summary = world.sweep()
    assert summary["alarm"] == "applied" and world.alarm_text().startswith("⚙️ pager needs you: ")


def test_a_run_without_room_for_a_page_of_every_outcome_asks_for_nothing_and_leaves_alarm_and_cursor(make_sweeps, log_lines):
    world = make_sweeps(sweep_call_budget=12)
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    summary = world.sweep()
    assert summary["outcome"] == "no room for the every-outcome list"
    assert summary["pages"] == {"failures": 1, "all": 0} and summary["redeliveries"] == 0
    assert world.store.load(STATE_KEY).data["cursor"] is None and world.entries() == {}
    assert any(line["message"] == "no room for the every-outcome list" for line in log_lines())


def test_a_redelivery_that_github_refuses_is_logged_and_the_run_goes_on(world):
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    world.answer = lambda guid, redelivery: 200
    world.github.fail(r"/attempts$", 404, count=1, body={"message": "Not Found"})
    world.advance(5)
    summary = world.sweep()
    assert (summary["redeliveries"], summary["redeliveries_refused"]) == (2, 1)
    assert [len(world.attempts(g)) for g in guids] == [1, 2, 2]


def test_a_redelivery_that_github_answers_with_a_rate_limit_counts_as_failed_not_refused(world):
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    world.answer = lambda guid, redelivery: 200
    world.github.fail(r"/attempts$", 429, count=1, body={"message": "API rate limit exceeded"})
    world.advance(5)
    summary = world.sweep()
    assert (summary["redeliveries"], summary["redeliveries_refused"], summary["redeliveries_failed"]) == (2, 0, 1)
    assert [len(world.attempts(g)) for g in guids] == [1, 2, 2]


def test_a_list_github_does_not_serve_ends_the_run_before_any_redelivery_and_keeps_the_state(world):
    world.sweep()
    saved = world.store.load(STATE_KEY)
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    listed = {"calls": 0}

    def after_the_failure_list(service, name):  # GitHub fails right after serving the failure list
        if (service, name) == ("github", "GET /app/hook/deliveries"):
            listed["calls"] += 1
            if listed["calls"] == 2:
                world.github.fail(r"/app/hook/deliveries$", 503)

    world.advance(15)
    world.world.faults.observers.append(after_the_failure_list)
    summary = world.sweep()
    assert summary["outcome"] == "aborted: every-outcome list: GitHubUnavailable"
    assert not any(r.path.endswith("/attempts") for r in world.github.requests)
    kept = world.store.load(STATE_KEY).data
    assert kept["health"]["unserved"] == 1  # counted, for the alarm to say so if it lasts
    assert {k: v for k, v in kept["health"].items() if not k.startswith("unserved")} == saved.data.get("health", {})
    assert {k: v for k, v in kept.items() if k not in ("health", "ran_at", "last_event")} == \
        {k: v for k, v in saved.data.items() if k not in ("health", "ran_at", "last_event")}


def test_the_state_is_saved_only_on_the_version_the_run_read(world):
    class Racing(MemoryStore):
        def load(self, key, item=""):
            record = super().load(key, item)
            if key == STATE_KEY:
                super().save(record, {"written": "by someone else"})
            return record

    world.services.store = world.world.store = Racing()
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    summary = world.sweep()
    assert summary["outcome"] == "skipped: another run committed first"
    assert summary["state"] == "not saved: another run wrote it first"
    assert not any(r.path.endswith("/attempts") for r in world.github.requests)
    assert world.store.load(STATE_KEY).data == {"written": "by someone else"}


def test_a_run_logs_one_summary_line_and_emits_its_metrics(world, capsys, log_lines):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    metrics.clear_metrics()
    capsys.readouterr()
    world.sweep()
    metrics.flush_metrics()
    (summary,) = [line for line in log_lines() if line["message"] == "sweep run"]
    assert summary["service"] == "pager" and summary["redeliveries"] == 1 and summary["calls_used"] == 3
    assert summary["pages"] == {"failures": 1, "all": 1} and summary["reach_gaps"] == []
    assert "entries_opened" in summary and "entries_closed" in summary and "deliveries_seen" in summary
    emf = [line for line in json_lines(capsys.readouterr().out) if "_aws" in line]
    # Only the dead man's switch every run; the counters only when not zero (none here).
    assert [{m["Name"] for d in line["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]} for line in emf] == [{"SweepCompleted"}]
    assert emf[0]["SweepCompleted"] == [1.0] and emf[0]["service"] == "pager"


def test_an_unreadable_state_item_is_logged_and_the_run_reads_like_a_first_run(world, log_lines):
    record = world.store.load(STATE_KEY)
    world.store.save(record, {"v": 2, "cursor": "not a cursor", "remembered": [[1]]})
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    summary = world.sweep()
    assert summary["redeliveries"] == 1 and summary["state"] == "saved"
    assert any(line["message"] == "sweep state unreadable, starting afresh" for line in log_lines())


def test_past_its_deadline_a_run_starts_no_call_and_keeps_the_state(world):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    summary = run_sweep(world.services, now=world.now, run_id="late", seconds=0)
    assert summary["outcome"] == "aborted: failure list: DeadlineExceeded"
    assert world.services.github.calls == 0 and not world.store.load(STATE_KEY).exists


def test_through_the_lambda_handler_a_third_failure_pages_once_in_the_control_repositorys_alarm(make_sweeps):
    world = make_sweeps(through_handler=True)
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issues", "opened", 10)
    for _ in range(3):
        world.advance(15)
        world.sweep()
    assert len(world.attempts(guid)) == 3
    (message,) = world.telegram.chat()
    assert message.text.startswith("⚙️ pager needs you: ") and message.notified
    assert "Codertocat's issue Codertocat/Hello-World#1: Spelling error in the README file: all attempts failed" in message.text
    assert guid not in message.text and 'href="https://github.com/Codertocat/Hello-World/issues/1"' in message.text
    # no Start fix for failed deliveries; ↻ asks GitHub for one more attempt of the newest one
    assert message.buttons == [[{"text": "↻ Codertocat/Hello-World#1",
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


def test_a_run_writes_its_state_once_and_once_more_only_when_the_alarm_changes(world):
    def saves() -> list[str]:
        return [name.removeprefix("save ") for service, name in world.world.faults.log[since:] if service == "store" and name.startswith("save")]

    since = len(world.world.faults.log)
    world.sweep()
    assert saves() == [STATE_KEY]
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issue_comment", "created", 10)
    for _ in range(3):
        world.advance(15)
        since = len(world.world.faults.log)
        summary = world.sweep()
    assert summary["alarm"] == "applied"
    # The state, the alarm's entry and message, the state again.
    assert saves()[0] == STATE_KEY and saves()[-1] == STATE_KEY and saves().count(STATE_KEY) == 2
    assert f"alarm#control [entry:delivery:{guid}]" in saves()
    world.advance(15)
    since = len(world.world.faults.log)
    world.sweep()
    assert saves() == [STATE_KEY]


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


def test_forty_comments_during_a_three_hour_telegram_outage_are_each_shown_afterwards_or_named(world):
    real(world)
    outage = world.world.faults.fail("telegram", None, kind="telegram-5xx", count=10**9)
    comments = []
    for n in range(40):  # one every 4.5 minutes, for three hours, with a sweep every 15 minutes
        guid = f"comment-{n}"
        world.world.deliver("issue_comment", issue_comment_by("alice", comment_id=9000 + n, number=200 + n), guid=guid)
        comments.append(guid)
        world.advance(4.5)
        if n % 3 == 2:
            world.sweep()
    world.world.faults.rules.remove(outage)  # Telegram is back
    for _ in range(16):  # four hours of sweeps
        world.advance(15)
        world.sweep()
    shown = {text for text, _ in world.telegram.view().values()}
    named = world.entries()
    lost = [g for n, g in enumerate(comments)
            if g not in named and not any(f"issuecomment-{9000 + n}" in t for t in shown)]
    assert lost == []
    assert not named or world.alarm_text().startswith("⚙️ pager needs you: ")  # the named ones, said in the chat


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
