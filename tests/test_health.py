"""pager watches itself (pager.sweep.health): its own failures reach the maintainer in the control
repository's alarm, and ↻ delivers again what failed, played in the fake world through the sweep's
lambda_handler with pager's real handlers answering GitHub's deliveries.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support import OWN_MESSAGE, examples, json_lines, make_settings, paced

from pager.observe import metrics
from pager.sweep import health, lease, units
from pager.sweep.deliveries import PAGES_PER_MINUTE, State
from pager.sweep.lists import Attempt, Read, Scan
from pager.values import iso
from pager.waiting import SWEEP_KEY, Waiting
from pager_world.cases import issue_comment_by
from pager_world.world import ALLOWED_USER, CONTROL, REPO

ADVANCED_PAGE = "https://github.com/settings/apps/pager-test/advanced"


def control_message(world):
    """The control repository's alarm as the chat shows it (its newest message): (message id, text, button
    labels and data)."""
    *_, message = [m for m in world.telegram.chat() if m.text.startswith(OWN_MESSAGE)]
    return message.message_id, message.text, [(b["text"], b["callback_data"]) for row in message.buttons for b in row]


def comment(n: int) -> dict:
    return issue_comment_by("alice", comment_id=9000 + n, number=200 + n)


def stored(sweeps, item: str) -> dict:
    """An item of the sweep's key as the table holds it (`health`, `refused-again`, `waiting`, ...)."""
    return sweeps.store.load(SWEEP_KEY, item).data


def press(world, data: str, message_id: int, **kwargs):
    status, body = world.world.update(world.world.press_update(data, message_id=message_id, **kwargs))
    assert status == 200
    return world.telegram.answers[-1][1]


# -- the list not served --------------------------------------------------------------------------------


def test_the_list_refused_with_401_on_two_runs_opens_one_entry_naming_the_cause_and_it_closes_once_served(sweeps):
    sweeps.sweep()
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 401, count=10**6, body={"message": "Bad credentials"})
    sweeps.advance(15)
    first = sweeps.sweep()
    assert first["outcome"] == "aborted: GitHub did not serve the deliveries list (401)" and sweeps.telegram.chat() == []
    sweeps.advance(15)
    sweeps.sweep()
    _, text, buttons = control_message(sweeps)
    assert "GitHub has not served pager its webhook's deliveries since" in text and "GitHub answers 401" in text
    assert "check GITHUB_APP_ID and GITHUB_PRIVATE_KEY" in text and buttons == []
    sweeps.advance(15)
    sweeps.sweep()  # still refused: the entry is open already, the message stays as it is
    assert len(sweeps.telegram.chat()) == 1 and sweeps.telegram.chat()[0].edits == 0

    sweeps.github.heal()
    sweeps.advance(15)
    assert sweeps.sweep()["outcome"] == "done"
    assert control_message(sweeps)[1].startswith("✅ pager is well again after ")


def test_a_duplicate_invocation_of_a_run_github_did_not_serve_counts_once(sweeps):
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 503, count=10**6)
    sweeps.sweep(run_id="scheduled-1")
    sweeps.now += 30  # EventBridge invokes the same run twice
    assert sweeps.sweep(run_id="scheduled-1")["outcome"].startswith("skipped: a duplicate invocation")
    assert stored(sweeps, health.ITEM)["unserved"]["runs"] == 1 and sweeps.telegram.chat() == []
    sweeps.advance(15)
    sweeps.sweep()
    assert "GitHub answers 5xx or not at all" in control_message(sweeps)[1]


def test_the_list_failing_only_for_minutes_pages_nobody_though_the_recovery_check_runs_every_few(sweeps):
    sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=1)
    sweeps.world.deliver("issue_comment", comment(1))  # a failure: the check runs the sweep
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 503, count=2)
    outcomes = []
    for _ in range(12):  # two runs fail, five minutes apart; the third is served
        sweeps.advance(1)
        outcomes.append(sweeps.check()["outcome"])
    assert [o for o in outcomes if not o.startswith("waiting: retry later")] == \
        ["aborted: GitHub did not serve the deliveries list (5xx or no answer)"] * 2 + ["done"] + ["nothing waits"] * 3
    assert all(CONTROL not in m.text for m in sweeps.telegram.chat())  # no page for a few minutes of GitHub
    assert stored(sweeps, health.ITEM)["unserved"]["runs"] == 0  # served again


def test_a_key_that_cannot_sign_is_named_as_such(sweeps):
    client = sweeps.world.services.github
    client._private_key, client._jwt = "not a key", None  # a malformed GITHUB_PRIVATE_KEY
    for _ in range(2):
        sweeps.advance(15)
        assert sweeps.sweep()["outcome"] == "aborted: the app's private key cannot sign a token (GITHUB_PRIVATE_KEY)"
    assert "the app's private key cannot sign a token" in control_message(sweeps)[1]


# -- deliveries refused with 401: the webhook secret differs ---------------------------------------------


def test_deliveries_refused_with_401_open_the_secret_entry_and_after_the_fix_its_button_delivers_them_again(sweeps):
    world = sweeps.world
    world.signing_secret = "rotated at GitHub, not in pager"
    refused = [world.deliver("issue_comment", comment(n))[0] for n in range(25)]
    assert set(refused) == {401} and world.telegram.chat() == []
    sweeps.advance(15)
    sweeps.sweep()
    message_id, text, buttons = control_message(sweeps)
    assert text.splitlines()[0].endswith("pager refuses GitHub's deliveries since Thu 08:00 — fix the webhook secret</a>")
    assert "25 deliveries refused with 401 since Thu 08:00" in text and "GITHUB_WEBHOOK_SECRET differs" in text and buttons == []
    assert press(sweeps, "refused:again", message_id).startswith("⚠️ pager still refuses GitHub's deliveries: fix the webhook")

    world.signing_secret = world.settings.github_webhook_secret  # the maintainer fixes the secret
    assert world.deliver("issue_comment", comment(99))[0] == 200
    sweeps.advance(15)
    sweeps.sweep()
    message_id, text, buttons = control_message(sweeps)
    assert "The webhook secret is fixed — press ↻ Deliver the refused deliveries again" in text.splitlines()[0]
    assert "the webhook secret works again" in text and buttons == [("↻ Deliver the refused deliveries again", "refused:again")]
    assert press(sweeps, "refused:again", message_id, user=7) == "not allowed"
    assert not sweeps.store.load(SWEEP_KEY, health.JOB_ITEM).exists
    answer = press(sweeps, "refused:again", message_id)
    assert answer.startswith("↻ the refused deliveries since 08:") and answer.endswith("over the next minutes")
    assert press(sweeps, "refused:again", message_id).startswith("↻ already delivering them again")

    runs = []
    while stored(sweeps, health.JOB_ITEM).get("finished") is not True:
        sweeps.advance(15)
        runs.append(sweeps.sweep())
        assert len(runs) < 6
    # Pages (comments): at most PAGES_PER_MINUTE a minute, as Telegram takes 20 a minute in a group.
    assert [r["refused_delivered_again"] for r in runs] == paced(25, PAGES_PER_MINUTE)
    assert all(r["calls_used"] <= r["call_budget"] for r in runs)
    guids = [g for g in world.hub.payloads if world.hub.payloads[g][0] == "issue_comment"]
    again = {g: [a["status_code"] for a in world.attempts(g)] for g in guids}
    assert sorted(again.values()) == [[200]] + [[401, 200]] * 25  # each refused one once more, and it passed
    shown = " ".join(m.text for m in world.telegram.chat())
    assert all(f"issuecomment-{9000 + n}" in shown for n in range(25))
    sweeps.advance(15)
    sweeps.sweep()
    assert control_message(sweeps)[1].startswith("✅ pager is well again after ")


def refused_then_fixed(sweeps, count: int, hours: float = 4) -> int:
    """`count` deliveries refused with 401, the secret fixed `hours` later; the alarm's message id."""
    world = sweeps.world
    world.signing_secret = "rotated at GitHub, not in pager"
    for n in range(count):
        assert world.deliver("issue_comment", comment(n), guid=f"refused-{n}")[0] == 401
    sweeps.advance(15)
    sweeps.sweep()
    sweeps.advance(hours * 60)
    world.signing_secret = world.settings.github_webhook_secret
    assert world.deliver("issue_comment", comment(99), guid="fixed")[0] == 200
    sweeps.advance(15)
    sweeps.sweep()
    return control_message(sweeps)[0]


def test_a_refused_delivery_that_fails_again_once_delivered_again_comes_back_or_is_named(sweeps):
    message_id = refused_then_fixed(sweeps, 3)
    assert press(sweeps, "refused:again", message_id).startswith("↻ the refused deliveries")
    outage = sweeps.world.faults.fail("telegram", r"^sendMessage$", kind="telegram-5xx", count=10**9)
    sweeps.advance(15)
    sweeps.sweep()  # the job's redeliveries meet a Telegram outage
    sweeps.world.faults.rules.remove(outage)
    for _ in range(12):
        sweeps.advance(15)
        sweeps.sweep()
    for n in range(3):
        codes = [a["status_code"] for a in sweeps.attempts(f"refused-{n}")]
        assert codes[:2] == [401, 500] and (codes[-1] == 200 or f"refused-{n}" in sweeps.entries()), codes
        assert f"issuecomment-{9000 + n}" in " ".join(m.text for m in sweeps.telegram.chat())


def test_the_checks_carry_the_refused_deliveries_out_paced_a_minute_at_a_time_and_a_second_press_resends_none_of_them(sweeps):
    message_id = refused_then_fixed(sweeps, 25, hours=1)
    press(sweeps, "refused:again", message_id)
    runs = []
    while len(runs) < 10:
        summary = sweeps.check()
        sweeps.advance(1)
        if summary["outcome"] == "nothing waits":
            break
        runs.append(summary)
    assert [r["refused_delivered_again"] for r in runs] == paced(25, PAGES_PER_MINUTE)
    again = [[a["status_code"] for a in sweeps.attempts(f"refused-{n}")] for n in range(25)]
    assert again == [[401, 200]] * 25
    sweeps.advance(15)
    sweeps.sweep()
    assert control_message(sweeps)[1].startswith("✅ pager is well again after ")
    # a stray 401 later (a warm container with the old secret for a moment), then ↻ again: only it
    sweeps.world.signing_secret = "stale"
    sweeps.world.deliver("issue_comment", comment(50), guid="stray")
    sweeps.world.signing_secret = sweeps.world.settings.github_webhook_secret
    sweeps.world.deliver("issue_comment", comment(51))
    sweeps.advance(15)
    sweeps.sweep()
    press(sweeps, "refused:again", control_message(sweeps)[0])
    for _ in range(3):
        sweeps.advance(1)
        sweeps.check()
    assert [len(sweeps.attempts(f"refused-{n}")) for n in range(25)] == [2] * 25
    assert [a["status_code"] for a in sweeps.attempts("stray")] == [401, 200]


# -- refusals the handlers met ----------------------------------------------------------------------------


def test_a_signal_github_refused_is_kept_and_delivered_again_once_the_installation_takes_such_calls(sweeps):
    world = sweeps.world
    needed = dict(world.hub.installation_permissions[1])
    # The owner has not accepted Contents: write yet: GitHub refuses the draft's dispatch with 403.
    world.hub.installation_permissions[1] = {**needed, "contents": "read"}
    status, answer = world.deliver("issue_comment", comment(1), guid="refused-draft")
    assert status == 424 and answer["outcome"] == "refused"  # a 4xx: GitHub keeps it among its failures
    assert world.hub.dispatches == [] and world.attempts("refused-draft")[-1]["status_code"] == 424
    for _ in range(2):  # while the installation lacks the permission, the refused signal is kept, with no ↻
        sweeps.advance(15)
        sweeps.sweep()
        _, text, buttons = control_message(sweeps)
        assert "1 page GitHub refused since" in text and "kept" in text and buttons == []
        assert "the last: alice's comment on Codertocat/Hello-World#201: GitHub refused: Resource not accessible " \
               "by integration" in text

    world.hub.installation_permissions[1] = needed  # the owner accepts the new permissions
    sweeps.advance(15)
    sweeps.sweep()
    message_id, text, buttons = control_message(sweeps)
    assert "GitHub and Telegram take such calls again" in text
    assert buttons == [("↻ Deliver the refused pages again", "refused:pages")]
    assert press(sweeps, "refused:pages", message_id).startswith("↻ the refused pages since")
    while sweeps.check()["outcome"] != "nothing waits":  # the check carries the job out a page a minute
        sweeps.advance(1)
    assert [a["status_code"] for a in world.attempts("refused-draft")] == [424, 200]
    assert [d["event_type"] for d in world.hub.dispatches] == ["pager-draft"]  # what was refused, done once
    sweeps.advance(15)
    sweeps.sweep()
    assert control_message(sweeps)[1].startswith("✅ pager is well again after ")


def test_refusals_written_between_runs_are_each_counted_once_the_entry_is_open(sweeps):
    world = sweeps.world
    world.hub.fail(r"^POST /repos/maintainer/pager/dispatches$", 403, count=10**6, body={"message": "not allowed"})
    world.deliver("issue_comment", comment(1))
    sweeps.advance(15)
    sweeps.sweep()
    sweeps.advance(10)
    for n in range(2, 6):  # four more, minutes before the next run
        world.deliver("issue_comment", comment(n))
    sweeps.advance(5)
    sweeps.sweep()
    assert "5 pages GitHub refused" in control_message(sweeps)[1]


def test_refusals_written_before_a_run_github_did_not_serve_are_counted_by_the_next_run_it_serves(sweeps):
    world = sweeps.world
    world.hub.fail(r"^POST /repos/maintainer/pager/dispatches$", 403, count=10**6, body={"message": "not allowed"})
    world.deliver("issue_comment", comment(1))
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 503)
    sweeps.advance(15)
    assert sweeps.sweep()["outcome"].startswith("aborted: GitHub did not serve the deliveries list")
    world.deliver("issue_comment", comment(2))
    sweeps.advance(15)
    assert sweeps.sweep()["outcome"] == "done"
    assert "2 pages GitHub refused" in control_message(sweeps)[1]  # neither lost with the run that read no list


def test_refused_signals_github_no_longer_keeps_close_their_entry_and_the_chat_is_not_paged_again(sweeps):
    world = sweeps.world
    world.hub.fail(r"^POST /repos/maintainer/pager/dispatches$", 403, count=10**6, body={"message": "not allowed"})
    world.deliver("issue_comment", comment(1))
    sweeps.advance(15)
    sweeps.sweep()
    assert "1 page GitHub refused" in control_message(sweeps)[1]
    sweeps.advance(3 * 24 * 60 + 1)  # GitHub keeps a delivery three days: nothing can deliver it again now
    for _ in range(8):
        sweeps.sweep()
        assert control_message(sweeps)[1].startswith("✅ pager is well again")  # the entry closed, and said so
        sweeps.advance(15)
    assert len(sweeps.telegram.sent) == 2  # the comment's message and the alarm, once


def test_a_telegram_403_on_the_alarm_is_logged_counted_and_stops_no_redelivery(make_sweeps, capsys, log_lines):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = lambda guid, redelivery: 500
    doomed = sweeps.deliver("issue_comment", "created", 10)
    for _ in range(2):
        sweeps.advance(15)
        sweeps.sweep()
    fresh = sweeps.deliver("issue_comment", "created", 11)
    sweeps.telegram.kicked = True  # the bot was removed from the chat
    sweeps.advance(15)
    metrics.clear_metrics()
    capsys.readouterr()
    summary = sweeps.sweep()
    assert summary["redeliveries"] == 1 and sweeps.attempts(fresh)[-1]["redelivery"]
    assert summary["alarm"].startswith("waiting: TelegramRefused: ") and doomed in sweeps.entries()
    [waits] = [line for line in log_lines() if line["message"] == "alarm change not done"]
    assert waits["level"] == "WARNING" and "bot was kicked" in waits["reason"] and waits["fate"] == "refused"
    emf = [line for line in json_lines(capsys.readouterr().out) if "_aws" in line]
    assert [line.get("AlarmNotChanged") for line in emf if "AlarmNotChanged" in line] == [[1.0]]


# -- ↻ Deliver again ---------------------------------------------------------------------------------------


def test_the_deliver_again_press_asks_for_exactly_one_attempt_and_anyone_elses_none(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = lambda guid, redelivery: 500
    guid = sweeps.deliver("issues", "opened", 10)
    for _ in range(3):
        sweeps.advance(15)
        sweeps.sweep()
    message_id, _, [(label, data)] = control_message(sweeps)
    assert label == f"↻ Deliver again: {REPO}#1" and data == f"again:{sweeps.attempts(guid)[-1]['id']}"

    assert press(sweeps, data, message_id, user=7) == "not allowed"
    assert press(sweeps, data, message_id, user=ALLOWED_USER, chat="-1002") == "not allowed"
    sweeps.github.deliver_pending()
    assert len(sweeps.attempts(guid)) == 3

    update = sweeps.world.press_update(data, message_id=message_id, callback_id="the-press")
    assert sweeps.world.update(update)[0] == 200
    assert sweeps.world.update(update)[0] == 200  # Telegram sends the same press again
    assert sweeps.telegram.answers[-1][1] == sweeps.telegram.answers[-2][1] == \
        "↻ GitHub delivers it again; the next sweep shows whether it passed"
    sweeps.github.deliver_pending()
    assert [a["status_code"] for a in sweeps.attempts(guid)] == [500, 500, 500, 500]

    # It failed again: the entry shows the new answer, and ↻ now asks for the newest attempt.
    sweeps.advance(15)
    sweeps.sweep()
    message_id, text, [(label, data)] = control_message(sweeps)
    assert "delivered again, failed again (the last answered 500)" in text and data == f"again:{sweeps.attempts(guid)[-1]['id']}"
    assert label == f"↻ Deliver again: {REPO}#1" and f"{REPO}#1: Spelling error" in text  # still named as the thing it is about
    sweeps.answer = lambda guid, redelivery: 200
    press(sweeps, data, message_id)
    sweeps.github.deliver_pending()
    sweeps.advance(15)
    assert sweeps.sweep()["entries_closed"] == 1
    assert control_message(sweeps)[1].startswith("✅ pager is well again after ")
    assert press(sweeps, data, message_id) == "this delivery is no longer in the alarm"
    sweeps.github.deliver_pending()
    assert len(sweeps.attempts(guid)) == 5


def test_a_deliver_again_button_of_no_delivery_the_alarm_names_asks_for_nothing(sweeps):
    for data in ("again:123", "again:x1", "again:" + "9" * 30):
        assert press(sweeps, data, 1) in ("this delivery is no longer in the alarm", "this button is not known")
    assert not any(r.path.endswith("/attempts") for r in sweeps.github.requests)


# -- the pure parts ---------------------------------------------------------------------------------------


def attempt(n: int, status: int, at: float, guid: str | None = None) -> Attempt:
    return Attempt(id=n, guid=guid or f"g{n}", at=at, redelivery=False, status_code=status, event="issues", action="opened")


def test_the_job_walks_the_failure_list_newest_first_a_few_at_a_time_and_stops_at_its_start():
    job = health.Job(since=1000.0, asked_at=5000.0)
    page1 = [attempt(n, 401 if n % 2 else 502, 4000 - n) for n in range(20, 10, -1)]
    picked, job = health.advance(job, page1, "page-2", room=3)
    assert [a.id for a in picked] == [19, 17, 15] and job.url is None and job.below == 14  # this page again, below 14
    picked, job = health.advance(job, page1, "page-2", room=10)
    assert [a.id for a in picked] == [13, 11] and job.url == "page-2" and job.done == 5
    page2 = [attempt(9, 401, 2000), attempt(8, 401, 1500, guid="g9"), attempt(7, 401, 999)]
    picked, job = health.advance(job, page2, "page-3", room=10)
    assert [a.id for a in picked] == [9] and job.finished and job.done == 6  # g9 once; 7 is older than the start


def served(*attempts: Attempt, refusals=(), **more) -> health.Seen:
    """What a run that GitHub served saw."""
    return health.Seen(served=True, attempts=attempts, refusals=tuple(refusals), **more)


def test_the_health_counts_each_401_once_and_learns_that_the_secret_works_again():
    now = 10_000.0
    h = health.learn(health.Health(), served(attempt(1, 401, 100), attempt(2, 502, 110), attempt(3, 401, 120)), None, now)
    assert (h.secret.count, h.secret.first, h.secret.last, h.secret.works) == (2, 100, 120, False)
    h = health.learn(h, served(attempt(1, 401, 100), attempt(3, 401, 120), attempt(4, 200, 130)), None, now)
    assert (h.secret.count, h.secret.works) == (2, True)  # read again: not counted again; one passed after: it works
    entries = health.wanted(h, None, health.Where("u", now))
    assert entries[health.SECRET]["button"] == "refused" and entries[health.LIST] is None
    again = health.learn(h, served(attempt(5, 401, 140)), None, now)  # a stray 401 after the pass: it waits again
    assert (again.secret.count, again.secret.works) == (3, False)
    assert "button" not in health.wanted(again, None, health.Where("u", now))[health.SECRET]
    finished = health.Job(since=0, asked_at=200, finished=True)
    assert health.learn(h, served(), finished, now).secret.count == 0  # delivered again by a ↻ begun after the last
    late = health.learn(h, served(), None, 120 + 3 * 24 * 3600 + 1)
    assert late.secret.count == 0  # GitHub has forgotten the last of them
    assert health.learn(late, served(attempt(3, 401, 120)), None, 120 + 3 * 24 * 3600 + 2).secret.count == 0  # not again


def test_the_list_not_served_is_said_after_two_runs_and_fourteen_minutes_and_a_run_that_could_not_ask_learns_nothing_of_it():
    now = 50_000.0
    h = health.learn(health.Health(), health.Seen(served=False, cause="401"), None, now)
    assert h.unserved == health.Unserved(1, now, "401") and health.wanted(h, None, health.Where("u", now))[health.LIST] is None
    assert health.learn(h, health.Seen(served=None), None, now + 60) == h  # no call left, or its own deadline
    refusal = ((f"{iso(now + 30)}#a", {"at": now + 30, "reason": "r"}),)  # read from the table all the same: counted
    assert health.learn(h, health.Seen(served=None, refusals=refusal), None, now + 60).refusals.count == 1
    assert health.learn(h, health.Seen(served=False, refusals=refusal), None, now + 60).refusals.count == 1
    h = health.learn(h, health.Seen(served=False, cause="401"), None, now + 300)  # the check's run, minutes later
    assert h.unserved == health.Unserved(2, now, "401") and health.wanted(h, None, health.Where("u", now + 300))[health.LIST] is None
    entry = health.wanted(h, None, health.Where("u", now + health.UNSERVED_SECONDS))[health.LIST]
    assert entry["title"] == "GitHub refuses pager's token since Thu 13:53 — run make doctor"
    assert "GitHub answers 401" in entry["detail"] and entry["url"] == "u"
    assert health.learn(h, served(), None, now + 900).unserved == health.Unserved()  # served again: closes


def test_a_hold_is_said_after_half_an_hour_naming_what_fails():
    now = 80_000.0
    where = health.Where("u", now)
    assert health.wanted(health.Health(), None, where, health.Held(("telegram",), now - 1799))[health.HELD] is None
    entry = health.wanted(health.Health(), None, where, health.Held(("github", "pager"), now - 1800))[health.HELD]
    assert entry["title"] == "pager's own endpoint and GitHub fail since Thu 21:43 — run make doctor"
    assert entry["detail"].startswith("GitHub has failed pager's calls; pager's own endpoint has failed every delivery since")
    assert entry["detail"].endswith("once it answers (make doctor)")  # pager's own endpoint: doctor checks it
    other = health.wanted(health.Health(), None, where, health.Held(("redelivery",), now - 1800))[health.HELD]
    assert other["title"] == "GitHub's redelivery fails since Thu 21:43 — nothing to do, pager waits"
    assert other["detail"].startswith("GitHub has failed to deliver events again since")
    assert other["detail"].endswith("once it answers")  # GitHub's outage: nothing of pager's to check
    assert health.wanted(health.Health(), None, where, health.Held(("any",), now - 7200))[health.HELD] is None  # "any" holds nothing


def test_a_hold_for_the_wait_githubs_rate_limit_named_is_said_only_half_an_hour_past_that_wait():
    """pager waiting as GitHub's secondary limit asks (retry-after) is nothing the maintainer must know: a drain
    GitHub paces for hours is not said each hour; a hold that outlasts the named wait by half an hour is."""
    now = 80_000.0
    where = health.Where("u", now)
    waiting = health.Held(("redelivery",), now - 3000, named_until=now - 1000)
    assert health.wanted(health.Health(), None, where, waiting)[health.HELD] is None
    assert health.wanted(health.Health(), None, health.Where("u", now + 799), waiting)[health.HELD] is None
    late = health.wanted(health.Health(), None, health.Where("u", now + 800), waiting)[health.HELD]
    assert late["title"] == "GitHub's redelivery fails since Thu 21:23 — nothing to do, pager waits"  # since the hold began


def test_forgotten_entries_are_counted_by_thing_with_the_unread_span_and_start_anew_three_days_after_the_last():
    now = 300_000.0
    gone = ({"event": "issues", "repository": "o/r", "order": iso(now - 3 * 24 * 3600 - 60)},
            {"event": "issues", "repository": "o/r", "order": iso(now - 3 * 24 * 3600 - 30)},
            {"thing": "alice's comment on o/r#4", "order": iso(now - 3 * 24 * 3600 - 10)})
    h = health.learn(health.Health(), served(forgotten=gone, unread=(now - 7200, now - 3600)), None, now)
    assert (h.forgotten.count, sorted(h.forgotten.by.values())) == (3, [1, 2]) and h.forgotten.unread == (now - 7200, now - 3600)
    entry = health.wanted(h, None, health.Where("u", now))[health.FORGOTTEN]
    assert entry["title"] == "3 events never reached pager and are gone from GitHub — see which below"
    detail = entry["detail"]
    assert detail.startswith("3 events failed between") and "(2 times)" in detail and "alice's comment on o/r#4" in detail
    assert "which pager never read" in detail
    unread = health.learn(health.Health(), served(unread=(now - 7200, now - 3600)), None, now)
    assert health.wanted(unread, None, health.Where("u", now))[health.FORGOTTEN]["title"] == \
        "Events between Sun 09:20 and Sun 10:20 may be lost — check GitHub for them"
    later = health.learn(h, served(), None, now + 3 * 24 * 3600 + 1)
    assert later.forgotten == health.Forgotten() and health.wanted(later, None, health.Where("u", now))[health.FORGOTTEN] is None


def test_refusals_read_again_in_the_overlap_are_counted_once():
    now = 50_000.0
    first = [(f"{iso(now - 30)}#a", {"at": now - 30, "reason": "r1"}), (f"{iso(now - 10)}#b", {"at": now - 10, "reason": "r2"})]
    h = health.learn(health.Health(), served(refusals=first), None, now)
    assert (h.refusals.count, h.refusals.reason) == (2, "r2")
    assert health.refusals_after(now, now + 900) == iso(now - health.REFUSALS_OVERLAP_SECONDS)  # from the last run
    assert health.refusals_after(None, now) == iso(now - health.REFUSALS_FIRST_READ_SECONDS)  # a first run: the last day
    h = health.learn(h, served(refusals=first[1:] + [(f"{iso(now + 5)}#c", {"at": now + 5, "reason": "r3"})]), None, now + 20)
    assert (h.refusals.count, h.refusals.reason) == (3, "r3")


def test_the_health_and_the_job_keep_through_their_items():
    h = health.Health(unserved=health.Unserved(2, 5.0, "x"), secret=health.Refused(count=3, first=1.0, last=2.0, last_id=9),
                      refusals=health.Refused(count=1, services=("github", "telegram"), repository="o/r"),
                      forgotten=health.Forgotten(count=1, by={"issues of o/r": 1}, unread=(1.0, 2.0)), refusals_seen=("a", "b"))
    assert health.Health.from_data(json.loads(json.dumps(h.to_data()))) == h  # as the table gives it back: lists
    assert health.Health.from_data(None) == health.Health() == health.Health.from_data({})
    assert health.Health.from_data({"unserved": 2, "secret_count": 3}) == health.Health()  # an older shape: afresh
    job = health.Job(since=1.0, asked_at=2.0, url="u", below=7, done=3, recent=("g",), status=health.PAGE_REFUSED)
    assert health.Job.from_data(json.loads(json.dumps(job.to_data()))) == job and health.Job.from_data({}) is None


def test_the_plan_picks_the_refused_within_its_room_none_asked_already_and_none_while_they_would_be_refused():
    now = 10_000.0
    refused = [attempt(n, 401, 5000 + n) for n in range(1, 8)]
    known = health.learn(health.Health(), served(*refused, attempt(9, 200, 6000)), None, now)
    job = health.Job(since=4000.0, asked_at=now - 60)
    page = health.JobPage(tuple(refused), None)
    where = health.Where("u", now)
    out = health.plan(known, health.Seen(served=True), job, page, {}, where, room=3, asked=frozenset({"g7"}))
    assert [a.id for a in out.picks] == [6, 5, 4] and out.job_pending and out.job.done == 3  # newest first, not g7
    assert [a.why for a in out.asks] == ["refused"] * 3
    assert health.plan(known, health.Seen(served=True), job, page, {}, where, room=0).picks == ()
    waiting = health.learn(known, served(attempt(10, 401, 6100)), None, now)  # refused again since: not yet
    out = health.plan(waiting, health.Seen(served=True), job, page, {}, where, room=3)
    assert out.picks == () and not out.job_pending and out.job == job
    assert out.opened[health.SECRET]["detail"].startswith("8 deliveries refused with 401 since")


# -- the run's plan: the three units share one minute --------------------------------------------------------

NOW = 1_800_000_000.0


def gathered(failed: int, paging: int, refused: int, entries: int, *, again_all: bool, works: bool,
             held: bool = False, served: bool = True) -> units.Gathered:
    """What a run gathered: `failed` events to ask for again (the first `paging` of them pages), a ↻ job of
    `refused` deliveries refused with 401 with its next page, `entries` failed deliveries in the alarm for ↻ all."""
    kinds = [("issue_comment", "created") if n < paging else ("workflow_run", "completed") for n in range(failed)]
    failures = [Attempt(1000 + n, f"f{n}", NOW - 600 + n, False, 502, event, action, 1) for n, (event, action) in enumerate(kinds)]
    passed = Attempt(2000, "p", NOW - 60, False, 200, "workflow_run", "completed", 1)  # pager answers: no hold of its own
    every = Read(tuple([*failures, passed]), Scan(top=2000, top_at=NOW - 60), 1, "end")
    page = tuple(Attempt(500 + n, f"r{n}", NOW - 3000 - n, False, 401, "issues", "opened", 1) for n in range(refused))
    shown = {f"delivery:e{n}": {"state": "open", "title": "t", "order": iso(NOW - 7200 - n), "delivery_id": 100 + n}
             for n in range(entries)}
    # the secret works again: a delivery passed after the newest 401 (the one this run read, or an earlier one)
    newest_401 = 600 if works else 3000
    own = health.Health(secret=health.Refused(count=refused, first=NOW - 4000, last=NOW - 3000, last_id=newest_401, works=works))
    return units.Gathered(
        state=State(), every=every if served else None, failures=None, not_served=None if served else "", shown=shown,
        refusals=(), refusers_answer=False, job=health.Job(since=NOW - 5000, asked_at=NOW - 100),
        job_page=health.JobPage(page, None), again_all=again_all, moved=None,
        waiting=Waiting(("telegram",), NOW - 600) if held else None, health=own)


@hypothesis_settings(max_examples=examples(150))
@given(failed=st.integers(0, 60), paging=st.integers(0, 60), refused=st.integers(0, 30), entries=st.integers(0, 30),
       per_minute=st.integers(1, 45), again_all=st.booleans(), works=st.booleans(), held=st.booleans(), served=st.booleans())
def test_the_decisions_asks_the_jobs_picks_and_all_again_share_one_minutes_pace_and_the_runs_reserve(
        failed, paging, refused, entries, per_minute, again_all, works, held, served):
    settings = make_settings(sweep_max_redeliveries=per_minute)
    g = gathered(failed, min(paging, failed), refused, entries, again_all=again_all, works=works, held=held, served=served)
    out = units.plan(g, units.Planning(settings, NOW))
    asks, picks, again = out.deliveries.ask, out.health.picks, out.again_all
    assert len(asks) + len(picks) + len(again) <= per_minute
    pages_asked = sum(1 for a in asks if a.guid in {f"f{n}" for n in range(min(paging, failed))})
    assert pages_asked + len(picks) + len(again) <= PAGES_PER_MINUTE  # ↻'s are counted as pages: Telegram's 20 a minute
    assert len(out.effects) <= per_minute + 1  # what gather keeps of the budget for them: the minute's asks, the alarm
    assert not (held or not served) or not (asks or picks or again)  # a hold, or no list read: nothing asked for
    assert not picks or works  # nothing refused asked for while it would be refused again
    assert not again or again_all
    guids = [a.guid for a in asks] + [a.guid for a in picks]
    assert len(guids) == len(set(guids))  # no event asked for twice in a minute
    asked = {r.guid for r in out.deliveries.state.followed if r.asked and r.due == NOW}
    assert {a.guid for a in picks} <= asked  # each pick followed from now on, and awaited


def test_the_decision_asks_first_then_the_job_picks_then_all_again_takes_what_the_minute_leaves():
    out = units.plan(gathered(failed=4, paging=0, refused=5, entries=6, again_all=True, works=True),
                     units.Planning(make_settings(sweep_max_redeliveries=10), NOW))
    assert (len(out.deliveries.ask), len(out.health.picks), len(out.again_all)) == (4, 5, 1)
    assert out.again_all_pending and out.health.job.done == 5 and out.health.job_pending is False  # the job's page is done
    assert out.waiting is not None and out.waiting.services == ("any",)  # the check sweeps each minute until ↻ all is


def test_pagers_own_entries_offer_no_fix_and_come_first():
    from datetime import UTC

    from pager.signals.alarm import CONTROL as CONTROL_REF
    from pager.signals.alarm import Alarm, View, render

    entries = {
        "workflow:1": {"title": "ci: failure", "url": "https://x", "rank": 0, "at": 1},
        "pager:secret": {"title": "The webhook secret is fixed", "detail": "3 deliveries refused", "url": "", "rank": 0,
                         "at": 2, "button": "refused"},
        "delivery:g": {"title": "pager missed an issue in o/r", "detail": "an issue in o/r: all attempts failed", "url": "",
                       "rank": 1, "at": 3, "delivery_id": 5, "short": "o/r#7"},
    }
    view = View(since=0.0, now=0.0, zone=UTC)
    own = {k: v for k, v in entries.items() if k != "workflow:1"}
    text, buttons = render(Alarm(CONTROL_REF, CONTROL), own, view)  # pager's own: first, and no fix
    assert text.splitlines()[:2] == ["⚙️ The webhook secret is fixed", "since Thu 00:00 · 1 more below"]
    assert text.index("3 deliveries refused") < text.index("an issue in o/r: all attempts failed")  # the details below
    assert buttons == [[("↻ Deliver the refused deliveries again", "refused:again")], [("↻ Deliver again: o/r#7", "again:5")]]
    text, buttons = render(Alarm("186853002", REPO), {"workflow:1": entries["workflow:1"]}, view)
    assert buttons == [[("🛠 Start fix", "fix:186853002"), ("👀 Seen", "seen:186853002")], [(f"🔕 Mute {REPO} 8 h", "mute:a:186853002")]]


def test_a_refused_delivery_github_failed_to_take_again_is_picked_again_not_dropped(sweeps):
    message_id = refused_then_fixed(sweeps, 1, hours=1)
    press(sweeps, "refused:again", message_id)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502)
    assert sweeps.check()["refused_delivered_again"] == 0
    while sweeps.check()["outcome"] != "nothing waits":
        sweeps.advance(1)
    assert [a["status_code"] for a in sweeps.attempts("refused-0")] == [401, 200]


@pytest.mark.parametrize("later", [5, lease.RUN_SECONDS + 5], ids=["lease held", "lease lapsed"])
def test_two_overlapping_runs_pick_a_refused_delivery_once(sweeps, later):
    from pager.sweep import run_sweep

    message_id = refused_then_fixed(sweeps, 1, hours=1)
    press(sweeps, "refused:again", message_id)
    client, posts, overlap = sweeps.services.github, [], []
    ask = client.redeliver

    def redeliver(delivery_id):  # run B begins while run A asks GitHub, after A's commit
        posts.append(delivery_id)
        if not overlap:
            overlap.append(run_sweep(sweeps.services, now=sweeps.now + later, run_id="B"))
        return ask(delivery_id)

    client.redeliver = redeliver
    run_sweep(sweeps.services, now=sweeps.now, run_id="A")
    sweeps.github.deliver_pending()
    # B steps aside while A holds the lease; past it (A stuck longer than its deadline), B finds the pick
    # committed by A before A asked
    assert len(posts) == 1 and overlap[0].get("refused_delivered_again", 0) == 0
    assert overlap[0]["outcome"].startswith("skipped") == (later < lease.RUN_SECONDS)
    assert [a["status_code"] for a in sweeps.attempts("refused-0")] == [401, 200]


def test_at_the_least_budget_a_job_under_way_leaves_the_run_the_call_for_its_list_and_still_moves(make_sweeps):
    # a page of the deliveries, a minute's redeliveries, the alarm's change, five names, four for pager's own health
    sweeps = make_sweeps(through_handler=True, sweep_call_budget=1 + 10 + 1 + 5 + 4, sweep_max_redeliveries=10)
    sweeps.answer = None
    press(sweeps, "refused:again", refused_then_fixed(sweeps, 1, hours=1))
    sweeps.world.faults.fail("telegram", r"^sendMessage$", kind="telegram-5xx")
    assert sweeps.world.deliver("issue_comment", comment(70), guid="failed")[0] == 500
    runs = [s for s in sweeps.minutes(3) if "pages" in s]
    assert runs and all(s["outcome"] == "done" for s in runs)
    assert [a["status_code"] for a in sweeps.attempts("failed")] == [500, 200]
    assert [a["status_code"] for a in sweeps.attempts("refused-0")] == [401, 200]  # the job's page had its call


def test_a_job_waiting_for_the_secret_does_not_keep_the_check_sweeping(sweeps):
    message_id = refused_then_fixed(sweeps, 2, hours=1)
    press(sweeps, "refused:again", message_id)
    sweeps.world.signing_secret = "stale again"  # a stray 401 before the job began: it waits
    sweeps.world.deliver("issue_comment", comment(60))
    sweeps.advance(1)
    first = sweeps.check()
    assert first["refused_job"] == "waiting for the secret" and first["recovery"].startswith("recovered")
    sweeps.advance(1)
    assert sweeps.check()["outcome"] == "nothing waits"
