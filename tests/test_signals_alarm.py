"""Alarm signal (docs/signals.md), end to end through the webhook, through `update_alarm` (the sweep's
entry point), and on its pure decisions.

Driven through `Harness` (real webhook endpoint and clients, fake chat and GitHub behind
`responses`, MemoryStore): one message per repository, edits as entries open and close, all clear,
a new message for the next failure, Start fix once, stale payloads, racing deliveries, and a
failure at every external call.
"""

from __future__ import annotations

import json
from datetime import UTC

import pytest

from pager.errors import Transient
from pager.signals import alarm
from pager.signals.alarm import decide_entry, render, update_alarm
from pager_world.cases import FIX_RUN_URL, alert, delivery_entry, fix_run, live_alert, run, suite
from pager_world.matrix import Scenario, delivering, failure_matrix
from pager_world.payloads import payload
from pager_world.world import CONTROL, CONTROL_ALARM, REPO, REPO_ID

KEY = f"alarm#{REPO_ID}"





def only_message(h):
    [(message_id, shown)] = h.chat.view().items()
    return message_id, shown


def saves(h, since: int) -> list[str]:
    return [name for service, name in h.faults.log[since:] if service == "store" and name.startswith("save")]


# -- opening, editing, clearing -----------------------------------------------------------------------


def test_a_failing_run_on_the_default_branch_opens_the_alarm_with_start_fix(world):
    status, answer = world.deliver("workflow_run", run("failure"))
    assert (status, answer["outcome"]) == (200, "alarm opened")
    _, (text, buttons) = only_message(world)
    assert text.splitlines()[0] == (f'🚨 <a href="https://github.com/{REPO}">{REPO}</a> is red on master: '
                                    f'<a href="https://github.com/{REPO}/actions/runs/28235251631">test run #163 failed</a>')
    assert text.splitlines()[1] == "since Fri 08:00" and len(text.splitlines()) == 2  # one entry: the headline says it
    assert buttons == (("🛠 Start fix", "👀 Seen"), (f"🔕 Mute {REPO} 8 h",))
    assert world.chat.messages[max(world.chat.messages)].notified is False  # within its grace: it may be a flake


def test_a_second_failing_workflow_edits_the_same_message(world):
    world.deliver("workflow_run", run("failure"))
    assert world.deliver("workflow_run", run("timed_out", workflow_id=9, name="lint"))[1]["outcome"] == "alarm updated"
    _, (text, _) = only_message(world)
    assert "test run #163 failed" in text and "lint run #163 timed out" in text


def test_the_last_entry_closing_says_all_clear_without_buttons_and_the_next_failure_sends_a_new_message(world):
    world.deliver("workflow_run", run("failure"))
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))
    assert world.deliver("workflow_run", run("success", number=164))[1]["outcome"] == "alarm updated"
    assert world.deliver("workflow_run", run("success", workflow_id=9, number=164))[1]["outcome"] == "all clear"
    first, (text, buttons) = only_message(world)
    assert text.splitlines()[0] == f'✅ <a href="https://github.com/{REPO}">{REPO}</a> is green again on master after 0 s'
    assert "<s>" in text and "test run #163 failed" in text and "lint run #163 failed" in text and buttons is None
    assert world.deliver("workflow_run", run("failure", number=165))[1]["outcome"] == "alarm opened"
    assert len(world.chat.sent) == 2 and max(world.chat.messages) != first


def test_a_rerun_that_passes_closes_the_entry(world):
    world.deliver("workflow_run", run("failure", attempt=1))
    assert world.deliver("workflow_run", run("success", attempt=2))[1]["outcome"] == "all clear"


@pytest.mark.parametrize("conclusion", ["cancelled", "skipped", "neutral", "action_required"])
def test_other_conclusions_change_nothing(world, conclusion):
    world.deliver("workflow_run", run("failure"))
    before = world.store.dump()
    assert world.deliver("workflow_run", run(conclusion, number=164))[1]["outcome"] == f"ignored: conclusion {conclusion}"
    assert world.store.dump() == before


def test_runs_off_the_default_branch_or_from_a_fork_are_ignored(world):
    assert world.deliver("workflow_run", run("failure", branch="feature"))[1]["outcome"] == "ignored: not the default branch"
    forked = run("failure", **{"workflow_run.head_repository.full_name": "someone/fork"})
    assert world.deliver("workflow_run", forked)[1]["outcome"] == "ignored: a fork's branch"
    assert world.chat.view() == {} and world.store.dump() == {}


def test_a_success_with_nothing_open_remembers_its_order_and_shows_nothing(world):
    assert world.deliver("workflow_run", run("success"))[1]["outcome"] == "alarm unchanged"
    assert world.store.dump() == {f"{KEY} [entry:workflow:2823525]": {"state": "closed", "order": "000000000163.0001", "at": world.now}}
    assert world.chat.view() == {}
    since = len(world.faults.log)
    assert world.deliver("workflow_run", run("success"))[1]["outcome"] == "alarm unchanged"
    assert saves(world, since) == []


def test_an_event_that_changes_no_entry_writes_nothing(world):
    world.deliver("workflow_run", run("failure"))
    since = len(world.faults.log)
    assert world.deliver("workflow_run", run("failure"))[1]["outcome"] == "alarm unchanged"
    assert saves(world, since) == []


def test_a_deleted_alarm_message_is_sent_anew_on_the_next_change(world):
    world.deliver("workflow_run", run("failure"))
    world.chat.delete(max(world.chat.messages))
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))
    _, (text, _) = only_message(world)
    assert "lint run #163 failed" in text and "test run #163 failed" in text


# -- late -------------------------------------------------------------------------------------------


def test_a_stale_failure_does_not_reopen_the_alarm(world):
    world.deliver("workflow_run", run("failure", attempt=1))
    world.deliver("workflow_run", run("success", attempt=2))
    effects = world.effects()
    before = world.store.dump()
    # GitHub delivers the failure of the first attempt again, 40 minutes late.
    assert world.deliver("workflow_run", run("failure", attempt=1))[1]["outcome"] == "alarm unchanged"
    assert world.effects() == effects and world.store.dump() == before
    _, (text, _) = only_message(world)
    assert "is green again" in text


def test_a_stale_success_does_not_close_a_newer_failure(world):
    world.deliver("workflow_run", run("failure", number=170))
    assert world.deliver("workflow_run", run("success", number=169))[1]["outcome"] == "alarm unchanged"
    _, (text, _) = only_message(world)
    assert "run #170" in text


def test_an_older_failure_does_not_replace_the_newer_one_shown(world):
    world.deliver("workflow_run", run("failure", number=170))
    assert world.deliver("workflow_run", run("failure", number=168))[1]["outcome"] == "alarm unchanged"
    assert "run #170" in only_message(world)[1][0]


# -- check suites and code scanning -----------------------------------------------------------------


def test_a_failing_check_suite_of_another_app_opens_its_entry_and_success_closes_it(world):
    # check_suite has two handlers (the alarm's and the release's); the webhook joins their outcomes.
    assert world.deliver("check_suite", suite("failure"))[1]["outcome"] == "alarm opened; ignored: not a release branch"
    assert "octocoders-linter failed on ec26c3e" in only_message(world)[1][0]
    assert world.store.dump()[f"{KEY} [entry:suite:octocoders-linter]"]["state"] == "open"
    later = suite("success", updated_at="2019-05-15T16:00:00Z")
    assert world.deliver("check_suite", later)[1]["outcome"].startswith("all clear; ")


def test_github_actions_check_suites_are_left_to_the_workflow_runs(world):
    answer = world.deliver("check_suite", suite("failure", slug="github-actions"))[1]["outcome"]
    assert answer.startswith("ignored: GitHub Actions")


def test_a_code_scanning_alert_on_the_default_branch_opens_and_its_fix_closes(world):
    opened = alert("created", **{"ref": "refs/heads/master"})
    assert world.deliver("code_scanning_alert", opened)[1]["outcome"] == "alarm opened"
    text = only_message(world)[1][0]
    assert "Code scanning alert #10: Query built from user-controlled sources (error)" in text
    fixed = alert("fixed", **{"ref": "refs/heads/master"})
    assert world.deliver("code_scanning_alert", fixed)[1]["outcome"] == "all clear"


def test_a_code_scanning_alert_elsewhere_is_ignored_and_a_dismissal_closes(world):
    assert world.deliver("code_scanning_alert", alert("created"))[1]["outcome"] == "ignored: not the default branch"
    world.deliver("code_scanning_alert", alert("appeared_in_branch", "created", **{"ref": "refs/heads/master"}))
    dismissed = alert("closed_by_user", "closed-by-user", **{"alert.number": 10, "alert.dismissed_at": "2021-02-12T00:00:00Z"})
    assert world.deliver("code_scanning_alert", dismissed)[1]["outcome"] == "all clear"


def test_a_reopened_alert_opens_again_although_its_payload_carries_no_newer_time(world):
    world.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))
    world.deliver("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master"}))
    reopened = alert("reopened", **{"alert.number": 10})
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    assert world.deliver("code_scanning_alert", reopened)[1]["outcome"] == "alarm opened"


def test_a_late_reopened_alert_that_github_calls_fixed_now_opens_nothing(world):
    world.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))
    world.deliver("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master"}))
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "fixed"}
    before = world.snapshot()
    # The reopening, delivered again hours late, after the alert was fixed for good.
    outcome = world.deliver("code_scanning_alert", alert("reopened", **{"alert.number": 10}))[1]["outcome"]
    assert outcome == "stale: GitHub calls code scanning alert #10 fixed now"
    assert world.snapshot() == before


def test_a_created_alert_delivered_again_after_its_fix_opens_nothing(world):
    # GitHub's `fixed` alert carries no time beyond created_at: only the alert as GitHub has it orders them.
    created = alert("created", **{"ref": "refs/heads/master"})
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    world.deliver("code_scanning_alert", created)
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "fixed"}
    assert world.deliver("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master"}))[1]["outcome"] == "all clear"
    before = world.snapshot()
    assert world.deliver("code_scanning_alert", created)[1]["outcome"] == "stale: GitHub calls code scanning alert #10 fixed now"
    assert world.snapshot() == before


def test_a_fix_delivered_again_after_the_alert_reopened_closes_nothing(world):
    fixed = alert("fixed", **{"ref": "refs/heads/master"})
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    world.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "fixed"}
    world.deliver("code_scanning_alert", fixed)
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    assert world.deliver("code_scanning_alert", alert("reopened", **{"alert.number": 10}))[1]["outcome"] == "alarm opened"
    assert world.deliver("code_scanning_alert", fixed)[1]["outcome"] == "stale: GitHub calls code scanning alert #10 open now"
    assert "Code scanning alert #10" in list(world.chat.view().values())[-1][0]  # the alarm sent anew, open


MASTER = {"ref": "refs/heads/master"}
ALERT_ITEM = f"alarm#{REPO_ID} [entry:code-scanning:10]"


@pytest.mark.parametrize("first", ["created", "fixed"], ids=["created-first", "fixed-first"])
@pytest.mark.parametrize("shown", [True, False], ids=["alert-read", "alert-not-shown"])
def test_a_fixed_alert_stays_fixed_whatever_order_its_created_and_fixed_come_in(world, first, shown):
    # The payloads carry one time, created_at, for both: the alert as GitHub has it orders them; when GitHub does
    # not show it (404, a token without Code scanning alerts), a tie changes nothing.
    created, fixed = alert("created", **MASTER), alert("fixed", **MASTER)
    if first == "created":
        if shown:
            live_alert(world, "open", "2026-12-01T10:00:00Z")
        assert world.deliver("code_scanning_alert", created)[1]["outcome"] == "alarm opened"
    if shown:
        live_alert(world, "fixed", "2026-12-01T10:05:00Z")
    outcome = world.deliver("code_scanning_alert", fixed)[1]["outcome"]
    assert outcome == ("all clear" if first == "created" else "alarm unchanged")
    entry = world.store.dump()[ALERT_ITEM]
    assert entry["state"] == "closed" and entry["order"] == ("2026-12-01T10:05:00Z" if shown else "2021-02-11T03:10:43Z|closed")
    before, chat = world.snapshot(), world.chat.view()
    # The created event delivered (again) late, after the fix: it opens nothing.
    outcome = world.deliver("code_scanning_alert", created)[1]["outcome"]
    assert outcome == ("stale: GitHub calls code scanning alert #10 fixed now" if shown else "alarm unchanged")
    assert world.snapshot() == before and world.chat.view() == chat
    assert not [text for text, _ in chat.values() if text.startswith("🚨")]  # red nowhere


def test_an_alert_read_from_github_is_ordered_by_its_updated_at_not_by_its_payload(world):
    world.deliver("code_scanning_alert", alert("created", **MASTER))  # GitHub did not show it: ordered by created_at
    live_alert(world, "fixed", "2026-12-01T10:05:00Z")
    world.deliver("code_scanning_alert", alert("fixed", **MASTER))
    live_alert(world, "open", "2026-12-01T11:00:00Z")
    assert world.deliver("code_scanning_alert", alert("reopened", **{"alert.number": 10}))[1]["outcome"] == "alarm opened"
    assert world.store.dump()[ALERT_ITEM]["order"] == "2026-12-01T11:00:00Z"
    # A fix that read the alert before it was reopened (GitHub said fixed, at 10:05) and stored after: it closes
    # nothing; by its payload's time alone (created_at, as the reopening's) it would have.
    live_alert(world, "fixed", "2026-12-01T10:05:00Z")
    assert world.deliver("code_scanning_alert", alert("fixed", **MASTER))[1]["outcome"] == "alarm unchanged"
    assert world.store.dump()[ALERT_ITEM]["state"] == "open"
    assert "Code scanning alert #10" in list(world.chat.view().values())[-1][0]


def test_a_reopening_github_does_not_show_opens_the_alert_and_its_fix_closes_it_again(world):
    world.deliver("code_scanning_alert", alert("created", **MASTER))
    assert world.deliver("code_scanning_alert", alert("fixed", **MASTER))[1]["outcome"] == "all clear"
    # reopened carries no time of its own: read from its payload alone, it opens whatever the order
    assert world.deliver("code_scanning_alert", alert("reopened", **{"alert.number": 10}))[1]["outcome"] == "alarm opened"
    assert world.deliver("code_scanning_alert", alert("fixed", **MASTER))[1]["outcome"] == "all clear"
    assert world.deliver("code_scanning_alert", alert("created", **MASTER))[1]["outcome"] == "alarm unchanged"


@pytest.mark.parametrize("action", ["reopened_by_user", "appeared_in_branch"])
def test_every_action_that_opens_an_alert_opens_its_entry_while_github_calls_it_open(world, action):
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    ref = "" if action == "reopened_by_user" else "refs/heads/master"  # a person's reopening has no ref
    body = alert(action, "reopened", **{"ref": ref, "alert.number": 10})
    assert world.deliver("code_scanning_alert", body)[1]["outcome"] == "alarm opened"


def test_an_alert_assigned_to_someone_changes_nothing(world):
    body = alert("updated_assignment", "created", **{"ref": "refs/heads/master"})
    assert world.deliver("code_scanning_alert", body)[1]["outcome"] == "ignored"
    assert world.store.dump() == {}


# -- the sweep's entries ------------------------------------------------------------------------------



def test_pagers_own_alarm_has_its_own_header_buzzes_at_once_and_offers_no_start_fix(world):
    assert update_alarm(world.services, CONTROL_ALARM, opened={"delivery:g1": delivery_entry("g1")}, closed=[]) is True
    message_id, (text, buttons) = only_message(world)
    first, *below = text.splitlines()
    assert first == f'⚙️ <a href="https://github.com/{REPO}/issues/1">pager missed an issue in {REPO} — press ↻ Deliver again</a>'
    assert "an issue in Codertocat/Hello-World: all attempts failed (3 deliveries, the last answered 500)" in below[1]
    assert "g1" not in text  # the delivery's guid is pager's word, never the chat's
    assert buttons is None
    assert world.chat.messages[message_id].notified is True  # pager's own health needs the maintainer now
    assert alarm.start_fix(world.services, "control") == "nothing here a fix in the repository could see"
    assert world.hub.dispatches == []


def test_update_alarm_says_whether_the_alarm_changed_and_applies_twice_as_once(world):
    assert update_alarm(world.services, CONTROL_ALARM, opened={"delivery:g1": delivery_entry("g1")}, closed=[]) is True
    effects = world.effects()
    assert update_alarm(world.services, CONTROL_ALARM, opened={"delivery:g1": delivery_entry("g1")}, closed=[]) is False
    assert world.effects() == effects
    assert update_alarm(world.services, CONTROL_ALARM, opened={}, closed=["delivery:g1"]) is True
    assert only_message(world)[1][0].startswith("✅ pager is well again after ")
    assert update_alarm(world.services, CONTROL_ALARM, opened={}, closed=["delivery:g1"]) is False


def test_the_control_repositorys_own_failure_is_its_own_alarm_beside_pagers(world):
    world.hub.installations["maintainer/pager"] = world.hub.installations[REPO]
    update_alarm(world.services, CONTROL_ALARM, opened={"delivery:g1": delivery_entry("g1")}, closed=[])
    own = run("failure", **{"repository.full_name": CONTROL, "repository.id": 4242,
                             "workflow_run.head_repository.full_name": CONTROL})
    assert world.deliver("workflow_run", own)[1]["outcome"] == "alarm opened"
    texts = [text for text, _ in world.chat.view().values()]
    assert texts[0].startswith("⚙️ ") and "pager missed" in texts[0] and texts[1].startswith(f'🚨 <a href="https://github.com/{CONTROL}">')
    assert list(world.chat.view().values())[1][1] == (("🛠 Start fix", "👀 Seen"), (f"🔕 Mute {CONTROL} 8 h",))


# -- Start fix ----------------------------------------------------------------------------------------


def test_start_fix_dispatches_pager_fix_once_and_a_second_press_says_so(world):
    world.deliver("workflow_run", run("failure"))
    assert alarm.start_fix(world.services, str(REPO_ID)) == "🛠 fix started"
    assert alarm.start_fix(world.services, str(REPO_ID)) == "🛠 a fix was started already"
    [dispatch] = world.hub.dispatches
    assert dispatch["event_type"] == "pager-fix" and dispatch["repository"] == CONTROL
    assert dispatch["client_payload"] == {
        "repository": REPO,
        "entries": [{"key": "workflow:2823525", "title": "test run #163 failed", "url": f"https://github.com/{REPO}/actions/runs/28235251631"}],
        "more": 0,
        "message_id": max(world.chat.messages),
    }


def test_a_fix_belongs_to_its_alarm_and_the_next_alarm_offers_a_new_one(world):
    world.deliver("workflow_run", run("failure"))
    alarm.start_fix(world.services, str(REPO_ID))
    world.deliver("workflow_run", run("success", number=164))
    assert alarm.start_fix(world.services, str(REPO_ID)) == "✅ all clear: nothing to fix"
    world.deliver("workflow_run", run("failure", number=165))
    assert alarm.start_fix(world.services, str(REPO_ID)) == "🛠 fix started"
    assert len(world.hub.dispatches) == 2


def fixing(world) -> None:
    """A failing run, and 🛠 pressed in the chat two minutes later (08:02)."""
    world.deliver("workflow_run", run("failure"))
    world.advance(2)
    assert world.press("🛠")[1]["outcome"] == "🛠 fix started"


def test_the_fix_links_the_control_repositorys_actions_until_its_run_starts_and_then_the_run_itself(world):
    fixing(world)
    actions = f'<a href="https://github.com/{CONTROL}/actions?query=event%3Arepository_dispatch">its run</a>'
    assert f"🛠 fix started Fri 08:02 by Maintainer ({actions})" in only_message(world)[1][0]
    assert world.deliver("workflow_run", fix_run())[1]["outcome"] == "fix run linked"
    text, buttons = only_message(world)[1]
    assert f'🛠 fix started Fri 08:02 by Maintainer (<a href="{FIX_RUN_URL}">its run</a>)' in text
    assert "repository_dispatch" not in text and buttons == (("👀 Seen",), (f"🔕 Mute {REPO} 8 h",))
    assert len(world.chat.sent) == 1  # an edit, silent: the person who pressed knows


def test_a_fix_runs_start_delivered_twice_links_it_once_and_a_second_run_changes_nothing(world):
    fixing(world)
    world.deliver("workflow_run", fix_run())
    effects, records = world.effects(), world.store.dump()
    assert world.deliver("workflow_run", fix_run())[1]["outcome"] == "the fix's run is linked already"
    other = fix_run(created_at="2027-01-15T08:03:00Z", url=f"https://github.com/{CONTROL}/actions/runs/4242002")
    assert world.deliver("workflow_run", other)[1]["outcome"] == "the fix's run is linked already"
    assert (world.effects(), world.store.dump()) == (effects, records)


def test_a_run_from_before_the_fix_delivered_late_links_nothing(world):
    fixing(world)
    before = world.effects()
    late = fix_run(created_at="2027-01-15T08:01:00Z", url=f"https://github.com/{CONTROL}/actions/runs/4241999")
    assert world.deliver("workflow_run", late)[1]["outcome"] == "stale: a run from before the fix"
    assert world.effects() == before and "event%3Arepository_dispatch" in only_message(world)[1][0]
    world.deliver("workflow_run", fix_run())  # the fix's own run still links
    assert FIX_RUN_URL in only_message(world)[1][0]


def test_a_fix_runs_start_delivered_after_its_end_keeps_the_end(world):
    fixing(world)
    world.advance(9)
    ended = fix_run("completed", created_at="2027-01-15T08:02:05Z", **{
        "workflow_run.conclusion": "failure", "workflow_run.updated_at": "2027-01-15T08:11:00Z"})
    assert world.deliver("workflow_run", ended)[1]["outcome"] == "fix ended"
    shown = only_message(world)[1]
    assert world.deliver("workflow_run", fix_run())[1]["outcome"] == "the fix's run ended already"
    assert only_message(world)[1] == shown and f'failed Fri 08:11 (<a href="{FIX_RUN_URL}">its run</a>)' in shown[0]


def test_a_run_that_is_not_a_pager_fix_run_is_ignored_without_a_read(world):
    fixing(world)
    others = [
        payload("workflow_run", "requested"),  # a run of a repository of the fleet
        fix_run(**{"workflow_run.event": "push", "workflow_run.display_title": "CI"}),  # the control repository's own CI
        fix_run(**{"repository.full_name": "someone/else"}),  # a run so named in another repository
    ]
    for body in others:
        since = len(world.faults.log)
        assert world.deliver("workflow_run", body)[1]["outcome"] == "ignored: not a pager-fix run of the control repository"
        assert world.faults.log[since:] == []  # neither the table nor GitHub nor Telegram
    assert "event%3Arepository_dispatch" in only_message(world)[1][0]


# -- racing ----------------------------------------------------------------------------------------


def test_two_deliveries_of_the_same_failure_racing_send_one_message(world):
    world.race("workflow_run", [run("failure"), run("failure")])
    assert len(world.chat.sent) == 1 and world.pending_claims() == []


def test_two_different_failures_racing_end_in_one_message_with_both(world):
    world.race("workflow_run", [run("failure"), run("failure", workflow_id=9, name="lint")])
    assert len(world.chat.sent) == 1
    text = only_message(world)[1][0]
    assert "test run #163 failed" in text and "lint run #163 failed" in text


def test_eight_workflows_failing_at_once_are_all_shown_in_one_message_and_none_answers_500(world):
    # A broken main: eight workflows fail within a second; each delivery reaches the table before
    # any of them reaches Telegram, so they truly overlap.
    statuses = world.race("workflow_run", [run("failure", workflow_id=100 + i, name=f"wf-{i}") for i in range(8)])
    assert statuses == [200] * 8
    assert len(world.chat.sent) == 1
    text = only_message(world)[1][0]
    assert all(f"wf-{i} run #163 failed" in text for i in range(8))
    assert world.pending_claims() == []


def test_twenty_alerts_of_one_analysis_are_all_shown(world):
    # At the same moment, twenty deliveries render one message. Each reads its alert from GitHub first, so
    # the first renders run while the others still store their entries, and each render shows a few more:
    # Telegram's flood control then refuses edits past the deliveries' deadlines (in this world often about
    # half of the twenty; eight workflow runs at once, which read nothing first, make one message in two
    # calls). Such a delivery answers 500 (SPEC §4: Telegram's 429 after its one short wait), and its
    # redelivery, as the sweep asks for it, shows what is left.
    bodies = [alert("created", **{"ref": "refs/heads/master", "alert.number": 100 + n}) for n in range(20)]
    guids = [f"analysis-{n}" for n in range(20)]
    answers = world.concurrently(*(lambda g=g, b=b: world.deliver("code_scanning_alert", b, guid=g)
                                   for g, b in zip(guids, bodies, strict=True)))
    failed = {g: (status, body) for g, (status, body) in zip(guids, answers, strict=True) if status != 200}
    assert all(status == 500 and ("rate limited" in body["error"] or "kept changing" in body["error"])
               for status, body in failed.values()), failed
    assert all(world.deliver_again(g)[0] == 200 for g in failed)
    text = only_message(world)[1][0]
    assert all(f"Code scanning alert #{100 + n}:" in text for n in range(20))


def many_alerts(world, count: int) -> None:
    """`count` open code scanning alerts, as stored after their deliveries."""
    from pager.store import Record

    for n in range(count):
        entry = {"state": "open", "title": f"code scanning #{n}: Query built from user-controlled sources (warning)",
                 "url": f"https://github.com/{REPO}/security/code-scanning/{n}", "order": "", "rank": 4, "at": world.now - 3600 + n}
        world.store.inner.save(Record(KEY, item=f"entry:code-scanning:{n}"), entry)


def test_a_new_failure_behind_ninety_open_alerts_is_shown_first_with_how_many_more_there_are(world):
    many_alerts(world, 90)
    assert world.deliver("workflow_run", run("failure", name="deploy"))[0] == 200
    text = only_message(world)[1][0]
    lines = text.splitlines()
    assert "deploy run #163 failed, and 90 more" in lines[0] and "deploy run #163 failed" in lines[2]  # CI before alerts
    assert lines[-1].startswith("… and ") and "code scanning alerts" in lines[-1]
    assert f'href="https://github.com/{REPO}/security/code-scanning"' in lines[-1]
    hidden = int(lines[-1].split()[2])
    assert len(lines) - 3 + hidden == 91  # every entry shown or counted


def test_a_thousand_open_alerts_keep_every_delivery_answering_200_and_no_record_grows(world):
    many_alerts(world, 1200)
    for n in range(3):
        assert world.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master", "alert.number": 5000 + n}))[0] == 200
    assert world.deliver("workflow_run", run("failure"))[0] == 200
    text = only_message(world)[1][0]
    from pager.html import visible_length

    assert visible_length(text) <= 4096 and "… and 11" in text
    # The largest record is the head, which keeps the message it shows: bounded by the message, not by the entries.
    assert max(len(json.dumps(data)) for data in world.store.dump().values()) < 20_000


def test_the_most_severe_and_newest_alerts_come_first(world):
    for n, severity in enumerate(["note", "critical", "warning", "critical"]):
        body = alert("created", **{"ref": "refs/heads/master", "alert.number": 10 + n,
                                  "alert.rule.security_severity_level": severity})
        world.deliver("code_scanning_alert", body)
        world.now += 60
    lines = only_message(world)[1][0].splitlines()[2:]
    assert [line.split("#")[1].split(":")[0] for line in lines] == ["13", "11", "12", "10"]


# -- failures at every call ---------------------------------------------------------------------------


def _sweeping(opened, closed):
    def act(h):
        try:
            update_alarm(h.services, CONTROL_ALARM, opened=opened, closed=closed)
        except Transient:
            return 500
        return 200

    return act


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario("alarm opened", lambda h: None, delivering("workflow_run", run("failure"))),
        Scenario(
            "alarm updated",
            lambda h: h.deliver("workflow_run", run("failure")),
            delivering("workflow_run", run("failure", workflow_id=9, name="lint")),
        ),
        Scenario(
            "all clear",
            lambda h: h.deliver("workflow_run", run("failure")),
            delivering("workflow_run", run("success", attempt=2)),
        ),
        Scenario(
            "check suite",
            lambda h: None,
            delivering("check_suite", suite("failure")),
        ),
        Scenario(
            "code scanning",
            lambda h: None,
            delivering("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"})),
        ),
        Scenario(
            "code scanning fixed, ordered by GitHub's alert",
            lambda h: (live_alert(h, "open", "2026-12-01T10:00:00Z"),
                       h.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"})),
                       live_alert(h, "fixed", "2026-12-01T10:05:00Z")),
            delivering("code_scanning_alert", alert("fixed", **{"ref": "refs/heads/master"})),
        ),
        Scenario("a fix's run started", lambda h: (h.deliver("workflow_run", run("failure")), h.press("🛠")),
                 delivering("workflow_run", fix_run())),
        Scenario("sweep opens a delivery entry", lambda h: None, _sweeping({"delivery:g1": delivery_entry("g1")}, [])),
        Scenario(
            "sweep closes a delivery entry",
            lambda h: update_alarm(h.services, CONTROL_ALARM, opened={"delivery:g1": delivery_entry("g1")}, closed=[]),
            _sweeping({}, ["delivery:g1"]),
        ),
    ],
    ids=lambda s: s.name,
)
def test_a_failure_at_any_call_fails_the_step_and_doing_it_again_ends_as_undisturbed(make_world, scenario):
    report = failure_matrix(make_world, scenario)
    assert report.failed


def test_a_failure_at_any_call_of_start_fix_dispatches_once_in_the_end(make_world):
    def act(h):
        try:
            answer = alarm.start_fix(h.services, str(REPO_ID))
        except Transient:
            return 500
        return 200 if answer == "🛠 fix started" else 500

    def again(h, _status):
        assert alarm.start_fix(h.services, str(REPO_ID)) in ("🛠 fix started", "🛠 a fix was started already")
        return 200

    scenario = Scenario("start fix", lambda h: h.deliver("workflow_run", run("failure")), act, again)
    assert failure_matrix(make_world, scenario).failed


# -- the pure decisions -----------------------------------------------------------------------------


def _entry(order: str, title: str = "t", rank: int = 0) -> dict:
    return {"title": title, "url": "u", "order": order, "rank": rank}


def test_applying_a_failure_older_than_the_closed_entry_changes_nothing():
    closed = {"state": "closed", "order": "000000000163.0002", "at": 0.0}
    step = decide_entry(_entry("000000000163.0001"), None, False)(closed, 10.0)
    assert (step.describe(), step.data) == ("stale", None)


def test_a_close_remembers_its_order_and_a_closed_entry_is_forgotten_after_three_days():
    now = 10 * 24 * 3600.0
    step = decide_entry(None, "3", False)({"state": "open", "order": "2", "title": "t", "at": 0.0}, now)
    assert step.describe() == "closed" and step.data["state"] == "closed" and step.data["order"] == "3"
    old = {"state": "closed", "order": "9", "at": 0.0}
    assert decide_entry(_entry("1"), None, False)(old, now).describe() == "opened"  # memory older than 3 days
    assert decide_entry(_entry("1"), None, False)(old, 3600.0).describe() == "stale"


def test_a_close_without_an_order_always_applies():
    step = decide_entry(None, None, False)({"state": "open", "order": "9", "title": "t", "at": 0.0}, 0.0)
    assert step.describe() == "closed"


def test_an_alert_without_a_time_of_its_own_opens_whatever_order_it_carries():
    closed = {"state": "closed", "order": "2021-02-12T00:00:00Z", "at": 0.0}
    step = decide_entry(_entry("2020-07-22T14:06:31Z"), None, True)(closed, 10.0)
    assert step.describe() == "opened" and step.data["order"] == "2021-02-12T00:00:00Z"


def test_start_fix_callback_data_fits_telegrams_64_bytes_for_any_repository_name():
    long_name = "o" * 39 + "/" + "r" * 100
    view = alarm.View(since=0.0, now=0.0, zone=UTC)
    _, buttons = render(alarm.Alarm(str(2**63 - 1), long_name), {"workflow:1": _entry("1")}, view)  # GitHub's ids are 64-bit
    assert all(len(data.encode()) <= 64 for row in buttons for _, data in row)


def test_a_start_fix_of_long_non_ascii_entries_fits_githubs_64_kb_as_sent():
    # requests escapes non-ASCII as \uXXXX: forty long titles in another script pass 64 KB by count alone.
    titles = {f"workflow:{n}": {"title": "сбой сборки " * 25, "url": "https://github.com/o/r/actions/runs/" + "9" * 400,
                                "rank": 0, "at": n} for n in range(40)}
    payload = alarm.fix_payload("o/r", {"message": {"id": 7}}, titles)
    sent = json.dumps(payload).encode()
    assert len(sent) <= alarm.FIX_PAYLOAD_BYTES < 64 * 1024
    assert payload["entries"] and payload["more"] == 40 - len(payload["entries"]) > 0


def test_a_pass_whose_all_clear_failed_to_show_is_shown_by_a_newer_pass_that_overtakes_its_redelivery(world):
    # The pass of run #2 closes the entry but its edit fails (500); the pass of run #3 comes before #2's
    # redelivery, which is then older than what is stored: without a render at #3 the alarm stayed red for
    # good (found by a property test delivering a branch's runs in any order).
    world.deliver("workflow_run", run("failure", number=1))
    world.chat.fail("editMessageText", 502)
    assert world.deliver("workflow_run", run("success", number=2), guid="pass-2")[0] == 500
    world.deliver("workflow_run", run("success", number=3))
    world.deliver_again("pass-2")
    [(text, buttons)] = world.chat.view().values()
    assert text.startswith("✅ ") and "green again" in text and buttons is None
    assert world.pending_claims() == []


def test_what_fails_most_is_linked_by_its_own_page_else_by_the_repositorys_actions():
    entries = {
        "code-scanning:3": {"url": f"https://github.com/{REPO}/security/code-scanning/3", "rank": 3, "at": 30.0},
        "workflow:1": {"url": f"https://github.com/{REPO}/actions/runs/11", "rank": 0, "at": 10.0},
        "workflow:2": {"url": f"https://github.com/{REPO}/actions/runs/22", "rank": 0, "at": 20.0},
    }
    assert alarm.failing_url(entries, REPO) == f"https://github.com/{REPO}/actions/runs/22"  # CI first, the newest first
    assert alarm.failing_url({"workflow:1": {"title": "no link", "rank": 0}}, REPO) == f"https://github.com/{REPO}/actions"
    assert alarm.failing_url({}, REPO) == f"https://github.com/{REPO}/actions"
