"""Attention (pager.attention, docs/attention.md): which messages buzz, end to end through the webhook, the
every-minute check and the chat's commands, in the fake world; and the pure rules beneath.

A message "buzzes" when pager sends it without `disable_notification` (the fake chat's `notified`). The
phone's view is `world.chat.messages` (each message, whether it buzzed, what it replies to) after every
step: a moment that must buzz on a thing already shown posts its message anew and deletes the old one.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from pager import attention_store
from pager.attention import MOMENTS, Moment, QuietHours, Urgency, Volume, due, heard_after, rest_of, ripe
from pager.errors import Transient
from pager.signals import alarm
from pager.signals import due as due_signals
from pager.store import RECORD_ATTEMPTS
from pager.sweep.run import check
from pager_world.cases import (
    FIX_RUN_URL,
    alert,
    fix_run,
    issue_closed,
    issue_comment_by,
    issue_opened,
    live_pull,
    pull,
    run,
    suite,
    suite_passed,
)
from pager_world.faults import FAULTS_BY_SERVICE
from pager_world.matrix import Scenario, failure_matrix
from pager_world.payloads import example
from pager_world.world import ALLOWED_USER, CHAT_ID, CONTROL, EXAMPLE_ALARM, REPO, REPO_ID

MINUTE = 60.0


def tick(world) -> dict:
    """The every-minute check, now."""
    return check(world.services, now=world.now, run_id=f"check-{int(world.now)}", seconds=60)


def shown(world) -> list:
    """The chat as the phone shows it: its messages, oldest first."""
    return world.chat.chat()


def buzzed(world) -> list[str]:
    """The first line of every message sent with a sound, in the order they were sent (a reposted one too)."""
    return [first for _, _, first in world.chat.buzzes]


# -- the rules, pure ---------------------------------------------------------------------------------------


def test_every_moment_says_whether_it_buzzes_and_why_and_the_action_moments_buzz():
    assert {m for m, rule in MOMENTS.items() if rule.buzz} == {
        Moment.CONTACT, Moment.ALARM_RED, Moment.RELEASE_READY, Moment.HEALTH, Moment.SUMMARY}
    assert all(rule.why and rule.message for rule in MOMENTS.values())
    assert set(MOMENTS) == set(Moment)  # none left out


def test_a_mute_and_quiet_hours_turn_a_buzz_down_and_quiet_hours_keep_it_for_the_summary():
    assert Volume().sound(Moment.CONTACT).buzz is True
    muted = Volume(muted_until=1.0).sound(Moment.CONTACT)
    assert muted.buzz is False and muted.summary is False and "muted" in muted.why
    quiet = Volume(quiet=True).sound(Moment.RELEASE_READY)
    assert quiet.buzz is False and quiet.summary is True
    assert Volume(quiet=True).sound(Moment.ALARM_OPENED).summary is False  # silent anyway: nothing to keep


def test_a_mute_of_a_thread_alone_silences_a_contact_in_it_and_keeps_nothing_for_a_summary():
    sound = Volume(quiet=(0.0, 2.0), thread_muted_until=1.0).sound(Moment.CONTACT)
    assert (sound.buzz, sound.summary, sound.why) == (False, False, "the thread is muted: silent, never lost")
    assert Volume(thread_muted_until=1.0).sound(Moment.FOLLOW_UP).why == MOMENTS[Moment.FOLLOW_UP].why


def test_quiet_hours_wrap_midnight_on_the_maintainers_clock():
    berlin = ZoneInfo("Europe/Berlin")
    quiet = QuietHours.parse("22:00-07:00", berlin)
    at = lambda *args: datetime(*args, tzinfo=berlin).timestamp()  # noqa: E731
    assert quiet.period(at(2026, 12, 4, 21, 59)) is None
    start, end = quiet.period(at(2026, 12, 4, 23, 30))
    assert (start, end) == (at(2026, 12, 4, 22, 0), at(2026, 12, 5, 7, 0))
    assert quiet.period(at(2026, 12, 5, 6, 59)) == (start, end)
    assert quiet.period(at(2026, 12, 5, 7, 0)) is None
    assert quiet.next_start(at(2026, 12, 5, 12, 0)) == at(2026, 12, 5, 22, 0)
    # the night the clocks go back is an hour longer, and still one period
    autumn = quiet.period(at(2026, 10, 25, 3, 0))
    assert autumn is not None and autumn[1] - autumn[0] == 10 * 3600


def test_quiet_hours_ending_at_a_time_the_clock_skips_end_when_it_jumps_past_it():
    berlin = ZoneInfo("Europe/Berlin")  # 28 March 2027: 02:00 CET is 03:00 CEST, 02:30 never shows
    quiet = QuietHours.parse("22:00-02:30", berlin)
    jump = datetime(2027, 3, 28, 1, 0, tzinfo=UTC).timestamp()
    assert quiet.period(jump - 60) == (datetime(2027, 3, 27, 21, 0, tzinfo=UTC).timestamp(), jump)
    assert quiet.period(jump) is None  # 03:00 CEST: past 02:30, no longer quiet (it said 03:30 before)
    assert QuietHours.parse("02:30-07:00", berlin).period(jump)[0] == jump  # and quiet from the jump on


@pytest.mark.parametrize("value", ["22-07", "25:00-07:00", "22:00-22:00", "22:00 to 07:00"])
def test_quiet_hours_that_are_no_hours_are_refused(value):
    with pytest.raises(ValueError):
        QuietHours.parse(value, UTC)


def test_an_opening_buzzes_once_past_its_grace_and_one_heard_before_never_again():
    openings = {"a": 100.0, "b": 500.0}
    assert ripe(openings, None, 300, 399) == [] and due(openings, None, 300) == 400
    assert ripe(openings, None, 300, 400) == ["a"]
    heard = heard_after(None, 300, 400)
    assert ripe(openings, heard, 300, 799) == [] and due(openings, heard, 300) == 800
    assert ripe(openings, heard, 300, 800) == ["b"]
    assert ripe(openings, heard_after(heard, 300, 800), 300, 5000) == []


# -- contributions ------------------------------------------------------------------------------------------


def test_a_further_contribution_follows_up_until_an_hour_after_the_threads_last_buzz_and_calls_from_then():
    from pager.attention import FOLLOW_UP_SECONDS
    from pager.signals.contribution import Thread

    thread = Thread(first=1, chat=CHAT_ID, buzzed_at=1000.0)
    assert thread.moment(1000.0) is Moment.FOLLOW_UP
    assert thread.moment(1000.0 + FOLLOW_UP_SECONDS - 1) is Moment.FOLLOW_UP
    assert thread.moment(1000.0 + FOLLOW_UP_SECONDS) is Moment.CONTACT  # the hour is over
    assert thread.moment(999.0) is Moment.CONTACT  # a clock behind the last buzz: no follow-up of a call to come


def test_an_outsiders_first_contact_buzzes_and_a_follow_up_within_the_hour_replies_to_it_silently(resting):
    world = resting  # (its rest over when the thread's hour is)
    world.deliver("issues", issue_opened())
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("alice", comment_id=1, number=1))
    opened, comment = shown(world)
    assert opened.notified is True and comment.notified is False and comment.reply_to == opened.message_id
    world.advance(61)  # an hour after the thread's last buzz: a contact again
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=2, number=1))
    later = shown(world)[-1]
    assert later.notified is True and later.reply_to == opened.message_id


def test_a_comment_is_the_first_contact_of_a_thread_no_message_began_and_its_follow_up_replies_to_it(world):
    world.deliver("issue_comment", issue_comment_by("alice", comment_id=1, number=7))
    world.deliver("issue_comment", issue_comment_by("carol", comment_id=2, number=7))
    first, second = shown(world)
    assert first.notified and first.reply_to is None and not second.notified and second.reply_to == first.message_id


def test_an_outsiders_comment_on_a_release_pull_request_replies_under_its_message(world):
    from pager_world.cases import outside, ready

    ready(world)
    [release_message] = shown(world)
    comment = outside("issue_comment", "created", who="comment", **{
        "issue.pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/2"}, "issue.number": 2,
        "issue.title": "chore(master): release 1.2.0"})
    assert world.deliver("issue_comment", comment)[1]["outcome"].startswith("sent")
    reply = shown(world)[-1]
    assert reply.text.startswith("💬 alice commented on pull request") and reply.reply_to == release_message.message_id


def test_comments_on_a_release_follow_its_message_when_it_is_posted_anew_ready_to_merge(world):
    from pager_world.cases import outside

    def comment(cid: int) -> dict:
        return outside("issue_comment", "created", who="comment", **{
            "issue.pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/2"}, "issue.number": 2,
            "issue.title": "chore(master): release 1.2.0", "comment.id": cid,
            "comment.html_url": f"https://github.com/{REPO}/pull/2#issuecomment-{cid}"})

    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("issue_comment", comment(1))
    world.advance(120)
    world.deliver("check_suite", suite_passed())  # ready: the release's message is posted anew, with a sound
    [ready] = [m for m in shown(world) if m.text.startswith("🔀")]
    world.deliver("issue_comment", comment(2))
    assert shown(world)[-1].reply_to == ready.message_id


def test_a_follow_up_whose_first_message_is_gone_is_sent_all_the_same(world):
    world.deliver("issues", issue_opened())
    world.chat.delete(shown(world)[0].message_id)  # the maintainer deleted it
    assert world.deliver("issue_comment", issue_comment_by("alice", comment_id=1, number=1))[0] == 200
    [comment] = shown(world)
    assert comment.reply_to is None and "alice commented on issue" in comment.text


def test_a_follow_up_in_a_forum_topic_whose_first_message_is_gone_is_shown_without_the_reply(make_world):
    # In a forum topic Telegram refuses a reply whose message is gone, allow_sending_without_reply or not
    # (ReplyParameters: "Always False for replies in another chat or forum topic"): sent again without it.
    world = make_world(telegram_chat_id="-1009", telegram_thread_id=7)
    world.chat.add_chat("-1009", "supergroup", forum=True, topics=[7])
    world.deliver("issues", issue_opened())
    world.chat.delete(shown(world)[0].message_id)  # the maintainer deleted it
    assert world.deliver("issue_comment", issue_comment_by("alice", comment_id=1, number=1))[0] == 200
    [comment] = shown(world)
    assert comment.reply_to is None and comment.thread_id == 7 and "alice commented on issue" in comment.text
    assert world.chat.refused == [("sendMessage", "Bad Request: message to be replied not found")]


@pytest.mark.parametrize("status, answered", [(502, 500), (404, 424)])  # GitHub failing; refusing for good
def test_a_thread_whose_draft_failed_after_its_message_still_gathers_its_follow_ups_and_its_mute(
        make_world, status, answered):
    world = make_world(buzz_gap_minutes=0)
    world.hub.fail(r"POST /repos/[^/]+/[^/]+/dispatches", status, count=1 if status == 502 else 10)
    assert world.deliver("issues", issue_opened(), guid="opening")[0] == answered  # shown; its draft failed
    opened = shown(world)[0]
    assert world.press(f"🔕 Mute {REPO}", opened.message_id)[1]["outcome"].startswith(f"🔕 {REPO} muted")  # the thread knows its repository
    world.advance(5)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=1))
    world.advance(5)
    world.deliver_again("opening")
    world.deliver("issue_comment", issue_comment_by("carol", comment_id=6, number=1))
    follow_ups = [m for m in shown(world) if m.message_id != opened.message_id and m.text.startswith("💬")]
    assert [m.reply_to for m in follow_ups] == [opened.message_id] * 2
    assert buzzed(world) == [opened.text.splitlines()[0]]  # the first contact called; its follow-ups did not


def test_an_edit_that_came_before_its_opening_was_shown_is_what_the_late_opening_shows(world):
    from pager_world.cases import outside

    world.chat.fail("sendMessage", 502)
    assert world.deliver("issues", issue_opened(**{"issue.body": "It crashes."}), guid="opening")[0] == 500
    steps = outside("issues", "edited", **{"issue.updated_at": "2026-12-01T12:00:00Z",
                                            "issue.body": "It crashes. Steps: Windows 11."})
    assert world.deliver("issues", steps, guid="edit")[1]["outcome"] == "kept for its opening: its thread was never shown"
    world.deliver_again("opening")  # the sweep's redelivery carries the text the issue was opened with
    [only] = shown(world)
    assert "Steps: Windows 11." in only.text and only.notified
    assert world.deliver_again("edit")[1]["outcome"] == "stale: a newer edit was shown"
    assert len(shown(world)) == 1


def test_once_the_group_became_a_supergroup_a_thread_begins_anew_there_and_its_follow_ups_reply(world):
    world.deliver("issues", issue_opened())
    new = world.chat.migrate(CHAT_ID)
    for n in (5, 6, 7):
        world.advance(5)
        world.deliver("issue_comment", issue_comment_by(f"user{n}", comment_id=n, number=1), guid=f"comment-{n}")
    first, *rest = [m for m in shown(world) if m.chat_id == new]
    assert first.reply_to is None and [m.reply_to for m in rest] == [first.message_id] * 2
    world.deliver_again("comment-5")  # a redelivery of one shown before keeps the thread where it is
    world.deliver("issue_comment", issue_comment_by("user8", comment_id=8, number=1))
    assert shown(world)[-1].reply_to == first.message_id and shown(world)[-1].chat_id == new


def test_a_late_opening_shows_the_newest_edit_also_when_a_comment_began_its_thread(world):
    from pager_world.cases import outside

    world.chat.fail("sendMessage", 502)
    assert world.deliver("issues", issue_opened(**{"issue.body": "v0"}), guid="opening")[0] == 500
    world.deliver("issues", outside("issues", "edited", **{"issue.updated_at": "2026-12-01T12:00:00Z", "issue.body": "v1"}))
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=1))  # begins the thread
    world.deliver("issues", outside("issues", "edited", **{"issue.updated_at": "2026-12-01T13:00:00Z", "issue.body": "v2"}))
    world.deliver_again("opening")
    assert "<i>v2</i>" in shown(world)[-1].text


def test_after_the_group_became_a_supergroup_a_release_thread_begins_anew_there(world):
    from pager_world.cases import outside, ready

    def comment(n: int) -> dict:
        return outside("issue_comment", "created", who="comment", **{
            "issue.pull_request": {"url": f"https://api.github.com/repos/{REPO}/pulls/2"}, "issue.number": 2,
            "issue.title": "chore(master): release 1.2.0", "comment.id": n, "comment.user.login": f"user{n}",
            "sender.login": f"user{n}", "comment.html_url": f"https://github.com/{REPO}/pull/2#issuecomment-{n}"})

    ready(world)
    new = world.chat.migrate(CHAT_ID)
    for n in (1, 2, 3):
        world.advance(5)
        world.deliver("issue_comment", comment(n))
    first, *rest = [m for m in shown(world) if m.chat_id == new]
    assert first.reply_to is None and [m.reply_to for m in rest] == [first.message_id] * 2


def test_after_the_group_became_a_supergroup_a_first_message_whose_draft_failed_begins_the_thread(world):
    world.deliver("issues", issue_opened())
    new = world.chat.migrate(CHAT_ID)
    world.advance(5)
    world.hub.fail(r"POST /repos/[^/]+/[^/]+/dispatches", 502)
    assert world.deliver("issue_comment", issue_comment_by("user5", comment_id=5, number=1), guid="c5")[0] == 500
    world.deliver_again("c5")
    world.advance(5)
    world.deliver("issue_comment", issue_comment_by("user6", comment_id=6, number=1))
    first, second = [m for m in shown(world) if m.chat_id == new]
    assert second.reply_to == first.message_id


def test_a_contribution_delivered_twice_buzzes_once(world):
    body = issue_opened()
    world.deliver("issues", body, guid="g1")
    world.deliver_again("g1")
    assert len(world.chat.sent) == 1 and buzzed(world) == [shown(world)[0].text.splitlines()[0]]


# -- the phone's rest ----------------------------------------------------------------------------------------


@pytest.fixture
def resting(make_world):
    """A world whose phone rests an hour after a call (whatever the default)."""
    return make_world(buzz_gap_minutes=60)


def test_while_the_phone_rests_what_is_soon_waits_for_the_next_call_and_what_is_now_buzzes():
    resting = Volume(rest=(0.0, 3600.0))
    for moment in (Moment.CONTACT, Moment.RELEASE_READY):
        assert MOMENTS[moment].urgency is Urgency.SOON
        sound = resting.sound(moment)
        assert sound.buzz is False and sound.period == (0.0, 3600.0)
        assert Volume().sound(moment).rests is True  # its buzz is a call: the phone rests after it
    for moment in (Moment.ALARM_RED, Moment.HEALTH):
        assert MOMENTS[moment].urgency is Urgency.NOW
        sound = resting.sound(moment)
        assert sound.buzz is True and sound.period is None  # buzzes now, whatever buzzed before
    assert resting.sound(Moment.ALARM_RED).rests is True and resting.sound(Moment.HEALTH).rests is False
    assert resting.sound(Moment.FOLLOW_UP).summary is False  # silent anyway: nothing to keep
    quiet = Volume(quiet=(0.0, 3600.0), rest=(0.0, 3600.0))
    assert all(quiet.sound(m).period == (0.0, 3600.0) for m in (Moment.ALARM_RED, Moment.CONTACT))  # the night keeps all


def test_an_alarm_that_buzzed_may_buzz_again_only_an_hour_later():
    from pager.attention import NOW_AGAIN_SECONDS, again_at

    assert again_at(None, 5000.0) is None
    assert again_at(1000.0, 1000.0) == 1000.0 + NOW_AGAIN_SECONDS
    assert again_at(1000.0, 1000.0 + NOW_AGAIN_SECONDS - 1) == 1000.0 + NOW_AGAIN_SECONDS
    assert again_at(1000.0, 1000.0 + NOW_AGAIN_SECONDS) is None
    assert again_at(1000.0, 999.0) is None  # a clock behind the last buzz holds nothing


def test_the_rest_runs_from_the_last_call_and_one_that_ends_in_quiet_hours_lasts_to_their_end():
    assert rest_of(None, 3600, 100, None) is None
    assert rest_of(1000.0, 3600, 1000, None) == (1000.0, 4600.0)
    assert rest_of(1000.0, 3600, 4600, None) is None  # over
    assert rest_of(1000.0, 0, 1000, None) is None  # BUZZ_GAP_MINUTES=0: the phone never rests
    zone = ZoneInfo("Europe/Berlin")
    quiet = QuietHours.parse("22:00-07:00", zone)
    called = datetime(2027, 1, 15, 21, 30, tzinfo=zone).timestamp()
    start, end = rest_of(called, 3600, called + 60, quiet)
    assert (datetime.fromtimestamp(start, zone).hour, datetime.fromtimestamp(end, zone).hour) == (22, 7)


def test_a_rest_that_ends_so_close_before_quiet_hours_that_its_call_would_come_inside_lasts_to_their_end():
    zone = ZoneInfo("Europe/Berlin")
    quiet = QuietHours.parse("22:00-07:00", zone)
    called = datetime(2027, 1, 15, 20, 59, tzinfo=zone).timestamp()  # its rest ends at 21:59, its call inside them
    start, end = rest_of(called, 3600, called + 60, quiet)
    assert (datetime.fromtimestamp(start, zone).hour, datetime.fromtimestamp(end, zone).hour) == (22, 7)
    called = datetime(2027, 1, 15, 20, 55, tzinfo=zone).timestamp()  # ends at 21:55: its call comes before them
    assert rest_of(called, 3600, called + 60, quiet) == (called, called + 3600)


def test_contacts_while_the_phone_rests_arrive_silently_and_one_message_calls_for_them_when_it_ends(resting):
    world = resting
    world.deliver("issues", issue_opened())  # the first contact calls: the phone rests an hour
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))
    world.advance(20)
    world.deliver("issue_comment", issue_comment_by("carol", comment_id=6, number=9))
    first, bob, carol = shown(world)
    assert first.notified and not bob.notified and not carol.notified  # shown at once, without a sound
    world.advance(29)
    tick(world)
    assert len(buzzed(world)) == 1
    world.advance(1)
    tick(world)
    [call] = [m for m in shown(world) if m.text.startswith("📬")]
    assert call.notified and call.text.splitlines()[:2] == [  # what it holds, and where, linked
        f'📬 2 new from outside — <a href="https://github.com/{REPO}">{REPO}</a>',
        "Kept without a sound since 08:00, while the phone rested"]
    bob_line, carol_line = call.text.splitlines()[2:]  # one line a thing, linked: what it counts
    assert bob_line.startswith("💬 <a href=") and "bob commented on issue" in bob_line and f"{REPO}#9" in carol_line
    world.advance(5)  # the call began a rest of its own
    world.deliver("issue_comment", issue_comment_by("dave", comment_id=7, number=10))
    assert len(buzzed(world)) == 2 and not shown(world)[-1].notified
    world.advance(1)
    tick(world)
    assert len(buzzed(world)) == 2  # once per rest


def test_a_rests_call_leaves_out_what_no_longer_needs_you_and_is_not_sent_when_nothing_does(resting):
    world = resting
    world.deliver("issues", issue_opened())  # the call
    world.advance(10)
    fifth = {"issue.number": 5, "issue.html_url": f"https://github.com/{REPO}/issues/5", "issue.id": 5005}
    world.deliver("issues", issue_opened(**fifth))  # kept for the next call ...
    assert not shown(world)[-1].notified
    world.advance(10)
    world.deliver("issues", issue_closed(**fifth))  # ... and closed before it
    world.advance(41)
    tick(world)
    assert len(buzzed(world)) == 1 and not [m for m in shown(world) if m.text.startswith("📬")]


def test_a_release_ready_while_the_phone_rests_waits_for_its_call_and_comes_as_itself(resting):
    world = resting
    world.deliver("issues", issue_opened())
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    assert len(buzzed(world)) == 1 and "🔀 Merge" in str(shown(world)[-1].buttons)  # offered at once, silently
    silent = shown(world)[-1].message_id
    world.advance(60)
    tick(world)  # the rest's call holds one thing: the release's own message, posted anew with a sound
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("🔀 ")
    assert "🔀 Merge" in str(shown(world)[-1].buttons) and silent in world.chat.deleted
    assert not [m for m in shown(world) if m.text.startswith("📬")]
    tick(world)
    assert len(buzzed(world)) == 2  # once


def test_a_rest_with_nothing_kept_ends_without_a_message(resting):
    world = resting
    world.deliver("issues", issue_opened())
    world.advance(61)
    tick(world)
    assert len(shown(world)) == 1 and len(buzzed(world)) == 1


def test_a_contact_delivered_twice_while_the_phone_rests_is_kept_once_and_called_once(resting):
    world = resting
    world.deliver("issues", issue_opened())
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8), guid="g-bob")
    world.deliver_again("g-bob")
    world.advance(51)
    tick(world)
    tick(world)
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("💬 bob commented on issue")  # bob's, as itself
    assert [m.text.splitlines()[0] for m in shown(world)].count(buzzed(world)[-1]) == 1  # the silent one deleted


def test_a_failure_at_any_call_of_a_contact_while_the_phone_rests_keeps_it_once_in_the_end(make_world):
    def setup(w):
        w.deliver("issues", issue_opened())
        w.advance(10)

    def act(w):
        return w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8), guid="g-bob")[0]

    assert failure_matrix(lambda: make_world(buzz_gap_minutes=60), Scenario("contact in a rest", setup, act)).failed


# -- the phone's rest, as a maintainer would break it ---------------------------------------------------------


def calls(world) -> list:
    """The rests' calls in the chat: every message that buzzed after the first (the call the rest began with):
    a 📬 message that says what it holds, or the one thing it held, posted anew."""
    return [m for m in shown(world) if m.notified and m.author is None][1:]


FIFTH = {"issue.number": 5, "issue.html_url": f"https://github.com/{REPO}/issues/5", "issue.id": 5005}


def test_a_comment_on_an_issue_closed_while_the_phone_rests_is_left_out_of_its_call(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())  # the call at 08:00
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))  # kept
    w.advance(1)
    w.deliver("issue_comment", issue_comment_by("alice", comment_id=51, number=5, **{"issue.id": 5005}))  # kept
    w.advance(5)
    w.deliver("issues", issue_closed(**FIFTH))  # closed before the call
    w.advance(45)
    tick(w)
    assert not calls(w), calls(w)[0].text


def test_an_outsiders_comment_after_the_issue_was_closed_is_in_the_call_it_was_kept_for(make_world):
    w = make_world(buzz_gap_minutes=75)  # a rest (75 min) that outlasts the thread's hour of follow-ups
    w.deliver("issues", issue_opened(**{"issue.created_at": "2027-01-15T07:59:00Z"}))  # the call at 08:00
    w.advance(2)
    w.deliver("issues", issue_closed(**{"issue.updated_at": "2027-01-15T08:02:00Z"}))
    w.advance(63)
    comment = issue_comment_by("alice", comment_id=7, number=1, **{"comment.created_at": "2027-01-15T09:05:00Z",
                                                                    "comment.updated_at": "2027-01-15T09:05:00Z"})
    assert w.deliver("issue_comment", comment)[1]["outcome"] == "sent, kept for the summary, draft asked"
    w.advance(11)
    tick(w)
    [call] = calls(w)  # closed before she wrote: her comment still needs an answer; the one thing, as itself
    assert call.text.startswith("💬 alice commented on issue")


def at_0800(hm: str) -> str:
    return f"2027-01-15T{hm}:00Z"  # GitHub's time of a moment on the world's first morning


def test_an_issue_closed_again_after_an_outsiders_comment_is_left_out_of_the_call(make_world):
    w = make_world(buzz_gap_minutes=75)
    w.deliver("issues", issue_opened(**{"issue.created_at": at_0800("07:59"), "issue.updated_at": at_0800("07:59")}))
    w.advance(2)
    w.deliver("issues", issue_closed(**{"issue.updated_at": at_0800("08:02")}))
    w.advance(63)  # reopened on GitHub (its reopening never reaches pager), alice writes, it is closed again
    w.deliver("issue_comment", issue_comment_by("alice", comment_id=7, number=1, **{
        "comment.created_at": at_0800("09:05"), "comment.updated_at": at_0800("09:05")}))
    w.advance(5)
    assert w.deliver("issues", issue_closed(**{"issue.updated_at": at_0800("09:10")}))[1]["outcome"] == "already closed"
    w.advance(6)
    tick(w)
    assert not calls(w)  # closed after her comment: nothing left to call for


def test_an_outsiders_follow_up_after_the_issue_closed_keeps_its_thread_in_the_call(make_world):
    w = make_world(buzz_gap_minutes=75)
    w.deliver("issues", issue_opened(**{"issue.created_at": at_0800("07:59"), "issue.updated_at": at_0800("07:59")}))
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH, **{"issue.created_at": at_0800("08:10"), "issue.updated_at": at_0800("08:10")}))
    w.advance(5)
    w.deliver("issues", issue_closed(**FIFTH, **{"issue.updated_at": at_0800("08:15")}))
    w.advance(5)  # within the thread's hour: a silent follow-up, not kept on its own
    assert w.deliver("issue_comment", issue_comment_by("alice", comment_id=71, number=5, **{
        "issue.id": 5005, "comment.created_at": at_0800("08:20"), "comment.updated_at": at_0800("08:20")}))[0] == 200
    w.advance(60)
    tick(w)
    [call] = calls(w)  # she wrote after it closed: the thread still needs an answer
    # (its first message says closed: the call says it in words rather than post that one anew)
    assert call.text.startswith(f'📬 1 new from outside — <a href="https://github.com/{REPO}">') and "#5" in call.text


def test_an_outsiders_comment_on_a_maintainers_issue_closed_during_the_night_is_left_out_of_the_morning(make_world):
    w = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")
    w.now = datetime(2027, 1, 15, 23, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    own = {"issue.number": 5, "issue.author_association": "OWNER", "issue.user.login": "Codertocat"}
    w.deliver("issue_comment", issue_comment_by("bob", comment_id=51, number=5, **own, **{
        "comment.created_at": "2027-01-15T22:00:00Z", "comment.updated_at": "2027-01-15T22:00:00Z"}))
    w.advance(30)
    closing = issue_closed(**own, **{"issue.updated_at": "2027-01-15T22:30:00Z"})
    assert w.deliver("issues", closing)[1]["outcome"] == "recorded: closed"  # a thread pager showed a comment in
    w.now = datetime(2027, 1, 16, 7, 0, 30, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    tick(w)
    assert buzzed(w) == [] and not [m for m in shown(w) if m.text.startswith("🌅")]


def test_a_thread_kept_while_the_phone_rests_counts_once_in_its_call(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))
    for i in range(3):
        w.advance(1)
        w.deliver("issue_comment", issue_comment_by("alice", comment_id=60 + i, number=5, **{"issue.id": 5005}))
    w.advance(50)
    tick(w)
    [call] = calls(w)  # the thread once: its message, posted anew
    assert f"{REPO}#5" in call.text.splitlines()[0] and call.text.startswith("💬 ")


def test_a_thread_counts_once_in_a_rest_longer_than_the_hour_of_its_follow_ups(make_world):
    w = make_world(buzz_gap_minutes=75)  # a rest (75 min) that outlasts a thread's hour of follow-ups
    w.deliver("issues", issue_opened())  # the call at 08:00
    w.advance(5)
    w.deliver("issues", issue_opened(**FIFTH))  # kept, 08:05
    w.advance(61)
    w.deliver("issue_comment", issue_comment_by("alice", comment_id=51, number=5, **{"issue.id": 5005}))  # 09:06
    w.advance(10)
    tick(w)
    [call] = calls(w)
    assert f"{REPO}#5" in call.text.splitlines()[0] and call.text.startswith("💬 ")


def test_a_contact_of_a_repository_muted_while_the_phone_rests_is_left_out_of_its_call(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))
    w.advance(5)
    w.command(f"/mute {REPO} 8h")
    w.advance(50)
    tick(w)
    assert not calls(w)


def test_a_release_of_a_repository_muted_while_the_phone_rests_is_left_out_of_its_call(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())  # call 08:00
    w.advance(5)
    live_pull(w)
    w.deliver("pull_request", pull("opened"))
    w.deliver("check_suite", suite_passed())  # ready in the rest: kept
    w.command(f"/mute {REPO} 8h")
    w.advance(56)
    tick(w)
    assert not calls(w)


def test_a_rest_ending_just_before_quiet_hours_is_called_once_with_them_when_they_end(make_world):
    w = make_world(buzz_gap_minutes=60, quiet_hours="22:00-07:00")
    # START is 08:00 UTC; go to 20:59:30
    w.advance(12 * 60 + 59.5)
    w.deliver("issues", issue_opened())  # call at 20:59:30, rest ends 21:59:30 (not in quiet hours)
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))  # kept for 21:59:30
    w.advance(49.75)  # 21:59:15
    tick(w)
    w.advance(1)  # 22:00:15: the rest is over, but quiet hours began
    tick(w)
    w.advance(30)
    w.deliver("issue_comment", issue_comment_by("bob", comment_id=77, number=8))  # in the night
    for _ in range(9 * 60 + 2):
        w.advance(1)
        tick(w)
    assert len([b for b in buzzed(w) if b[0] in "📬🌅"]) == 1


def test_a_note_that_failed_and_comes_again_after_the_rest_is_called_after_all(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())
    w.advance(10)
    w.faults.fail("store", pattern="save summary#", kind="store", count=RECORD_ATTEMPTS)  # each try of its record
    status, _ = w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8), guid="g-bob")
    assert status == 500 and "bob" in shown(w)[-1].text  # shown, not kept: its redelivery keeps it, never shows it again
    w.advance(51)
    tick(w)  # rest over: nothing kept -> no call
    w.deliver_again("g-bob")  # the sweep's or the maintainer's redelivery
    for _ in range(180):
        w.advance(1)
        tick(w)
    assert any(b.startswith("📬") and "bob" in b for b in buzzed(w)) or any("bob" in m.text for m in calls(w))


def test_a_rest_made_longer_after_its_call_loses_nothing(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())  # 08:00
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))
    w.advance(5)
    w.deliver("issues", issue_closed(**FIFTH))
    w.advance(46)
    tick(w)  # 09:01: nothing left: summary "nothing"
    w.services.settings = dataclasses.replace(w.services.settings, buzz_gap_minutes=120)
    w.advance(10)
    w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))
    for _ in range(240):
        w.advance(1)
        tick(w)
    assert any("bob" in m.text for m in calls(w)) or shown(w)[-1].notified


def test_a_note_redelivered_after_its_rests_call_is_kept_for_the_next_one(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())  # call 08:00
    w.advance(10)
    w.deliver("issue_comment", issue_comment_by("carol", comment_id=6, number=9))  # kept fine
    w.advance(1)
    w.faults.fail("store", pattern="save summary#", kind="store", count=RECORD_ATTEMPTS)  # each try of its record
    status, _ = w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8), guid="g-bob")
    assert status == 500
    w.advance(50)
    tick(w)  # 09:01 the call: carol only
    w.deliver_again("g-bob")  # redelivered (sweep / Redeliver) after the call
    for _ in range(180):
        w.advance(1)
        tick(w)
    assert any("bob" in m.text for m in calls(w))


def test_a_contact_just_after_a_rests_end_calls_and_the_rests_call_follows_silently(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.advance(0.5)
    w.deliver("issues", issue_opened())  # call 08:00:30
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))  # kept
    w.advance(50)  # 09:00:30
    w.advance(10 / 60)  # 09:00:40, rest over, the check not yet
    w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))
    w.advance(20 / 60)  # 09:01:00
    tick(w)
    assert len(buzzed(w)) == 2


# -- the alarm's grace ----------------------------------------------------------------------------------------


def test_a_failure_that_passes_within_its_grace_never_buzzes(world):
    world.deliver("workflow_run", run("failure"))
    assert shown(world)[0].notified is False and "🛠 Start fix" in str(shown(world)[0].buttons)  # 🛠 throughout
    world.advance(10)
    world.deliver("workflow_run", run("success", attempt=2))  # a flaky run, re-run green
    world.advance(10)
    tick(world)
    assert buzzed(world) == [] and "is green again on master after 10 min" in shown(world)[0].text


def test_a_failure_still_red_past_its_grace_buzzes_exactly_once_from_the_minute_check(world):
    world.deliver("workflow_run", run("failure"))
    first = shown(world)[0].message_id
    world.advance(14)
    tick(world)
    assert buzzed(world) == []
    world.advance(1)
    summary = tick(world)
    assert summary["alarms_due"] and buzzed(world) == [shown(world)[0].text.splitlines()[0]]
    [red] = shown(world)  # posted anew with a sound, the silent one deleted
    assert red.message_id != first and red.notified and world.chat.deleted == [first]
    for _ in range(5):
        world.advance(1)
        assert tick(world).get("alarms_due") is None  # nothing comes due again
    assert len(buzzed(world)) == 1


def test_a_new_failing_workflow_in_a_red_alarm_buzzes_past_its_own_grace_but_not_within_the_hour_of_the_last(make_world):
    world = make_world(buzz_gap_minutes=0)  # the rule alone; with the phone's rest, see below
    world.deliver("workflow_run", run("failure"))
    world.advance(15)
    tick(world)  # test's buzz at 08:15
    world.advance(5)
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))
    assert len(buzzed(world)) == 1  # within lint's grace: an edit, silent
    world.advance(15)
    tick(world)  # lint past its grace at 08:35, but the alarm rang at 08:15: it waits for the hour
    assert len(buzzed(world)) == 1 and "lint run #163 failed" in shown(world)[-1].text
    [red] = attention_store.index(world.services).red
    assert red.due == world.now + 40 * MINUTE  # 09:15, an hour after the last buzz
    world.advance(39)
    tick(world)
    assert len(buzzed(world)) == 1
    world.advance(1)
    tick(world)
    assert len(buzzed(world)) == 2 and "lint run #163 failed" in shown(world)[-1].text
    world.deliver("workflow_run", run("failure", number=164))  # test fails again: the same entry, no new buzz
    world.advance(80)
    tick(world)
    assert len(buzzed(world)) == 2


def test_a_repository_that_turns_red_again_within_the_hour_of_its_last_buzz_rings_when_the_hour_ends(make_world):
    world = make_world(buzz_gap_minutes=0)
    world.deliver("workflow_run", run("failure"))
    world.advance(15)
    tick(world)  # rang at 08:15
    world.deliver("workflow_run", run("success", attempt=2))  # green again
    world.advance(10)
    world.deliver("workflow_run", run("failure", number=170))  # red again at 08:25: a flapping repository
    world.advance(15)
    tick(world)  # past its grace at 08:40, within the hour: silent
    assert len(buzzed(world)) == 1
    world.advance(35)
    tick(world)  # 09:15
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("🚨 ")


def test_a_red_branch_while_the_phone_rests_buzzes_when_its_grace_ends_and_the_rests_call_follows_it(resting):
    world = resting
    world.deliver("issues", issue_opened())  # a contact calls at 08:00: the phone rests an hour
    world.advance(5)
    fifth = {"issue.number": 5, "issue.html_url": f"https://github.com/{REPO}/issues/5", "issue.id": 5005}
    world.deliver("issues", issue_opened(**fifth))  # kept for the rest's call
    world.deliver("workflow_run", run("failure"))  # 08:05
    world.advance(14)
    tick(world)
    assert len(buzzed(world)) == 1
    world.advance(1)
    tick(world)  # 08:20: its grace is over, and it does not wait for the rest
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("🚨 ")
    world.advance(1)
    tick(world)  # what the rest kept comes with that call, without a sound
    assert len(buzzed(world)) == 2 and "#5" in shown(world)[-1].text
    world.advance(30)
    world.deliver("issues", issue_opened(**{"issue.number": 6, "issue.html_url": f"https://github.com/{REPO}/issues/6",
                                            "issue.id": 5006}))
    assert len(buzzed(world)) == 2  # the phone rests anew from the alarm's buzz
    world.advance(30)
    tick(world)
    assert len(buzzed(world)) == 3 and "#6" in buzzed(world)[-1]  # its call: the one thing, as itself


def test_a_delivery_after_the_grace_buzzes_without_waiting_for_the_check(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(16)
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))
    assert len(buzzed(world)) == 1 and "and 1 more" in buzzed(world)[0]


def test_the_index_of_red_alarms_follows_the_alarm_and_clears_with_it(world):
    from pager import attention_store

    world.deliver("workflow_run", run("failure"))
    [red] = attention_store.index(world.services).red
    assert (red.ref, red.repository, red.branch, red.due) == (str(REPO_ID), REPO, "master", world.now + 15 * MINUTE)
    world.deliver("workflow_run", run("success", attempt=2))
    assert attention_store.index(world.services).red == ()


def test_pagers_own_health_buzzes_at_once_and_once_per_entry(world):
    from pager_world.cases import delivery_entry

    alarm.update_alarm(world.services, alarm.control_alarm(world.services), opened={"delivery:g1": delivery_entry("g1")},
                       closed=[])
    assert shown(world)[0].notified
    world.advance(1)
    alarm.update_alarm(world.services, alarm.control_alarm(world.services), opened={"delivery:g2": delivery_entry("g2")},
                       closed=[])
    assert len(buzzed(world)) == 2  # a second entry: once more
    alarm.update_alarm(world.services, alarm.control_alarm(world.services), opened={}, closed=["delivery:g1"])
    world.advance(20)
    tick(world)
    assert len(buzzed(world)) == 2


def test_the_all_clear_keeps_what_was_red_struck_through_and_for_how_long(world):
    world.deliver("workflow_run", run("failure"))
    world.deliver("workflow_run", run("timed_out", workflow_id=9, name="lint"))
    world.advance(42)
    world.deliver("workflow_run", run("success", number=164))
    world.deliver("workflow_run", run("success", workflow_id=9, number=164))
    [clear] = shown(world)
    lines = clear.text.splitlines()
    assert lines[0].endswith("is green again on master after 42 min") and clear.buttons == []
    assert {line.split(">", 2)[-1].split("<")[0] for line in lines[1:]} == {"test run #163 failed", "lint run #163 timed out"}
    assert all(line.startswith("• <s>") for line in lines[1:])


# -- 🛠 ----------------------------------------------------------------------------------------------------


def test_start_fix_shows_who_started_it_and_when_and_its_button_returns_when_the_alarm_changes(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(2)
    assert world.press("🛠")[1]["outcome"] == "🛠 fix started"
    [message] = shown(world)
    assert "🛠 fix started Fri 08:02 by Maintainer" in message.text and "event%3Arepository_dispatch" in message.text
    assert message.labels() == (("👀 Seen",), (f"🔕 Mute {REPO} 8 h",))
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))  # the alarm changed: a fix may be wanted
    assert shown(world)[0].labels() == (("🛠 Start fix", "👀 Seen"), (f"🔕 Mute {REPO} 8 h",))


def test_start_fix_comes_back_after_its_hour_by_the_minute_check(world):
    world.deliver("workflow_run", run("failure"))
    world.press("🛠")
    world.advance(61)
    tick(world)
    assert shown(world)[0].labels()[0] == ("🛠 Start fix", "👀 Seen") and "fix started" not in shown(world)[0].text


def test_a_fix_under_way_holds_the_graces_buzz_until_its_run_fails(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(2)
    world.press("🛠")  # the person knows, and acted
    world.advance(20)
    tick(world)
    assert buzzed(world) == []
    ended = run("failure", workflow_id=77, name="pager-fix", **{
        "repository.full_name": CONTROL, "repository.id": 4242, "workflow_run.head_repository.full_name": CONTROL,
        "workflow_run.event": "repository_dispatch", "workflow_run.display_title": f"pager-fix {REPO}",
        "workflow_run.updated_at": "2027-01-15T08:25:00Z"})
    world.hub.installations[CONTROL] = world.hub.installations[REPO]
    world.advance(3)
    world.deliver("workflow_run", ended)  # the fix failed, the branch is still red: now it calls
    [call] = buzzed(world)
    assert call.startswith("🚨 ") and f"{REPO}</a> is red" in call


def test_a_fix_under_way_whose_run_never_says_holds_the_graces_buzz_for_its_hour(world):
    world.deliver("workflow_run", run("failure"))
    world.press("🛠")
    world.advance(59)
    tick(world)
    assert buzzed(world) == []
    world.advance(2)
    tick(world)
    assert len(buzzed(world)) == 1


# -- 👀 seen ---------------------------------------------------------------------------------------------------


def test_an_alarm_seen_says_by_whom_and_is_not_called_until_something_new_fails_in_it(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(5)
    status, body = world.press("👀")
    assert status == 200 and body["outcome"].startswith("👀 seen: it is not called again")
    [message] = shown(world)
    assert "👀 seen by Maintainer Fri 08:05" in message.text and message.labels() == (("🛠 Start fix",), (f"🔕 Mute {REPO} 8 h",))
    world.advance(30)
    tick(world)  # past its grace: seen, so it does not ring
    assert buzzed(world) == [] and "👀 seen by Maintainer" in shown(world)[0].text
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))  # something new fails in it
    assert "👀" not in shown(world)[0].text.split("\n")[1] and ("🛠 Start fix", "👀 Seen") in shown(world)[0].labels()
    world.advance(15)
    tick(world)
    [call] = buzzed(world)
    assert call.startswith("🚨 ") and "lint run #163 failed" in call


def test_seen_twice_says_who_saw_it_first_and_changes_nothing(world):
    world.deliver("workflow_run", run("failure"))
    message = shown(world)[0].message_id
    world.press("👀")
    before = world.store.dump()
    status, body = world.update(world.press_update(f"seen:{REPO_ID}", message_id=message))
    assert status == 200 and body["outcome"] == "👀 seen already, by Maintainer"
    assert {k: v for k, v in world.store.dump().items() if not k.startswith("press#")} == {
        k: v for k, v in before.items() if not k.startswith("press#")}


def test_a_green_alarm_seen_says_so(world):
    world.deliver("workflow_run", run("failure"))
    message = shown(world)[0].message_id
    world.deliver("workflow_run", run("success", attempt=2))
    status, body = world.update(world.press_update(f"seen:{REPO_ID}", message_id=message))
    assert body["outcome"] == "✅ all clear: nothing to look at" and "👀" not in shown(world)[0].text


def test_a_seen_alarm_stays_in_status_with_who_saw_it(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(3)
    world.press("👀")
    world.command("/status")
    [red] = [line for line in answer(world).splitlines() if line.startswith("🚨 ")]
    assert red.endswith("· 👀 seen by Maintainer Fri 08:03")


def test_a_failure_at_any_call_of_the_seen_button_acknowledges_once_in_the_end(make_world):
    from pager_world.cases import pressing

    scenario = Scenario("seen pressed", lambda w: w.deliver("workflow_run", run("failure")), *pressing("👀"), presses=False)
    assert failure_matrix(make_world, scenario).failed


# -- releases -------------------------------------------------------------------------------------------------


def test_a_release_opens_silently_and_buzzes_when_it_is_ready_to_merge(world):
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    assert shown(world)[0].notified is False
    world.deliver("check_suite", suite_passed())
    [ready] = shown(world)
    assert ready.notified and ready.text.startswith("🔀 ") and ready.labels() == (("🔀 Merge",),)
    world.press("🔀")
    assert len(buzzed(world)) == 1 and shown(world)[0].text.startswith("✅ ")  # merged: an edit, silent


def test_a_release_ready_in_a_muted_repository_is_shown_silently(world):
    world.command(f"/mute {REPO} 2h")
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    [release] = [m for m in shown(world) if m.author is None and "ready to merge" in m.text]
    assert not release.notified and release.labels() == (("🔀 Merge",),)
    assert not [first for first in buzzed(world) if "ready to merge" in first]


# -- quiet hours ----------------------------------------------------------------------------------------------


@pytest.fixture
def night(make_world):
    """A world whose maintainer sleeps from 22:00 to 07:00 in Berlin; its clock at 23:00 there."""
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")
    world.now = datetime(2027, 1, 15, 23, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    return world


def a_night_of_each(world) -> None:
    """A contact, an alarm red past its grace and a release ready to merge, at night: each kept, silently."""
    live_pull(world)
    world.deliver("issues", issue_opened())
    world.deliver("workflow_run", run("failure"))
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    world.advance(30)
    tick(world)  # the alarm past its grace, in quiet hours: noted, silent


def morning(world) -> None:
    """The first every-minute check after the night (07:00 in Berlin)."""
    world.now = datetime(2027, 1, 16, 7, 0, 30, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    tick(world)


def test_nothing_buzzes_in_quiet_hours_and_one_summary_buzzes_when_they_end(night):
    world = night
    a_night_of_each(world)
    assert [first for first in buzzed(world) if not first.startswith("🔕")] == []
    morning(world)
    [summary] = [m for m in shown(world) if m.notified and m.text.startswith("🌅")]
    lines = summary.text.splitlines()
    assert lines[:2] == ["🌅 1 repository red · 1 new from outside · 1 release ready",  # its name would pass 80
                         "Kept without a sound in quiet hours, 22:00–07:00"]
    red, contact, ready = lines[2:]  # one line a thing, each linked to it: exactly what the first line counts
    assert red.startswith(f'🚨 <a href="https://github.com/{REPO}/actions/runs/') and "test run #163 failed" in red
    assert contact.startswith("💬 <a href=") and "alice opened" in contact
    assert ready.startswith("🔀 <a href=") and f"{REPO}#2" in ready and ready.endswith("is ready to merge")
    world.advance(1)
    tick(world)
    assert len(buzzed(world)) == 1  # once


def test_a_contact_kept_for_the_summary_counts_as_its_threads_call_and_a_comment_within_the_hour_follows_up(make_world):
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin", buzz_gap_minutes=0)
    world.now = datetime(2027, 1, 16, 6, 50, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    world.deliver("issues", issue_opened())  # in quiet hours: silent, kept for the summary
    morning(world)
    [called] = [m for m in shown(world) if m.notified]  # the summary held one thing: the contact, posted anew
    assert called.text.startswith("💬 alice opened issue") and len(shown(world)) == 1
    world.advance(10)  # 07:10: within the hour of the contact the summary called for
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=1))
    comment = shown(world)[-1]
    assert comment.text.startswith("💬 bob") and comment.notified is False and comment.reply_to == called.message_id


def test_a_quiet_night_ends_in_no_summary(night):
    night.now += 9 * 3600
    tick(night)
    assert shown(night) == []


def test_a_night_whose_every_page_needs_nothing_more_by_morning_ends_in_no_summary(night):
    from pager_world.cases import merged

    world = night
    a_night_of_each(world)
    world.advance(60)
    world.deliver("issues", issue_closed())  # the outsider's issue closed,
    world.deliver("workflow_run", run("success", attempt=2))  # the branch green again,
    world.deliver("pull_request", merged(**{"pull_request.updated_at": "2026-12-01T12:00:00Z"}))  # the release merged
    morning(world)
    assert buzzed(world) == [] and not [m for m in shown(world) if m.text.startswith("🌅")]


def test_a_night_whose_pages_are_of_a_repository_muted_since_ends_in_no_summary(night):
    world = night
    world.deliver("issues", issue_opened())
    world.advance(60)
    world.command(f"/mute {REPO} 8h")  # its pages arrived silently: muted, they need nothing more
    morning(world)
    assert buzzed(world) == [] and not [m for m in shown(world) if m.text.startswith("🌅")]


def test_quiet_hours_end_in_one_buzz_when_an_alarm_comes_due_in_the_same_minute(night):
    world = night
    world.deliver("issues", issue_opened())
    world.now = datetime(2027, 1, 16, 6, 45, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    world.deliver("workflow_run", run("failure"))  # its grace ends at 07:00, with the night
    morning(world)
    [call] = buzzed(world)  # the alarm come due rings; what the night kept follows it without a sound
    assert call.startswith("🚨 ")
    contact = shown(world)[-1]
    assert contact.text.startswith("💬 alice opened issue") and not contact.notified and len(shown(world)) == 2


def test_a_contact_just_after_quiet_hours_end_calls_and_their_summary_follows_silently(night):
    world = night
    world.deliver("issues", issue_opened())
    world.now = datetime(2027, 1, 16, 7, 0, 5, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # calls: the night is over
    world.advance(0.5)
    tick(world)
    assert [first.split(" commented")[0] for first in buzzed(world)] == ["💬 bob"]
    assert shown(world)[-1].text.startswith("💬 alice opened issue")  # what the night kept, posted anew silently


def test_a_contact_kept_while_its_summary_reads_its_notes_follows_it_at_the_next_check(night, monkeypatch):
    world = night
    world.deliver("issues", issue_opened())
    read = attention_store.summary_notes

    def racing(services, start):  # a contact of the night, kept just as the summary reads what it holds
        found = read(services, start)
        if not world.chat.buzzes:
            at = world.now
            world.now = datetime(2027, 1, 16, 6, 59, 59, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
            world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))
            world.now = at
        return found

    monkeypatch.setattr(attention_store, "summary_notes", racing)
    world.now = datetime(2027, 1, 16, 7, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    tick(world)
    monkeypatch.setattr(attention_store, "summary_notes", read)
    world.advance(1)  # the next check
    tick(world)
    called = [m.text for m in shown(world) if m.notified and m.author is None]
    assert len(called) == 1 and "alice" in called[0]  # the summary's call, for alice, rang at 07:00 ...
    assert shown(world)[-1].text.startswith("💬 bob") and not shown(world)[-1].notified  # ... bob follows it, silently


def test_a_summarys_mark_in_the_checks_index_expires(night):
    world = night
    world.deliver("issues", issue_opened())
    morning(world)
    [mark] = [r for r in world.store.items("attention") if r.item.startswith("summary:")]
    _, _, expires_at = world.store.inner._items[("attention", mark.item)]  # the table's TTL attribute
    assert mark.data.get("sent") and expires_at is not None and expires_at > world.now


def test_a_summary_telegram_refuses_to_take_now_is_sent_by_a_later_check_once(night):
    world = night
    world.deliver("issues", issue_opened())
    world.now = datetime(2027, 1, 16, 7, 1, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    world.chat.fail("sendMessage", 502)
    tick(world)
    assert buzzed(world) == []
    world.advance(1)
    tick(world)
    world.advance(1)
    tick(world)
    assert len(buzzed(world)) == 1 and buzzed(world)[0].startswith("💬 alice opened issue")  # the one thing kept


def sending_summary(period):
    """The failure matrix's act: the summary of the period `period(world)` gives, sent; 500 for a Transient."""
    def act(w):
        start, end = period(w)
        try:
            due_signals.send_summary(w.services, start, end, (), w.now)
        except Transient:
            return 500
        return 200

    return act


def test_a_failure_at_any_call_of_the_summary_sends_it_once_in_the_end(make_world):
    def setup(w):
        w.now = datetime(2027, 1, 15, 23, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
        w.deliver("issues", issue_opened())
        w.now = datetime(2027, 1, 16, 7, 1, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()

    night = tuple(datetime(2027, 1, day, hour, tzinfo=ZoneInfo("Europe/Berlin")).timestamp() for day, hour in ((15, 22), (16, 7)))
    scenario = Scenario("summary", setup, sending_summary(lambda w: night))
    assert failure_matrix(lambda: make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin"), scenario).failed


def test_a_failure_at_any_call_of_a_rests_call_sends_it_once_in_the_end(make_world):
    def setup(w):
        w.deliver("issues", issue_opened())  # the call
        w.advance(10)
        w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept for the rest's call
        w.advance(51)
        [w.rest] = attention_store.index(w.services).summaries

    scenario = Scenario("rest's call", setup, sending_summary(lambda w: w.rest))
    assert failure_matrix(lambda: make_world(buzz_gap_minutes=60), scenario).failed


def test_a_failure_at_any_call_of_an_alarm_come_due_buzzes_once_in_the_end(make_world):
    def setup(w):
        w.deliver("workflow_run", run("failure"))
        w.advance(16)

    def act(w):
        try:
            alarm.render_now(w.services, EXAMPLE_ALARM)
        except Transient:
            return 500
        return 200

    assert failure_matrix(make_world, Scenario("alarm come due", setup, act)).failed


# -- mutes and commands -------------------------------------------------------------------------------------


def answer(world) -> str:
    """pager's answer to the last command: its reply, in the chat."""
    return [m for m in shown(world) if m.author is None][-1].text


def test_mute_silences_a_repository_without_losing_anything_and_unmute_lets_it_buzz_again(world):
    status, body = world.command(f"/mute {REPO} 2h")
    assert status == 200
    said = answer(world)
    assert said.startswith(f"🔕 {REPO} muted for 2 h, until 10:00") and not shown(world)[-1].notified
    world.deliver("issues", issue_opened())
    assert shown(world)[-1].text.startswith("💬 alice opened issue") and not shown(world)[-1].notified
    world.now += 5  # the next command, seconds later
    world.command(f"/unmute {REPO}")
    assert answer(world) == f"🔔 {REPO} buzzes again"
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=9))
    assert shown(world)[-1].notified


def test_a_mute_ends_by_itself(world):
    world.command(f"/mute {REPO} 30m")
    world.advance(31)
    world.deliver("issues", issue_opened())
    assert shown(world)[-1].notified


def test_an_alarm_red_past_its_grace_while_muted_never_buzzes_later(world):
    world.command(f"/mute {REPO} 1h")
    world.deliver("workflow_run", run("failure"))
    world.advance(20)
    tick(world)
    world.advance(60)
    tick(world)
    assert [first for first in buzzed(world) if first.startswith("🚨")] == []


def test_the_mute_button_mutes_the_repository_of_its_message(world):
    world.deliver("workflow_run", run("failure"))
    status, body = world.press(f"🔕 Mute {REPO} 8 h")
    assert body["outcome"] == f"🔕 {REPO} muted for 8 h, until 16:00"
    world.deliver("issues", issue_opened())
    assert not shown(world)[-1].notified
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=9))
    # the contribution's button too (a few seconds later, for 8 h from then)
    assert world.press(f"🔕 Mute {REPO}")[1]["outcome"] == f"🔕 {REPO} muted for 8 h, until 16:00"
    world.command(f"/mute {REPO} 7d")
    assert world.press("🔕", shown(world)[0].message_id)[1]["outcome"].startswith(f"🔕 {REPO} is muted already, until 22 Jan 08:00")


def test_each_mute_button_says_what_it_mutes_on_a_contribution_and_on_an_alarm(world):
    world.deliver("issues", issue_opened())
    world.deliver("workflow_run", run("failure"))
    contribution, alarm_message = shown(world)
    assert contribution.labels() == (("🔕 Mute this thread 8 h",), (f"🔕 Mute {REPO} 8 h",))
    assert alarm_message.labels() == (("🛠 Start fix", "👀 Seen"), (f"🔕 Mute {REPO} 8 h",))
    data = [button["callback_data"] for m in (contribution, alarm_message) for row in m.buttons for button in row]
    assert data == [f"mute:t:{REPO_ID}:i1", f"mute:c:{REPO_ID}:i1", f"fix:{REPO_ID}", f"seen:{REPO_ID}", f"mute:a:{REPO_ID}"]


def test_a_muted_thread_arrives_without_a_sound_while_the_rest_of_its_repository_still_buzzes(make_world):
    world = make_world(buzz_gap_minutes=0)
    world.deliver("issues", issue_opened())
    opened = shown(world)[0]
    assert world.press("🔕 Mute this thread", opened.message_id)[1]["outcome"] == f"🔕 {REPO}#1 muted for 8 h, until 16:00"
    world.advance(90)  # past the hour in which the thread's next contribution would follow up silently anyway
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=1))
    in_thread = shown(world)[-1]
    assert in_thread.text.startswith("💬 bob commented on issue") and in_thread.reply_to == opened.message_id
    assert not in_thread.notified  # shown all the same: silent, never lost
    sound = world.store.load(f"contribution#{REPO_ID}#issue#1#c5").data["sound"]
    assert sound == {"buzz": False, "why": "the thread is muted: silent, never lost"}
    world.deliver("issue_comment", issue_comment_by("carol", comment_id=6, number=9))  # another thread of the repository
    assert shown(world)[-1].text.startswith("💬 carol commented on issue") and shown(world)[-1].notified


def test_a_mute_is_answered_by_a_silent_reply_that_says_what_it_muted_until_when_and_by_whom_with_unmute(world):
    world.deliver("issues", issue_opened())
    opened = shown(world)[0].message_id
    world.press("🔕 Mute this thread", opened)
    said = shown(world)[-1]
    assert said.text == (f'🔕 <a href="https://github.com/{REPO}/issues/1">{REPO}#1</a> muted for 8 h, until 16:00 '
                         f"(by Maintainer): its contributions arrive without a sound; the rest of {REPO} still buzzes")
    assert said.reply_to == opened and not said.notified and said.labels() == (("🔔 Unmute this thread",),)
    world.press(f"🔕 Mute {REPO}", opened)
    said = shown(world)[-1]
    assert said.text == f"🔕 {REPO} muted for 8 h, until 16:00 (by Maintainer): its pages arrive without a sound"
    assert said.reply_to == opened and not said.notified and said.labels() == ((f"🔔 Unmute {REPO}",),)
    world.press(f"🔕 Mute {REPO}", opened)  # pressed again: the mute stands, and its answer offers 🔔 as well
    said = shown(world)[-1]
    assert said.text.startswith(f"🔕 {REPO} is muted already, until 16:00 (by Maintainer)")
    assert said.labels() == ((f"🔔 Unmute {REPO}",),)


def test_unmute_lets_a_thread_or_a_repository_buzz_again_and_pressed_twice_says_it_was_not_muted(make_world):
    world = make_world(buzz_gap_minutes=0)
    world.deliver("issues", issue_opened())
    opened = shown(world)[0].message_id
    world.press("🔕 Mute this thread", opened)
    unmute = shown(world)[-1].message_id
    assert world.press("🔔", unmute)[1]["outcome"] == f"🔔 {REPO}#1 buzzes again"
    assert world.press("🔔", unmute)[1]["outcome"] == f"{REPO}#1 was not muted"
    world.advance(90)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=1))
    assert shown(world)[-1].text.startswith("💬 bob") and shown(world)[-1].notified
    world.press(f"🔕 Mute {REPO}", opened)
    unmute = shown(world)[-1].message_id
    assert world.press("🔔", unmute, callback_id="u1")[1]["outcome"] == f"🔔 {REPO} buzzes again"
    assert world.chat.answers[-1] == ("u1", f"🔔 {REPO} buzzes again")
    assert world.press("🔔", unmute)[1]["outcome"] == f"{REPO} was not muted"
    world.advance(90)
    world.deliver("issue_comment", issue_comment_by("carol", comment_id=6, number=9))
    assert shown(world)[-1].text.startswith("💬 carol") and shown(world)[-1].notified


def test_only_an_allowed_user_in_pagers_chat_unmutes(world):
    world.command(f"/mute {REPO} 2h")
    unmute = shown(world)[-1].message_id
    assert world.press("🔔", unmute, user=7)[1]["outcome"] == "not allowed"
    assert world.press("🔔", unmute, chat="-1002")[1]["outcome"] == "not allowed"
    assert attention_store.mute_of(world.services, REPO_ID, world.now) is not None


def test_a_mute_press_telegram_sends_again_mutes_and_answers_in_the_chat_once(world):
    world.deliver("issues", issue_opened())
    opened = shown(world)[0].message_id
    update = world.press_update(world.chat.button_data(opened, "🔕 Mute this thread"), message_id=opened, callback_id="p1")
    assert world.update(update) == world.update(update) == (200, {"outcome": f"🔕 {REPO}#1 muted for 8 h, until 16:00"})
    assert len([m for m in shown(world) if m.text.startswith("🔕")]) == 1


def test_a_mute_whose_answer_telegram_cannot_take_now_is_said_at_once_and_shown_when_telegram_sends_it_again(world):
    world.deliver("issues", issue_opened())
    opened = shown(world)[0].message_id
    update = world.press_update(world.chat.button_data(opened, "🔕 Mute this thread"), message_id=opened, callback_id="p1")
    world.chat.fail("sendMessage", 502)
    assert world.update(update)[0] == 500  # muted, its message failed: Telegram sends the update again
    assert world.chat.answers == [("p1", f"🔕 {REPO}#1 muted for 8 h, until 16:00")]
    assert attention_store.mute_of(world.services, REPO_ID, world.now, ("issue", 1)) is not None
    world.advance(1)
    assert world.update(update) == (200, {"outcome": f"🔕 {REPO}#1 muted for 8 h, until 16:00"})
    [said] = [m for m in shown(world) if m.text.startswith("🔕")]
    assert said.reply_to == opened and said.labels() == (("🔔 Unmute this thread",),)


def test_the_mute_commands_answer_offers_unmute_and_unmute_answers_without_one(world):
    world.command(f"/mute {REPO} 2h")
    said = shown(world)[-1]
    assert said.text == f"🔕 {REPO} muted for 2 h, until 10:00 (by Maintainer): its pages arrive without a sound"
    assert said.labels() == ((f"🔔 Unmute {REPO}",),) and said.reply_to is not None and not said.notified
    assert world.press("🔔", said.message_id)[1]["outcome"] == f"🔔 {REPO} buzzes again"
    world.deliver("issues", issue_opened())
    assert shown(world)[-1].notified
    world.now += 5  # the next command, seconds later
    world.command(f"/unmute {REPO}")
    assert (answer(world), shown(world)[-1].labels()) == (f"{REPO} was not muted", None)


def test_status_lists_each_mute_with_unmute_the_soonest_to_end_first(world):
    world.deliver("issues", issue_opened())
    world.press("🔕 Mute this thread", shown(world)[0].message_id)
    world.command(f"/mute {REPO} 3h")
    world.now += 5  # the next command, seconds later
    world.command("/status")
    status = shown(world)[-1]
    lines = status.text.splitlines()
    assert f"🔕 {REPO} muted until 11:00 (by Maintainer) · /unmute {REPO}" in lines
    assert f'🔕 <a href="https://github.com/{REPO}/issues/1">{REPO}#1</a> muted until 16:00 (by Maintainer)' in lines
    assert status.labels() == ((f"🔔 Unmute {REPO}",), (f"🔔 Unmute {REPO}#1",))
    assert world.press(f"🔔 Unmute {REPO}#1", status.message_id)[1]["outcome"] == f"🔔 {REPO}#1 buzzes again"
    assert world.press(f"🔔 Unmute {REPO}", status.message_id)[1]["outcome"] == f"🔔 {REPO} buzzes again"
    assert attention_store.mutes(world.services, world.now, threads=True) == []


def test_status_offers_unmute_for_ten_mutes_and_counts_the_rest(world):
    for number in range(1, 13):
        attention_store.set_mute(world.services, REPO_ID, REPO, world.now + 3600 * number, "Maintainer", ("issue", number))
    world.command("/status")
    status = shown(world)[-1]
    assert status.labels() == tuple((f"🔔 Unmute {REPO}#{n}",) for n in range(1, 11))
    assert "… and 2 more muted" in status.text.splitlines()


def test_a_contact_in_a_thread_muted_while_the_phone_rests_is_left_out_of_its_call(make_world):
    w = make_world(buzz_gap_minutes=60)
    w.deliver("issues", issue_opened())  # the call at 08:00: the phone rests until 09:00
    w.advance(10)
    w.deliver("issues", issue_opened(**FIFTH))  # kept for the rest's call
    w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=9))  # kept too
    w.advance(5)
    w.press("🔕 Mute this thread", next(m.message_id for m in shown(w) if f"{REPO}#5" in m.text))
    w.advance(50)
    tick(w)
    [call] = calls(w)
    assert call.text.startswith("💬 bob commented") and "#5" not in call.text  # the one thing left, as itself


def test_a_failure_at_any_call_of_the_thread_mute_button_mutes_and_answers_once_in_the_end(make_world):
    from pager_world.cases import pressing

    scenario = Scenario("thread mute pressed", lambda w: w.deliver("issues", issue_opened()),
                        *pressing("🔕 Mute this thread"), presses=False)
    assert failure_matrix(make_world, scenario).failed


@pytest.mark.parametrize("text, said", [
    ("/mute", "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)"),
    (f"/mute {REPO} soon", "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)"),
    (f"/mute {REPO} 2h soon", "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)"),
    (f"/mute {REPO} 1.5h", "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)"),
    ("/mute nobody/nothing", "unknown repository nobody/nothing: pager's app is not installed there"),
    ("/unmute a b", "usage: /unmute owner/name"),
    ("/mute o/. 2h", "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)"),  # "." and ".." name no repository
    ("/unmute o/..", "usage: /unmute owner/name"),
])
def test_a_malformed_command_gets_its_usage_and_an_unknown_repository_is_named(world, text, said):
    world.command(text)
    assert answer(world) == said
    assert world.store.dump().get("mute") is None


@pytest.mark.parametrize("given", [f"https://github.com/{REPO}", f"https://github.com/{REPO}/", f"github.com/{REPO}.git",
                                   f"https://github.com/{REPO}/pull/2", f"{REPO}/"])
def test_a_repository_pasted_as_its_address_on_github_is_muted(world, given):
    world.command(f"/mute {given} 2h")
    assert answer(world).startswith(f"🔕 {REPO} muted for 2 h")


def test_a_command_forwarded_from_someone_else_is_not_carried_out(world):
    update = world.chat.command_update(f"/mute {REPO} 2d", chat_id=CHAT_ID,
                                       user={"id": ALLOWED_USER, "is_bot": False, "first_name": "Maintainer"})
    update["message"]["forward_origin"] = {"type": "user", "date": 1, "sender_user": {"id": 7, "is_bot": False,
                                                                                       "first_name": "Eve"}}
    assert world.update(update)[1]["outcome"] == "ignored: forwarded"
    assert world.store.dump().get("mute") is None and world.chat.chat()[-1].author is not None  # no answer


@pytest.mark.parametrize("given, said", [("1h30m", "1 h 30 min"), ("2 h", "2 h"), ("1d 12h", "36 h"), ("1w", "7 days"),
                                         ("45min", "45 min")])
def test_a_mute_takes_a_duration_as_people_write_one(world, given, said):
    world.command(f"/mute {REPO} {given}")
    assert answer(world).startswith(f"🔕 {REPO} muted for {said}, until "), answer(world)


@pytest.mark.parametrize("longer", ["90d", "9999d", "99999h", "999999999m"])
def test_a_mute_longer_than_thirty_days_is_thirty_days(world, longer):
    world.command(f"/mute {REPO} {longer}")
    assert answer(world).startswith(f"🔕 {REPO} muted for 30 days (at most 30 days)")


def test_someone_not_allowed_is_answered_not_allowed_once_a_minute_in_the_chat_whoever_asks_and_nothing_changes(world):
    assert world.command(f"/mute {REPO} 2h", user=7)[1]["outcome"] == "not allowed"
    assert answer(world) == "not allowed"
    assert list(world.store.dump()) == ["command#room#-1001"]  # when it was said: no mute, nothing else
    world.now += 5
    assert world.command("/status", user=8)[1]["outcome"] == "not allowed (not said: said in this chat within the minute)"
    world.advance(1)
    assert world.command("/status", user=7)[1]["outcome"] == "not allowed"
    assert [m.text for m in shown(world) if m.author is None] == ["not allowed", "not allowed"]


def test_not_allowed_is_said_again_a_minute_after_it_was_said_to_the_second(world):
    assert world.command("/status", user=7)[1]["outcome"] == "not allowed"
    world.now += 59
    assert world.command("/status", user=7)[1]["outcome"] == "not allowed (not said: said in this chat within the minute)"
    world.now += 1
    assert world.command("/status", user=7)[1]["outcome"] == "not allowed"


def test_a_mute_of_no_time_is_not_a_mute(world):
    world.command(f"/mute {REPO} 0m")
    assert answer(world) == "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)"
    assert attention_store.mutes(world.services, world.now) == []


def test_commands_from_another_chat_are_answered_there_never_in_pagers_chat_and_never_flood_it(world):
    world.chat.add_chat("777", "private")
    for _ in range(25):  # someone found the bot and writes to it
        world.command("/help", user=777, chat="777")
    world.now += 5
    # even an allowed user: pager's chat only
    assert world.command("/status", user=ALLOWED_USER, chat="777")[1]["outcome"] == (
        "not allowed (not said: said in this chat within the minute)")
    assert [m.chat_id for m in shown(world) if m.author is None] == ["777"]  # "not allowed", once in that chat
    assert world.deliver("issues", issue_opened())[0] == 200 and shown(world)[-1].chat_id == "-1001"


def test_a_command_for_another_bot_is_left_to_it_and_one_for_this_bot_is_answered(world):
    world.chat.bot["can_read_all_group_messages"] = True  # privacy mode off: Telegram sends the bot every message
    assert world.command("/status@some_other_bot")[1]["outcome"] == "ignored: a command for another bot"
    assert world.command("/help@pager_test_bot")[1]["outcome"] == "answered /help"
    assert answer(world).startswith("ℹ️ pager pages this chat")
    # in privacy mode a plain command reaches it only if it posted last (Bot API, "Privacy mode"): /help says how
    assert answer(world).splitlines()[-1] == "Where other bots are, write a command to pager as /status@pager_test_bot."


def test_help_says_how_to_address_the_bot_even_when_telegram_does_not_say_its_name_now(world):
    world.chat.fail("getMe", 502)
    assert world.command("/help")[1]["outcome"] == "answered /help"
    assert answer(world).splitlines()[-1] == \
        "Where other bots are, write a command to pager with the bot's username: /status@ and its name."


def test_a_command_telegram_sends_again_is_answered_once(world):
    update = world.chat.command_update(f"/mute {REPO} 1h", chat_id="-1001",
                                       user={"id": ALLOWED_USER, "is_bot": False, "first_name": "Maintainer"})
    world.update(update)
    world.update(update)
    assert len([m for m in shown(world) if m.author is None]) == 1


def test_an_unmute_whose_answer_failed_says_it_unmuted_when_telegram_sends_it_again(world):
    world.command(f"/mute {REPO} 2h")
    world.now += 5  # the next command, seconds later
    update = world.chat.command_update(f"/unmute {REPO}", chat_id="-1001",
                                       user={"id": ALLOWED_USER, "is_bot": False, "first_name": "Maintainer"})
    world.chat.fail("sendMessage", 502)  # unmuted, but its answer failed: a 500, and Telegram sends it again
    assert world.update(update)[0] == 500
    world.advance(1)
    assert world.update(update) == (200, {"outcome": "answered /unmute"})
    assert answer(world) == f"🔔 {REPO} buzzes again"


def test_a_stranger_whose_chat_refuses_the_answer_is_told_nothing_and_nothing_fails(world):
    world.chat.add_chat("777", "group")  # a group of theirs where the bot may not write
    world.chat.fail("sendMessage", 400, body={"ok": False, "error_code": 400,
                                              "description": "Bad Request: not enough rights to send text messages to the chat"})
    status, body = world.command("/start", user=777, chat="777")
    assert status == 200 and body["outcome"].startswith("not allowed (the answer was refused")
    assert not [key for key in world.store.dump() if key.startswith("mute")]


@pytest.mark.parametrize("given, said", [("60h", "2 days 12 h"), ("84h", "3 days 12 h"), ("47h", "47 h"), ("3d", "3 days")])
def test_a_mute_says_how_long_it_lasts_as_asked(world, given, said):
    world.command(f"/mute {REPO} {given}")
    assert answer(world).startswith(f"🔕 {REPO} muted for {said}, until ")


def test_status_says_what_is_red_since_when_what_waits_for_merge_the_mutes_and_pagers_health(world):
    world.deliver("workflow_run", run("failure"))
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    world.command(f"/mute {REPO} 3h")
    world.advance(5)
    world.command("/status")
    lines = answer(world).splitlines()
    assert lines[0] == "📋 pager at 08:05: 1 repository red"
    assert lines[1] == "⚙️ pager: no sweep has run yet; all well"
    assert lines[2] == "📵 the phone rests until 10:00: nothing kept for a call"  # the release ready called at 08:00
    # the repository links the failing run itself
    assert lines[3].startswith(f'🚨 <a href="https://github.com/{REPO}/actions/runs/28235251631">{REPO}</a> since 08:00: '
                               'test run #163 failed')
    assert any(line.startswith("🔀 ready to merge: ") and f"{REPO}#2" in line for line in lines)
    assert any(line.startswith(f"🔕 {REPO} muted until 11:00") for line in lines)
    assert lines[-1] == "🌙 no quiet hours: what needs you buzzes day and night (the QuietHours setting, such as 22:00-07:00, sets some)"
    assert not shown(world)[-1].notified  # an answer: the person is looking at the chat


def test_status_cuts_a_long_title_full_of_ampersands_without_cutting_an_entity(world):
    from pager.attention_store import Red
    from pager.commands import Status, render_status
    from pager.html import visible_length

    title = "a" + "&" * 400  # an outsider's title: escaped, each & is five characters
    entries = {"wf:1": {"title": title, "kind": "workflow"}}
    s = Status([(Red("1", REPO, "main", world.now, None), entries)], [{"repository": REPO, "number": 2, "title": title, "url": "u"}],
               [], None, {"d:1": {"title": title}})
    health, red, ready = render_status(s, world.settings, world.now, 1).splitlines()[1:4]
    assert health.endswith(": a" + "&amp;" * 299)  # cut to 300 characters as shown, never inside an entity
    assert red.endswith(": a" + "&amp;" * 199) and ready.endswith(": a" + "&amp;" * 199)
    assert visible_length(ready) < 300


def test_status_says_when_the_sweep_stopped_running(world):
    world.sweep()
    world.advance(30)
    world.command("/status")
    assert answer(world).splitlines()[1] == "⚙️ pager: last sweep 08:00; all well"
    world.advance(60 * 48)
    world.command("/status")
    assert answer(world).splitlines()[1] == ("⚙️ pager: ⚠️ last sweep Fri 08:00, 2 days ago: it runs every 15 min, "
                                             "and nothing failed comes back without it")


def test_status_says_a_fix_under_way(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(2)
    world.press("🛠")
    world.command("/status")
    [red] = [line for line in answer(world).splitlines() if line.startswith("🚨")]
    assert "test run #163 failed · 🛠 fix started Fri 08:02 by Maintainer (" in red
    world.deliver("workflow_run", fix_run())  # GitHub lists the fix's run: /status links it too
    world.now += 5
    world.command("/status")
    [red] = [line for line in answer(world).splitlines() if line.startswith("🚨")]
    assert red.endswith(f'🛠 fix started Fri 08:02 by Maintainer (<a href="{FIX_RUN_URL}">its run</a>)')


def test_status_links_a_red_repository_to_its_most_important_failure(world):
    world.deliver("code_scanning_alert", alert("created", **{"ref": "refs/heads/master"}))
    world.deliver("check_suite", suite("failure"))  # another app's checks rank above an alert
    world.command("/status")
    [red] = [line for line in answer(world).splitlines() if line.startswith("🚨")]
    sha = example("check_suite", "completed")["check_suite"]["head_sha"]
    assert red.startswith(f'🚨 <a href="https://github.com/{REPO}/commit/{sha}/checks">{REPO}</a> since 08:00: ')
    assert red.endswith(", and 1 more")


def test_status_with_nothing_red_says_so_and_names_quiet_hours(make_world):
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")
    world.command("/status")
    lines = answer(world).splitlines()
    assert lines[0] == "📋 pager at 09:00: nothing is red"
    assert "🌙 quiet hours 22:00-07:00 (Europe/Berlin): next from 22:00" in lines


def test_status_says_until_when_the_phone_rests_and_how_many_wait_for_its_call(resting):
    world = resting
    world.command("/status")
    assert not [line for line in answer(world).splitlines() if line.startswith("📵")]  # no call yet: no rest
    world.deliver("issues", issue_opened())  # the call at 08:00: the phone rests until 09:00
    world.advance(10)
    world.command("/status")
    assert "📵 the phone rests until 09:00: nothing kept for a call" in answer(world).splitlines()
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))
    world.now += 5
    world.command("/status")
    assert "📵 the phone rests until 09:00: 1 thing kept for its call" in answer(world).splitlines()


# -- Telegram's refusals of an edit -------------------------------------------------------------------------


def test_an_edit_telegram_refuses_with_any_400_sends_the_message_anew_without_a_sound(world):
    world.deliver("workflow_run", run("failure"))
    world.chat.fail("editMessageText", 400, body={"ok": False, "error_code": 400,
                                                  "description": "Bad Request: message can't be edited"})
    assert world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))[0] == 200
    assert len(world.chat.sent) == 2 and not shown(world)[-1].notified and "lint run #163 failed" in shown(world)[-1].text


# -- failed midway, then again ----------------------------------------------------------------------------------


def test_a_failure_at_any_call_of_the_mute_button_mutes_once_in_the_end(make_world):
    from pager_world.cases import pressing

    scenario = Scenario("mute pressed", lambda w: w.deliver("workflow_run", run("failure")), *pressing("🔕"), presses=False)
    assert failure_matrix(make_world, scenario).failed


def test_a_failure_at_any_call_of_a_mute_command_mutes_and_answers_once_in_the_end(make_world):
    def act(w):
        w.last_update = w.chat.command_update(f"/mute {REPO} 2h", chat_id="-1001",
                                              user={"id": ALLOWED_USER, "is_bot": False, "first_name": "Maintainer"})
        return w.update(w.last_update)[0]

    def again(w, _status):
        return w.update(w.last_update)[0]  # Telegram delivers the update again after a non-2xx answer

    # Telegram's flood limit on the answer drops it (the answer gives way to pages): its own test below.
    faults = {**FAULTS_BY_SERVICE, "telegram": ("telegram-5xx",)}
    assert failure_matrix(make_world, Scenario("mute command", lambda w: None, act, again, faults=faults)).failed


def test_a_command_whose_answer_meets_telegrams_flood_limit_is_carried_out_and_its_answer_dropped(world):
    world.chat.fail("sendMessage", 429, body={"ok": False, "error_code": 429, "description": "Too Many Requests: retry after 2",
                                             "parameters": {"retry_after": 2}})
    status, body = world.command(f"/mute {REPO} 2h")
    assert status == 200 and body["outcome"].startswith("dropped: the answer met Telegram's flood limit")
    assert world.sleeps == [] and [m for m in shown(world) if m.author is None] == []  # not waited out, not sent again
    assert attention_store.mute_of(world.services, REPO_ID, world.now) is not None and not world.pending_claims()


def test_docs_attention_md_states_every_moment_as_the_code_decides_it():
    from pathlib import Path

    doc = (Path(__file__).parents[1] / "docs" / "attention.md").read_text()
    urgency = {"🔴 now": Urgency.NOW, "🟡 soon": Urgency.SOON, "🔕 silent": Urgency.SILENT}
    resting = {Urgency.NOW: "buzzes all the same", Urgency.SOON: "waits for the next call", Urgency.SILENT: "–"}
    rows = {}
    for line in doc.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[2] in urgency:
            rows[cells[0]] = (cells[1], urgency[cells[2]], cells[3], cells[4])
    assert rows == {m.value: (rule.message, rule.urgency, resting[rule.urgency], rule.why) for m, rule in MOMENTS.items()}


def test_the_command_menu_by_hand_is_the_one_setup_sets():
    import json
    import re
    from pathlib import Path

    from pager.commands import BOT_COMMANDS

    readme = (Path(__file__).parents[1] / "docs" / "deploy.md").read_text()
    found = re.search(r"--data-urlencode 'commands=(\[.*?\])'", readme, re.S)
    assert found is not None
    assert [(c["command"], c["description"]) for c in json.loads(found.group(1))] == list(BOT_COMMANDS)


def test_a_command_github_refuses_for_good_is_answered_with_the_reason_and_once(world):
    world.hub.fail(rf"^GET /repos/{REPO}$", 403, body={"message": "Resource not accessible by integration"})
    status, body = world.command(f"/mute {REPO} 2h")
    assert status == 200 and body["outcome"].startswith("refused: ")
    assert answer(world) == "⚠️ GitHub refused: Resource not accessible by integration"
    assert world.store.dump().get(f"mute [{REPO_ID}]") is None


def test_a_failure_at_any_call_of_an_alarm_come_due_in_quiet_hours_keeps_it_for_the_summary_once(make_world):
    def setup(w):
        w.now = datetime(2027, 1, 15, 23, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
        w.deliver("workflow_run", run("failure"))
        w.advance(16)

    def act(w):
        try:
            alarm.render_now(w.services, EXAMPLE_ALARM)
        except Transient:
            return 500
        return 200

    night_world = lambda: make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")  # noqa: E731
    assert failure_matrix(night_world, Scenario("alarm come due at night", setup, act)).failed
    # and the note is there, once: the summary names it
    w = night_world()
    setup(w)
    act(w)
    w.now = datetime(2027, 1, 16, 7, 1, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    tick(w)
    [call] = buzzed(w)  # the one thing the night kept: the alarm's own message, posted anew with a sound
    assert call.startswith(f'🚨 <a href="https://github.com/{REPO}">{REPO}</a> is red') and len(shown(w)) == 1


def test_a_ready_release_touched_days_later_asks_for_no_summary_again(make_world):
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")
    world.now = datetime(2027, 1, 15, 23, 0, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    world.now = datetime(2027, 1, 16, 7, 1, tzinfo=ZoneInfo("Europe/Berlin")).timestamp()
    tick(world)
    assert len(buzzed(world)) == 1
    world.advance(5 * 60)
    world.deliver("check_suite", suite_passed())  # its checks run again on the same head
    world.advance(4 * 24 * 60)
    world.deliver("check_suite", suite_passed())
    tick(world)
    assert len(buzzed(world)) == 1


def test_two_contributions_of_one_thread_at_the_same_moment_call_once_and_the_other_replies(world):
    statuses = world.concurrently(lambda: world.deliver("issues", issue_opened())[0],
                                  lambda: world.deliver("issue_comment", issue_comment_by("alice", comment_id=1, number=1))[0])
    assert statuses == [200, 200]
    first, second = shown(world)
    assert [first.notified, second.notified] == [True, False] and second.reply_to == first.message_id
    assert world.pending_claims() == []


def test_a_head_whose_merge_github_refused_is_not_offered_again_by_the_sweep_but_after_a_review(world):
    from pager_world.cases import pull_review_approved, ready

    world.hub.merge_methods[REPO] = {"merge"}  # pager squashes; the repository allows merge commits only
    ready(world)
    assert world.press("🔀")[1]["outcome"].startswith("GitHub refused the merge: ")
    for _ in range(3):
        world.advance(15)
        world.sweep()
    assert len([first for first in buzzed(world) if "ready to merge" in first]) == 1
    [release] = [m for m in shown(world) if m.author is None]
    assert "⚠️ GitHub refused the merge: " in release.text and release.labels() is None
    world.deliver("pull_request_review", pull_review_approved())  # a review may be what it lacked
    assert shown(world)[-1].labels() == (("🔀 Merge",),)


def test_a_merge_github_made_is_answered_merged_even_when_telegram_refuses_the_edit(world):
    from pager_world.cases import ready

    ready(world)
    world.chat.fail("editMessageText", 403, body={"ok": False, "error_code": 403,
                                                  "description": "Forbidden: bot is not a member of the supergroup chat"})
    world.press("🔀")
    assert len(world.hub.merges) == 1 and world.chat.answers[-1][1] == "🔀 merged (the message catches up in a moment)"


def test_the_fix_runs_end_says_how_it_ended_in_the_alarm_and_brings_start_fix_back(world):
    world.deliver("workflow_run", run("failure"))
    world.advance(2)
    world.press("🛠")
    world.advance(9)
    ended = run("failure", workflow_id=77, name="pager-fix", **{
        "repository.full_name": CONTROL, "repository.id": 4242, "workflow_run.head_repository.full_name": CONTROL,
        "workflow_run.event": "repository_dispatch", "workflow_run.display_title": f"pager-fix {REPO}",
        "workflow_run.updated_at": "2027-01-15T08:11:00Z", "workflow_run.html_url": "https://github.com/x/runs/9"})
    world.hub.installations[CONTROL] = world.hub.installations[REPO]
    assert world.deliver("workflow_run", ended)[1]["outcome"] == "fix ended"
    [alarm_message] = shown(world)  # the fix's run failing is said there; the control repository is not red for it
    assert "🛠 the fix by Maintainer failed Fri 08:11 (" in alarm_message.text
    assert alarm_message.labels()[0] == ("🛠 Start fix", "👀 Seen")
    assert world.deliver("workflow_run", ended)[1]["outcome"].endswith("no fix under way")  # twice: once


def test_a_pager_fix_run_that_passes_closes_what_a_failed_one_opened_in_the_control_repository_before(world):
    from pager.routing import Repository
    from pager.signals.common import default_branch

    def fix_run(conclusion: str, at: str, number: int) -> dict:
        return run(conclusion, workflow_id=77, name="pager-fix", number=number, **{
            "repository.full_name": CONTROL, "repository.name": "pager", "repository.id": 4242,
            "workflow_run.head_repository.full_name": CONTROL, "workflow_run.event": "repository_dispatch",
            "workflow_run.display_title": f"pager-fix {REPO}", "workflow_run.updated_at": at})

    world.hub.installations[CONTROL] = world.hub.installations[REPO]
    failed = fix_run("failure", "2027-01-15T08:11:00Z", 1)  # what the version before this one did with it
    alarm.apply(world.services, alarm.alarm_of(Repository(4242, CONTROL), default_branch(failed)), alarm.read_workflow_run(failed))
    world.advance(30)
    world.deliver("workflow_run", fix_run("success", "2027-01-15T08:45:00Z", 2))
    assert [m.text.splitlines()[0] for m in shown(world)][-1].startswith("✅ ")


def test_an_edit_by_its_outside_author_is_a_silent_reply_once_and_an_older_one_late_shows_nothing(world):
    from pager_world.cases import outside

    def edit(at: str, body: str, who: str = "alice") -> dict:
        return outside("issues", "edited", **{"issue.updated_at": at, "issue.body": body, "sender.login": who})

    world.deliver("issues", issue_opened())
    first = shown(world)[0]
    assert world.deliver("issues", edit("2026-12-01T12:00:00Z", "Also on Windows."))[1]["outcome"] == "sent"
    reply = shown(world)[-1]
    assert reply.text.startswith("💬 alice edited issue") and "Also on Windows." in reply.text
    assert reply.reply_to == first.message_id and not reply.notified
    assert world.deliver("issues", edit("2026-12-01T12:00:00Z", "Also on Windows."))[1]["outcome"] == "stale: a newer edit was shown"
    assert world.deliver("issues", edit("2026-12-01T11:00:00Z", "older"))[1]["outcome"] == "stale: a newer edit was shown"
    assert world.deliver("issues", edit("2026-12-01T13:00:00Z", "typo", who="maintainer"))[1]["outcome"] == \
        "ignored: not its author from outside"
    assert len(shown(world)) == 2


def test_an_edit_of_an_issue_never_shown_shows_nothing(world):
    from pager_world.cases import outside

    body = outside("issues", "edited", **{"issue.updated_at": "2026-12-01T12:00:00Z"})
    assert world.deliver("issues", body)[1]["outcome"] == "kept for its opening: its thread was never shown"
    assert shown(world) == []
