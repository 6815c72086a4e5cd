"""The signals' pure decisions, data in and data out: a record's data and `now` go in, a `Step` comes out
(its outcome, the effect to carry out, the record's next data). No world, no table, no HTTP: what each
rule of "safe twice, and late" comes to, one rule a test. The end-to-end tests (test_signals_*.py,
test_deliveries.py) show the same rules hold once the effects are carried out and recorded.
"""

from __future__ import annotations

from dataclasses import replace

from pager.engine.effects import DeleteMessage, Dispatch, EditMessage, MergePull, MergeResult, Posted, Redeliver, SendMessage
from pager.routing import Repository
from pager.signals.alarm import VISIBLE, Alarm, decide_again, decide_entry, decide_fix, decide_render
from pager.signals.contribution import Contribution, decide_closing, decide_opening
from pager.signals.messages import tidy
from pager.signals.release import ReleasePull, decide_closed, decide_merge, decide_pull, decide_ready

NOW = 1_800_000_000.0
CONTROL = "maintainer/pager"
REPO = Repository(186853002, "Codertocat/Hello-World")


def after(step, data, result=None):
    """The record's data once the step's effect happened (`result` what the effect returned)."""
    return step.then(result) if step.then else step.data


# -- contributions -----------------------------------------------------------------------------------------

ISSUE = Contribution(repository=REPO.name, kind="issue", thing="issue", noun="issue", verb="opened", number=7,
                     title="Crash on start", url="https://github.com/Codertocat/Hello-World/issues/7", author="alice",
                     body="It crashes.", order="2026-12-01T10:00:00Z", outside=True, repository_id=REPO.id)


def test_a_new_contribution_is_shown_then_its_draft_asked_for_then_nothing():
    decide = decide_opening(ISSUE, CONTROL)
    shown = decide({}, NOW)
    assert shown.describe() == "sent" and isinstance(shown.effect, SendMessage) and "alice" in shown.effect.text
    data = after(shown, {}, Posted("-1001", 42))
    assert data["message_id"] == 42 and data["chat"] == "-1001" and data["state"] == "open"
    drafted = decide(data, NOW)
    assert drafted.describe() == "draft asked" and isinstance(drafted.effect, Dispatch)
    assert drafted.effect.repository == CONTROL and drafted.effect.event_type == "pager-draft"
    data = after(drafted, data)
    assert decide(data, NOW).describe() == "already shown" and decide(data, NOW).effect is None  # twice: nothing


def test_a_contribution_closed_before_its_opening_came_is_never_shown():
    closing = decide_closing("closed", "2026-12-01T11:00:00Z", author_outside=True)({}, NOW)
    assert closing.describe() == "recorded: closed before shown" and closing.effect is None
    late_opening = decide_opening(ISSUE, CONTROL)(closing.data, NOW)
    assert late_opening.describe() == "no longer new: closed" and late_opening.effect is None


def test_closing_edits_the_shown_message_once_and_an_older_close_changes_nothing():
    shown = {"state": "open", "order": ISSUE.order, "message_id": 42, "chat": "-1001", "text": "📝 alice opened"}
    step = decide_closing("answered", "2026-12-01T12:00:00Z", author_outside=True)(shown, NOW)
    assert isinstance(step.effect, EditMessage) and step.effect.message_id == 42 and step.effect.chat == "-1001"
    assert step.effect.text.endswith("✅ answered")
    closed = after(step, shown, Posted("-1001", 42))
    assert decide_closing("answered", "2026-12-01T12:00:00Z", True)(closed, NOW).describe() == "already answered"
    stale = decide_closing("closed", "2026-12-01T09:00:00Z", True)(shown, NOW)
    assert stale.describe() == "stale: older than what is shown" and stale.effect is None


def test_a_close_by_a_colleague_of_a_contribution_never_shown_records_nothing():
    step = decide_closing("closed", "2026-12-01T11:00:00Z", author_outside=False)({}, NOW)
    assert step.describe() == "ignored: not a contribution" and step.data is None and step.effect is None


# -- the alarm ---------------------------------------------------------------------------------------------

FAILED = {"title": "CI failed on main", "url": "https://github.com/o/r/actions/runs/1", "order": "2026-12-01T10:00:00Z",
          "rank": 1}


def test_an_entry_opens_once_a_repeat_changes_nothing_and_an_older_payload_is_stale():
    opened = decide_entry(FAILED, None, unordered=False)({}, NOW)
    assert opened.describe() == "opened" and opened.data["state"] == "open" and opened.data["at"] == NOW
    assert decide_entry(FAILED, None, False)(opened.data, NOW + 60).describe() == "repeated"
    older = {**FAILED, "order": "2026-12-01T09:00:00Z"}
    assert decide_entry(older, None, False)(opened.data, NOW).describe() == "stale"


def test_an_older_success_does_not_close_a_newer_failure_and_a_newer_one_does():
    failing = decide_entry(FAILED, None, False)({}, NOW).data
    assert decide_entry(None, "2026-12-01T09:00:00Z", False)(failing, NOW).describe() == "stale"
    closed = decide_entry(None, "2026-12-01T11:00:00Z", False)(failing, NOW)
    assert closed.describe() == "closed" and closed.data["state"] == "closed"
    # the failure delivered late, after its fix: it stays closed
    assert decide_entry(FAILED, None, False)(closed.data, NOW).describe() == "stale"


def test_a_close_that_comes_before_its_failure_is_remembered_so_the_late_failure_is_stale():
    remembered = decide_entry(None, "2026-12-01T11:00:00Z", False)({}, NOW)
    assert remembered.describe() == "remembered" and remembered.data["state"] == "closed"
    assert decide_entry(FAILED, None, False)(remembered.data, NOW).describe() == "stale"


def test_a_closed_entry_is_remembered_until_three_days_after_it_closed_and_forgotten_from_then():
    from pager.signals.alarm import CLOSED_MEMORY_SECONDS

    closed = decide_entry(None, "2026-12-01T11:00:00Z", False)({}, NOW).data  # closed at NOW
    later = NOW + CLOSED_MEMORY_SECONDS
    assert decide_entry(FAILED, None, False)(closed, later - 1).describe() == "stale"
    assert decide_entry(FAILED, None, False)(closed, later).describe() == "opened"  # GitHub lists it no longer


def test_a_fix_is_live_for_its_hold_and_over_the_second_it_ends():
    from pager.signals.alarm import FIX_HOLD_SECONDS, live_fix

    fix = {"at": NOW, "by": "@maintainer"}
    assert live_fix(fix, {}, NOW + FIX_HOLD_SECONDS - 1) == fix
    assert live_fix(fix, {}, NOW + FIX_HOLD_SECONDS) is None  # when the hold ends (due_of): 🛠 back, the buzz no longer held


def test_a_newer_pass_of_an_entry_closed_before_renders_since_that_closings_render_may_have_failed():
    failing = decide_entry(FAILED, None, False)({}, NOW).data
    closed = decide_entry(None, "2026-12-01T11:00:00Z", False)(failing, NOW).data
    again = decide_entry(None, "2026-12-01T12:00:00Z", False)(closed, NOW)
    assert again.describe() == "closed again" and again.data["order"] == "2026-12-01T12:00:00Z"
    assert "closed again" in VISIBLE and "remembered" not in VISIBLE  # a workflow never red: no render


def test_the_alarm_message_is_sent_then_edited_then_cleared_and_unchanged_when_nothing_changed():
    alarm = Alarm(str(REPO.id), REPO.name)
    entries = {"ci:main": {"state": "open", **FAILED, "at": NOW}}
    decide = decide_render(alarm, entries, grace=600)
    sent = decide({}, NOW)
    assert sent.describe() == "alarm opened" and isinstance(sent.effect, SendMessage) and "CI failed on main" in sent.effect.text
    assert sent.effect.notify is False  # within its grace
    head = after(sent, {}, Posted("-1001", 7))
    assert decide(head, NOW).describe() == "alarm unchanged"
    more = {**entries, "scan:3": {"state": "open", "title": "Alert 3", "url": "u", "order": "o", "rank": 2, "at": NOW}}
    updated = decide_render(alarm, more, grace=600)(head, NOW)
    assert updated.describe() == "alarm updated" and isinstance(updated.effect, EditMessage) and updated.effect.message_id == 7
    clear = decide_render(alarm, {}, grace=600)(head, NOW)
    assert clear.describe() == "all clear" and "is green again" in clear.effect.text and "<s>" in clear.effect.text
    assert after(clear, head, Posted("-1001", 7))["message"]["open"] is False


def test_an_alarm_still_red_past_its_grace_is_posted_anew_with_a_sound_once_and_the_old_message_deleted():
    alarm = Alarm(str(REPO.id), REPO.name)
    entries = {"ci:main": {"state": "open", **FAILED, "at": NOW}}
    decide = decide_render(alarm, entries, grace=600)
    head = after(decide({}, NOW), {}, Posted("-1001", 7))
    assert decide(head, NOW + 599).effect is None  # not yet
    red = decide(head, NOW + 600)
    assert red.describe() == "alarm reposted with a sound" and red.effect.notify is True
    head = after(red, head, Posted("-1001", 8))
    assert head["message"]["id"] == 8 and head["retired"] == [{"id": 7, "chat": "-1001"}]
    tidy = decide(head, NOW + 600)
    assert tidy.effect == DeleteMessage(7, "-1001")
    head = after(tidy, head)
    assert "retired" not in head and decide(head, NOW + 900).effect is None  # it buzzed once


def test_start_fix_dispatches_once_per_alarm_and_never_for_failed_deliveries_alone():
    entries = {"ci:main": {"state": "open", **FAILED, "at": NOW}}
    head = {"repository": REPO.name, "message": {"id": 7, "open": True}}
    started = decide_fix(CONTROL, entries)(head, NOW)
    assert started.describe() == "🛠 fix started" and isinstance(started.effect, Dispatch)
    assert started.effect.client_payload["entries"][0]["title"] == "CI failed on main"
    assert decide_fix(CONTROL, entries)(after(started, head), NOW).describe() == "🛠 a fix was started already"
    deliveries = {"delivery:g1": {"state": "open", "title": "issues.opened failed", "order": "o", "at": NOW}}
    assert decide_fix(CONTROL, deliveries)(head, NOW).effect is None


def test_deliver_again_asks_once_for_the_attempt_the_entry_shows():
    entry = {"state": "open", "delivery_id": 555, "title": "t", "order": "o", "at": NOW}
    asked = decide_again(555)(entry, NOW)
    assert asked.effect == Redeliver(555)
    pressed_again = decide_again(555)(after(asked, entry, True), NOW + 1)
    assert pressed_again.effect is None


# -- releases ----------------------------------------------------------------------------------------------

PULL = ReleasePull(number=40, title="chore(main): release 2.4.0", url="https://github.com/o/r/pull/40", head="a" * 40,
                   order="2026-12-01T10:00:00Z", state="open", merged=False, merge_commit="", merged_at="",
                   installation_id=1, versions=("2.4.0",))


def test_a_release_is_shown_once_and_an_older_event_is_stale():
    shown = decide_pull(REPO, PULL)({}, NOW)
    assert isinstance(shown.effect, SendMessage) and "release 2.4.0" in shown.effect.text
    data = after(shown, {}, Posted("-1001", 9))
    assert decide_pull(REPO, PULL)(data, NOW).effect is None  # twice: nothing
    older = replace(PULL, order="2026-12-01T09:00:00Z", head="b" * 40)
    assert decide_pull(REPO, older)(data, NOW).describe() == "stale: older than the recorded head"


LIVE = {"number": 40, "state": "open", "merged": False, "mergeable_state": "clean", "head": {"sha": PULL.head},
        "title": PULL.title, "html_url": PULL.url, "updated_at": PULL.order}


def shown_release():
    return after(decide_pull(REPO, PULL)({}, NOW), {}, Posted("-1001", 9))


def test_merge_is_offered_only_for_the_recorded_head_when_github_calls_it_clean():
    data = shown_release()
    offered = decide_ready(REPO, PULL.head, LIVE, True, 1)(data, NOW)
    # the moment to act buzzes: posted anew with a sound (the silent message is deleted next)
    assert offered.describe() == "Merge offered" and isinstance(offered.effect, SendMessage) and offered.effect.notify
    assert any("🔀" in label for row in (offered.effect.buttons or []) for label, _ in row)
    blocked = decide_ready(REPO, PULL.head, {**LIVE, "mergeable_state": "blocked"}, True, 1)(data, NOW)
    assert blocked.describe() == "not ready: blocked" and not (blocked.data or {}).get("ready")
    moved_on = decide_ready(REPO, PULL.head, {**LIVE, "head": {"sha": "c" * 40}}, True, 1)(data, NOW)
    assert moved_on.describe() == "not ready: the pull request moved on" and moved_on.effect is None


def test_a_release_github_has_closed_in_the_second_of_its_recorded_head_is_recorded_closed():
    data = shown_release()  # its order: PULL.order, the second GitHub's pull request says it was closed in
    step = decide_ready(REPO, PULL.head, {**LIVE, "state": "closed"}, True, 1)(data, NOW)
    assert step.describe() == "closed as GitHub has it" and isinstance(step.effect, EditMessage)
    assert after(step, data, Posted("-1001", 9))["state"] == "closed"


def test_a_merge_is_recorded_once_and_a_late_open_after_it_changes_nothing():
    merged = replace(PULL, state="closed", merged=True, merge_commit="c" * 40, merged_at="2026-12-01T12:00:00Z",
                     order="2026-12-01T12:00:00Z")
    step = decide_closed(REPO, merged)({}, NOW)
    assert step.describe() == "merge recorded"
    data = after(step, {}, Posted("-1001", 9))
    assert data["state"] == "merged" and data["merged"] == {"commit": "c" * 40, "at": "2026-12-01T12:00:00Z"}
    assert decide_closed(REPO, merged)(data, NOW).effect is None
    assert decide_pull(REPO, PULL)(data, NOW).describe() == "stale: older than the recorded head"


def test_the_merge_button_merges_the_head_it_offered_and_only_once():
    data = shown_release()
    offered = after(decide_ready(REPO, PULL.head, LIVE, True, 1)(data, NOW), data, Posted("-1001", 10))
    offered = after(tidy(offered), offered)  # the old message deleted (settle_release does it before deciding)
    step = decide_merge(REPO, 40, "squash")(offered, NOW)
    assert step.effect == MergePull(REPO.name, 40, PULL.head, "squash", 1)
    merged = after(step, offered, MergeResult(True, sha="c" * 40))
    shown = decide_merge(REPO, 40, "squash")(merged, NOW)  # the message comes to say it was merged, Merge gone
    assert shown.describe() == "release updated" and isinstance(shown.effect, EditMessage) and not shown.effect.buttons
    again = decide_merge(REPO, 40, "squash")(after(shown, merged, Posted("-1001", 10)), NOW)
    assert again.describe() == "✅ already merged" and again.effect is None
    not_offered = decide_merge(REPO, 40, "squash")(data, NOW)
    assert not_offered.describe() == "🔀 Merge is not offered now" and not isinstance(not_offered.effect, MergePull)
