"""pager watches itself (pager.sweep.health): its own failures reach the maintainer in the control
repository's alarm, and ↻ delivers again what failed, played in the fake world through the sweep's
lambda_handler with pager's real handlers answering GitHub's deliveries.
"""

from __future__ import annotations

from support import json_lines

from pager.observe import metrics
from pager.sweep import health
from pager.sweep.plan import Attempt
from pager.sweep.run import STATE_KEY
from pager.values import iso
from pager_world.cases import issue_comment_by
from pager_world.world import ALLOWED_USER, CONTROL, REPO

ADVANCED_PAGE = "https://github.com/settings/apps/pager-test/advanced"


def control_message(world):
    """The control repository's alarm as the chat shows it (its newest message): (message id, text, button
    labels and data)."""
    *_, message = [m for m in world.telegram.chat() if m.text.startswith(("⚙️ pager", "✅ pager"))]
    return message.message_id, message.text, [(b["text"], b["callback_data"]) for row in message.buttons for b in row]


def comment(n: int) -> dict:
    return issue_comment_by("alice", comment_id=9000 + n, number=200 + n)


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
    assert first["outcome"] == "aborted: failure list: GitHubRefused" and sweeps.telegram.chat() == []
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
    assert sweeps.store.load(STATE_KEY).data["health"]["unserved"] == 1 and sweeps.telegram.chat() == []
    sweeps.advance(15)
    sweeps.sweep()
    assert "GitHub answers 5xx or not at all" in control_message(sweeps)[1]


def test_the_list_failing_only_for_minutes_pages_nobody_though_the_recovery_check_runs_every_few(sweeps):
    sweeps.world.faults.fail("telegram", None, kind="telegram-5xx", count=1)
    sweeps.world.deliver("issue_comment", comment(1))  # a failure: the check runs the sweep
    sweeps.github.fail(r"^GET /app/hook/deliveries$", 503, count=2)
    for _ in range(12):  # two runs fail, five minutes apart; the third is served
        sweeps.advance(1)
        sweeps.check()
    assert all(CONTROL not in m.text for m in sweeps.telegram.chat())  # no page for a few minutes of GitHub
    assert sweeps.store.load(STATE_KEY).data["health"].get("unserved", 0) == 0  # served again


def test_a_key_that_cannot_sign_is_named_as_such(sweeps):
    client = sweeps.world.services.github
    client._private_key, client._signing_key, client._jwt = "not a key", None, None  # a malformed GITHUB_PRIVATE_KEY
    for _ in range(2):
        sweeps.advance(15)
        assert sweeps.sweep()["outcome"] == "aborted: failure list: ConfigError"
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
    assert "25 deliveries refused since Thu 08:00" in text and "GITHUB_WEBHOOK_SECRET differs" in text and buttons == []
    assert press(sweeps, "refused:again", message_id).startswith("⚠️ GitHub's deliveries are still refused with 401")

    world.signing_secret = world.settings.github_webhook_secret  # the maintainer fixes the secret
    assert world.deliver("issue_comment", comment(99))[0] == 200
    sweeps.advance(15)
    sweeps.sweep()
    message_id, text, buttons = control_message(sweeps)
    assert "the webhook secret works again" in text and buttons == [("↻ Deliver the refused again", "refused:again")]
    assert press(sweeps, "refused:again", message_id, user=7) == "not allowed"
    assert not sweeps.store.load(health.JOB_KEY).exists
    answer = press(sweeps, "refused:again", message_id)
    assert answer.startswith("↻ the deliveries refused with 401 since 08:") and answer.endswith("over the next minutes")
    assert press(sweeps, "refused:again", message_id).startswith("↻ already delivering them again")

    runs = []
    while sweeps.store.load(health.JOB_KEY).data.get("finished") is not True:
        sweeps.advance(15)
        runs.append(sweeps.sweep())
        assert len(runs) < 6
    assert [r["refused_delivered_again"] for r in runs] == [10, 10, 5]  # at most ten redeliveries a run
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
    assert press(sweeps, "refused:again", message_id).startswith("↻ the deliveries refused")
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


def test_the_checks_carry_the_refused_deliveries_out_a_page_a_minute_and_a_second_press_resends_none_of_them(sweeps):
    message_id = refused_then_fixed(sweeps, 25, hours=1)
    press(sweeps, "refused:again", message_id)
    runs = []
    while len(runs) < 6:
        summary = sweeps.check()
        sweeps.advance(1)
        if summary["outcome"] == "nothing waits":
            break
        runs.append(summary)
    assert [r["refused_delivered_again"] for r in runs[:3]] == [10, 10, 5]
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
        assert "1 page GitHub or Telegram refused since" in text and "kept" in text and buttons == []
        assert "GitHub refused (403): Resource not accessible by integration (alice's comment on " \
               "Codertocat/Hello-World#201)" in text

    world.hub.installation_permissions[1] = needed  # the owner accepts the new permissions
    sweeps.advance(15)
    sweeps.sweep()
    message_id, text, buttons = control_message(sweeps)
    assert "GitHub and Telegram take such calls again" in text
    assert buttons == [("↻ Deliver the refused pages again", "refused:pages")]
    assert press(sweeps, "refused:pages", message_id).startswith("↻ the refused signals since")
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
    assert "5 pages GitHub or Telegram refused" in control_message(sweeps)[1]


def test_refused_signals_github_no_longer_keeps_close_their_entry_and_the_chat_is_not_paged_again(sweeps):
    world = sweeps.world
    world.hub.fail(r"^POST /repos/maintainer/pager/dispatches$", 403, count=10**6, body={"message": "not allowed"})
    world.deliver("issue_comment", comment(1))
    sweeps.advance(15)
    sweeps.sweep()
    assert "1 page GitHub or Telegram refused" in control_message(sweeps)[1]
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
    assert summary["alarm"] == "waiting: TelegramRefused" and doomed in sweeps.entries()
    [waits] = [line for line in log_lines() if line["message"] == "sweep alarm waits"]
    assert waits["level"] == "WARNING" and "bot was kicked" in waits["reason"]
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
    assert label == f"↻ {REPO}#1" and data == f"again:{sweeps.attempts(guid)[-1]['id']}"

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
    assert label == f"↻ {REPO}#1" and f"{REPO}#1: Spelling error" in text  # still named as the thing it is about
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


def test_the_health_counts_each_401_once_and_learns_that_the_secret_works_again():
    now = 10_000.0
    h = health.served(health.Health(), failures=[attempt(1, 401, 100), attempt(2, 502, 110), attempt(3, 401, 120)],
                      outcomes=[], refusals=[], job=None, now=now)
    assert (h.secret_count, h.secret_first, h.secret_last, h.secret_works) == (2, 100, 120, False)
    h = health.served(h, failures=[attempt(1, 401, 100), attempt(3, 401, 120)], outcomes=[attempt(4, 200, 130)],
                      refusals=[], job=None, now=now)
    assert (h.secret_count, h.secret_works) == (2, True)
    entries = health.wanted(h, None, now=now, url="u")
    assert entries[health.SECRET]["button"] == "refused" and entries[health.LIST] is None
    finished = health.Job(since=0, asked_at=200, finished=True)
    assert health.served(h, failures=[], outcomes=[], refusals=[], job=finished, now=now).secret_count == 0
    late = health.served(h, failures=[], outcomes=[], refusals=[], job=None, now=120 + 3 * 24 * 3600 + 1)
    assert late.secret_count == 0  # GitHub has forgotten the last of them


def test_refusals_read_again_in_the_overlap_are_counted_once():
    now = 50_000.0
    first = [(f"{iso(now - 30)}#a", {"at": now - 30, "reason": "r1"}), (f"{iso(now - 10)}#b", {"at": now - 10, "reason": "r2"})]
    h = health.served(health.Health(), failures=[], outcomes=[], refusals=first, job=None, now=now)
    assert (h.refusals_count, h.refusals_reason) == (2, "r2")
    assert health.refusals_after(h, now + 900) == iso(now - health.REFUSALS_OVERLAP_SECONDS)  # from the last read
    h = health.served(h, failures=[], outcomes=[], refusals=first[1:] + [(f"{iso(now + 5)}#c", {"at": now + 5, "reason": "r3"})],
                      job=None, now=now + 20)
    assert (h.refusals_count, h.refusals_reason) == (3, "r3")


def test_the_state_keeps_the_health_through_a_round_trip():
    h = health.Health(unserved=2, unserved_cause="x", secret_count=3, refusals_seen=("a", "b"))
    assert health.Health.from_data(h.to_data()) == h
    assert health.Health().to_data() == {} and health.Health.from_data(None) == health.Health()
    job = health.Job(since=1.0, asked_at=2.0, url="u", below=7, done=3, recent=("g",))
    assert health.Job.from_data(job.to_data()) == job and health.Job.from_data({}) is None


def test_pagers_own_entries_offer_no_fix_and_come_first():
    from datetime import UTC

    from pager.signals.alarm import CONTROL as CONTROL_REF
    from pager.signals.alarm import Alarm, View, render

    entries = {
        "workflow:1": {"title": "ci: failure", "url": "https://x", "rank": 0, "at": 1},
        "pager:secret": {"title": "3 deliveries refused", "url": "", "rank": 0, "at": 2, "button": "refused"},
        "delivery:g": {"title": "issues.opened of o/r: all attempts failed", "url": "", "rank": 1, "at": 3, "delivery_id": 5,
                       "short": "o/r#7"},
    }
    view = View(since=0.0, now=0.0, zone=UTC)
    own = {k: v for k, v in entries.items() if k != "workflow:1"}
    text, buttons = render(Alarm(CONTROL_REF, CONTROL), own, view)  # pager's own: first, and no fix
    assert text.startswith("⚙️ pager needs you: 3 deliveries refused, and 1 more")
    assert text.index("3 deliveries refused") < text.index("issues.opened")
    assert buttons == [[("↻ Deliver the refused again", "refused:again")], [("↻ o/r#7", "again:5")]]
    text, buttons = render(Alarm("186853002", REPO), {"workflow:1": entries["workflow:1"]}, view)
    assert buttons == [[("🛠 Start fix", "fix:186853002")], [("🔕 Mute for 8 h", "mute:a:186853002")]]


def test_a_refused_delivery_github_failed_to_take_again_is_picked_again_not_dropped(sweeps):
    message_id = refused_then_fixed(sweeps, 1, hours=1)
    press(sweeps, "refused:again", message_id)
    sweeps.github.fail(r"^POST /app/hook/deliveries/\d+/attempts$", 502)
    assert sweeps.check()["refused_delivered_again"] == 0
    while sweeps.check()["outcome"] != "nothing waits":
        sweeps.advance(1)
    assert [a["status_code"] for a in sweeps.attempts("refused-0")] == [401, 200]


def test_two_overlapping_runs_pick_a_refused_delivery_once(sweeps):
    from pager.sweep import run_sweep

    message_id = refused_then_fixed(sweeps, 1, hours=1)
    press(sweeps, "refused:again", message_id)
    client, posts, overlap = sweeps.services.github, [], []
    ask = client.redeliver

    def redeliver(delivery_id):  # run B begins while run A asks GitHub, after A's commit
        posts.append(delivery_id)
        if not overlap:
            overlap.append(run_sweep(sweeps.services, now=sweeps.now + 5, run_id="B"))
        return ask(delivery_id)

    client.redeliver = redeliver
    run_sweep(sweeps.services, now=sweeps.now, run_id="A")
    sweeps.github.deliver_pending()
    assert len(posts) == 1 and overlap[0]["refused_delivered_again"] == 0
    assert [a["status_code"] for a in sweeps.attempts("refused-0")] == [401, 200]


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
