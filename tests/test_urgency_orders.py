"""Urgency (SPEC §6.1 as amended 2026-12-07, docs/attention.md "Urgency: now, soon, silent") in the orders and
failures that break it most easily: calls racing deliveries, a check twice, a table or Telegram failing midway, a
clock set back, a flake, the longest names, through the webhook, the buttons and the every-minute check.
"""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import pytest
from test_attention import buzzed, morning, shown, tick

from pager.html import visible_length
from pager.store import RECORD_ATTEMPTS
from pager_world.cases import issue_comment_by, issue_opened, live_pull, pull, run, suite_passed
from pager_world.world import REPO

BERLIN = ZoneInfo("Europe/Berlin")


def berlin(day: int, hour: int, minute: int = 0, second: int = 0) -> float:
    """A moment on the maintainer's clock (the fake world's first night is 15 to 16 January 2027)."""
    return datetime(2027, 1, day, hour, minute, second, tzinfo=BERLIN).timestamp()


@pytest.fixture
def resting(make_world):
    """A world whose phone rests an hour after a call (as tests/test_attention.py's)."""
    return make_world(buzz_gap_minutes=60)


@pytest.fixture
def night(make_world):
    """A world whose maintainer sleeps from 22:00 to 07:00 in Berlin; its clock at 23:00 there (the default rest)."""
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")
    world.now = berlin(15, 23)
    return world


# -- a call that holds one alarm, while a failure comes in ---------------------------------------------------------


def test_a_failure_delivered_while_the_morning_call_posts_the_alarm_anew_is_shown_and_rings(night):
    """A failure stored while a call posts its alarm anew (the delivery leaves its entry to the render under
    way) is shown by the render that follows the call, and rings past its grace."""
    world = night
    world.deliver("workflow_run", run("failure"))  # 23:00, red past its grace at 23:15: kept for the morning
    world.advance(16)
    tick(world)
    armed = [True]

    def lint_fails_meanwhile(service: str, name: str) -> None:
        if armed[0] and service == "telegram" and name == "sendMessage":
            armed[0] = False  # the call is posting the alarm anew: its head is claimed for that send
            assert world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))[0] == 200

    world.faults.observers.append(lint_fails_meanwhile)
    morning(world)  # the night held one thing: the alarm, posted anew with a sound
    assert not armed[0] and buzzed(world)[0].startswith("🚨 ")
    for _ in range(65):  # past lint's grace, and past the hour of the morning's call
        world.advance(1)
        tick(world)
    [message] = [m for m in shown(world) if m.text.startswith("🚨 ")]
    assert "lint run #163 failed" in message.text  # shown in the alarm ...
    assert len(buzzed(world)) == 2 and "lint" in buzzed(world)[-1]  # ... and rang once its grace (and the hour) ended


# -- what a call posted anew ---------------------------------------------------------------------------------------


def test_a_thread_the_morning_call_posted_anew_does_not_buzz_again_for_a_follow_up_within_the_hour(make_world):
    """A call that posts a contact anew with a sound is its thread's buzz: a follow-up within the hour is silent."""
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin", buzz_gap_minutes=0)
    world.now = berlin(15, 23)
    world.deliver("issues", issue_opened())  # at night: silent, kept for the morning
    morning(world)
    [called] = [m for m in shown(world) if m.notified]  # the morning's call: alice's issue, posted anew with a sound
    assert called.text.startswith("💬 alice opened issue")
    world.advance(5)  # 07:05: she answers in her thread, five minutes after the phone called for it
    world.deliver("issue_comment", issue_comment_by("alice", comment_id=5, number=1))
    comment = shown(world)[-1]
    assert comment.reply_to == called.message_id
    assert comment.notified is False, "a follow-up within the hour of its thread's call buzzed again"


def expiry(world, key: str, item: str = "") -> int | None:
    """When the table's TTL takes a record (its expiry attribute, as DynamoDB keeps it with the item)."""
    _, _, expires_at = world.store.inner._items[(key, item)]
    return expires_at


def test_a_contact_and_its_thread_called_as_themselves_still_expire_from_the_table(resting):
    """A contribution posted anew by a call, and its thread, keep their expiry in the table."""
    from pager.signals.contribution import THREAD

    world = resting
    world.deliver("issues", issue_opened())  # the call at 08:00
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept: its thread's first message
    thread = next(k for k, _ in world.store.inner._items if k.endswith("#issue#8"))
    comment = f"{thread}#c5"
    assert expiry(world, comment) is not None and expiry(world, thread, THREAD) is not None  # 180 days, as any contribution
    world.advance(51)
    tick(world)  # the rest's call: bob's comment, posted anew with a sound; its thread follows it
    assert buzzed(world)[-1].startswith("💬 bob commented on issue")
    # DynamoDB's PutItem replaces the whole item: a write without the TTL attribute keeps the record for ever
    lost = [name for name, at in (("the contribution's record", expiry(world, comment)),
                                  ("its thread's item", expiry(world, thread, THREAD))) if at is None]
    assert lost == [], f"no longer expire: {lost}"


def test_a_release_called_as_itself_still_expires_from_the_table(resting):
    """The same for a release posted anew by a call (its record is kept 180 days, `release.TTL_SECONDS`)."""
    from pager.signals.release import release_key
    from pager_world.world import REPO_ID

    world = resting
    world.deliver("issues", issue_opened())  # the call at 08:00
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())  # ready while the phone rests: kept
    key = release_key(REPO_ID, 2)
    assert expiry(world, key) is not None
    world.advance(61)
    tick(world)  # the rest's call: the release's own message, posted anew
    assert buzzed(world)[-1].startswith("🔀 ")
    assert expiry(world, key) is not None, "the release's record no longer expires"


def test_a_comment_called_as_itself_is_posted_anew_in_its_thread(resting):
    """A comment posted anew by a call stays a reply in its thread (docs/attention.md, "Threads")."""
    world = resting
    world.deliver("issues", issue_opened())  # alice's issue #1 calls at 08:00
    [opened] = shown(world)
    world.advance(65)
    world.deliver("issues", issue_opened(**{"issue.number": 5, "issue.id": 5005,
                                            "issue.html_url": f"https://github.com/{REPO}/issues/5"}))  # calls at 09:05
    world.advance(5)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=7, number=1))  # 09:10: a contact in #1, kept
    assert shown(world)[-1].reply_to == opened.message_id and not shown(world)[-1].notified
    world.advance(56)
    tick(world)  # 10:06: the rest's call holds one thing: bob's comment, posted anew with a sound
    called = shown(world)[-1]
    assert called.notified and called.text.startswith("💬 bob commented on issue")
    assert called.reply_to == opened.message_id, "posted anew outside its thread: no longer a reply to alice's issue"


# -- a rest an alarm cut short -------------------------------------------------------------------------------------


def test_a_contact_kept_late_for_a_rest_an_alarm_cut_short_follows_the_alarm_and_never_buzzes_in_its_rest(resting):
    """A contact whose note for a rest comes late (its first delivery failed), after an alarm ended that rest,
    follows the alarm without a sound and never buzzes inside the rest the alarm's call began."""
    world = resting
    world.deliver("issues", issue_opened())  # the call at 08:00: the phone rests to 09:00
    world.deliver("workflow_run", run("failure"))  # red at 08:00
    world.advance(10)
    # its note for the rest's call fails, each try: its record is written without it, and the delivery fails
    world.faults.fail("store", pattern="save summary#", kind="store", count=RECORD_ATTEMPTS)
    assert world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8), guid="bob")[0] == 500
    world.advance(5)
    tick(world)  # 08:15: the red branch rings, whatever the rest: the rest ends there (nothing was kept in it yet)
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("🚨 ")
    world.advance(5)
    assert world.deliver_again("bob")[0] == 200  # 08:20: bob's comment is kept at last, for the rest it came in
    for _ in range(54):  # to 09:14, within the rest the alarm's call at 08:15 began
        world.advance(1)
        tick(world)
    assert [first[:20] for first in buzzed(world)[2:]] == [], "a call buzzed inside the rest the alarm began"


def test_a_failure_at_any_call_of_an_alarm_ringing_while_the_phone_rests_cuts_the_rest_short_once_in_the_end(make_world):
    """An alarm that rings while the phone rests ends the rest (its call is recorded, tried again while the table
    throttles), whatever call of its render fails first."""
    from pager.errors import Transient
    from pager.signals import alarm
    from pager_world.matrix import Scenario, failure_matrix
    from pager_world.world import EXAMPLE_ALARM

    def setup(w):
        w.deliver("issues", issue_opened())  # the call at 08:00
        w.advance(5)
        w.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept for the rest's call
        w.deliver("workflow_run", run("failure"))
        w.advance(16)

    def act(w):
        try:
            alarm.render_now(w.services, EXAMPLE_ALARM)  # rings: it ends the rest there
        except Transient:
            return 500
        return 200

    assert failure_matrix(lambda: make_world(buzz_gap_minutes=60), Scenario("alarm rings in a rest", setup, act)).failed


def test_an_alarm_ringing_in_a_rest_that_runs_into_quiet_hours_leaves_what_it_kept_to_the_mornings_call(make_world):
    """docs/attention.md: a rest that runs into quiet hours lasts to their end, and their call is for both: an alarm
    that rings before them leaves what that rest kept to it (shown in the chat already, named in the morning)."""
    world = make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin")  # the default rest, 75 minutes
    world.now = berlin(15, 20, 50)
    world.deliver("issues", issue_opened())  # the call at 20:50: its rest would end at 22:05, so it lasts the night
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # 21:00: kept
    world.deliver("workflow_run", run("failure"))
    world.advance(15)
    tick(world)  # 21:15: the red branch rings
    assert buzzed(world)[-1].startswith("🚨 ")
    for _ in range(3):
        world.advance(1)
        tick(world)
    assert shown(world)[-1].text.startswith("🚨 ") and len(buzzed(world)) == 2  # bob waits for the morning's call
    world.now = berlin(16, 7, 0, 30)
    tick(world)
    morning = [m for m in shown(world) if m.notified][-1]  # the one thing the night kept: bob's, as itself
    assert morning.text.startswith("💬 bob commented") and morning.sent_at == world.now


# -- a call made twice ---------------------------------------------------------------------------------------------


def test_a_call_sent_whose_mark_in_the_index_failed_does_not_call_again_as_the_one_thing_left(resting):
    """A call sent whose mark in the check's index failed is not made again (its record says it was sent), even once
    one of its things needs nothing more."""
    from pager_world.cases import issue_closed

    world = resting
    world.deliver("issues", issue_opened())  # the call at 08:00
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept
    world.deliver("issues", issue_opened(**{"issue.number": 9, "issue.id": 5009,
                                            "issue.html_url": f"https://github.com/{REPO}/issues/9"}))  # kept
    armed = [True]

    def once_the_call_is_claimed(service: str, name: str) -> None:
        if armed[0] and service == "store" and name.startswith("save summary#") and "[" not in name:
            armed[0] = False  # the call is under way: its mark in the check's index, once it is sent, fails
            world.faults.fail("store", pattern=r"save attention \[summary:", kind="store", count=1)

    world.faults.observers.append(once_the_call_is_claimed)
    world.advance(51)
    tick(world)  # 09:01: the call of both, sent; its mark in the check's index not written
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("📬 2 new from outside")
    sent = len(world.chat.sent)
    world.deliver("issues", issue_closed(**{"issue.number": 9, "issue.id": 5009}))  # one of them is answered
    world.faults.fail("store", pattern="query attention$", kind="store", count=5)  # the table throttles a few minutes
    for _ in range(6):
        world.advance(1)
        tick(world)  # 09:07: the check finds the rest's call still to send
    assert len(buzzed(world)) == 2, f"the rest called twice: {buzzed(world)[1:]}"
    assert world.chat.sent[sent:] == [], "the rest's call was made again, as the one thing left"


def test_an_alarm_ringing_as_the_night_ends_is_not_posted_again_silently_by_the_nights_call_of_it(night):
    """An alarm that rings as the night ends is the night's call of it: the call does not post it anew below its
    own notification."""
    world = night
    world.deliver("workflow_run", run("failure"))  # 23:00
    world.advance(16)
    tick(world)  # kept for the morning: the night's one thing
    world.now = berlin(16, 6, 45)
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))  # its grace ends with the night
    before = len(world.chat.sent)
    morning(world)
    [(rang, _, first)] = world.chat.buzzes
    assert first.startswith("🚨 ") and "lint" in first  # it rings: it is now
    assert rang not in world.chat.deleted, "the message that rang was deleted under its notification, and posted anew"
    assert world.chat.sent[before:] == [rang]


# -- the hour between an alarm's buzzes, and 👀 ---------------------------------------------------------------------


def test_a_repository_the_nights_call_named_with_others_waits_the_hour_as_when_it_is_called_alone(night):
    """A repository a call named among other things rang with it: it waits its hour before it rings again, as one
    called alone does."""
    world = night
    world.deliver("workflow_run", run("failure"))  # 23:00
    world.deliver("issues", issue_opened())  # and a contact: the morning's call holds two things
    world.advance(16)
    tick(world)
    world.now = berlin(16, 6, 52)
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))  # its grace ends at 07:07
    morning(world)  # 07:00:30: 🌅 names the red repository, with a sound
    assert len(buzzed(world)) == 1 and buzzed(world)[0].startswith("🌅 1 repository red")
    for _ in range(20):  # to 07:20: lint past its grace, within the hour of the call that named its repository
        world.advance(1)
        tick(world)
    assert len(buzzed(world)) == 1, "called alone, the alarm would wait for the hour (decide_call keeps `called`)"


def test_a_clock_set_back_does_not_hold_a_red_branch_past_its_grace_for_hours(make_world):
    """A clock set back behind the alarm's last buzz holds nothing: a red branch rings past its grace."""
    world = make_world(buzz_gap_minutes=0)
    world.deliver("workflow_run", run("failure"))
    world.advance(15)
    tick(world)  # rang at 08:15
    world.deliver("workflow_run", run("success", attempt=2))
    world.now -= 2 * 3600  # the clock is set back two hours (06:15): `again_at` holds nothing behind the last buzz
    world.deliver("workflow_run", run("failure", number=170))  # red again
    for _ in range(20):  # its grace ends at 06:30
        world.advance(1)
        tick(world)
    assert len(buzzed(world)) == 2, "red past its grace, and the check holds it to an hour after a buzz in its future"


def test_an_alarm_seen_at_night_is_not_called_in_the_morning_after_a_flake_passed_within_its_grace(night):
    """👀 stays through a flake that opened and passed within its grace: the alarm seen at night is not called in
    the morning."""
    world = night
    world.deliver("workflow_run", run("failure"))  # 23:00
    world.advance(16)
    tick(world)  # red past its grace in quiet hours: kept for the morning
    world.advance(14)
    world.press("👀")  # 23:30: the maintainer is awake and on it
    world.advance(10)
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint"))  # 23:40: lint fails ...
    world.advance(5)
    world.deliver("workflow_run", run("success", workflow_id=9, number=164))  # ... and passes on its rerun at 23:45
    tick(world)
    still_seen = "👀 seen by Maintainer" in shown(world)[0].text
    morning(world)
    assert (still_seen, buzzed(world)) == (True, []), "a flake that never rang took 👀 away, and the morning called"


def test_a_night_whose_only_page_was_pagers_own_health_well_again_by_morning_ends_in_no_call(night):
    """pager's own health kept at night and well again by morning needs no call."""
    from pager.signals import alarm
    from pager_world.cases import delivery_entry

    world = night
    control = alarm.control_alarm(world.services)
    alarm.update_alarm(world.services, control, opened={"delivery:g1": delivery_entry("g1")}, closed=[])  # 23:00: kept
    world.advance(30)
    alarm.update_alarm(world.services, control, opened={}, closed=["delivery:g1"])  # 23:30: delivered after all
    assert shown(world)[-1].text.startswith("✅ pager is well again")
    morning(world)
    assert buzzed(world) == [], "the morning called for pager's own health, well again since the night"


# -- the call's words ----------------------------------------------------------------------------------------------


def test_a_nights_call_of_every_kind_says_it_in_a_first_line_of_at_most_80_characters(night):
    """A call that holds every kind says so in a first line of at most 80 characters (the counts in short when
    their words would not leave room)."""
    from test_attention import a_night_of_each

    from pager.signals import alarm
    from pager_world.cases import delivery_entry

    world = night
    a_night_of_each(world)  # alice's issue, the red branch past its grace, the release ready
    for n in (8, 9):
        world.deliver("issue_comment", issue_comment_by(f"user{n}", comment_id=n, number=n))
    # the sweep finds a delivery that failed: pager's own health, kept for the morning too
    alarm.update_alarm(world.services, alarm.control_alarm(world.services), opened={"delivery:g1": delivery_entry("g1")},
                       closed=[])
    morning(world)
    [call] = [m for m in shown(world) if m.notified]
    first = call.text.splitlines()[0]
    assert first.startswith("🌅 1 repository red · pager needs you · 3 new from outside · 1 release ready")
    assert visible_length(first) <= 80, f"{visible_length(first)} characters: {first}"


LONG = "o" * 39 + "/" + "r" * 100  # as long as GitHub lets an owner's login (39) and a repository's name (100) be
LONG_ID = 777


def a_contact_in_long(number: int, login: str = "u" * 39) -> dict:
    """An outsider's issue in the repository with the longest name GitHub allows, a big one (six-digit numbers)."""
    return issue_opened(**{
        "repository.full_name": LONG, "repository.name": LONG.split("/")[1], "repository.id": LONG_ID,
        "repository.html_url": f"https://github.com/{LONG}", "issue.number": number, "issue.id": 90000 + number,
        "issue.user.login": login, "sender.login": login, "issue.html_url": f"https://github.com/{LONG}/issues/{number}"})


def test_a_call_of_thirty_things_with_long_names_says_what_it_counts_and_how_many_more(resting):
    """A call of thirty things with the longest names lists what fits one message and says how many more."""
    from pager_world.payloads import INSTALLATION

    world = resting
    world.hub.installations[LONG] = INSTALLATION
    world.deliver("issues", issue_opened())  # the call at 08:00: the phone rests an hour
    for n in range(30):
        world.advance(1)
        assert world.deliver("issues", a_contact_in_long(200000 + n))[0] == 200  # each kept for the rest's call
    world.advance(31)
    tick(world)
    [call] = [m for m in shown(world) if m.text.startswith("📬")]
    lines = call.text.splitlines()
    assert lines[0] == "📬 30 new from outside" and call.notified
    assert visible_length(call.text) <= 4096
    listed = [line for line in lines[2:] if line.startswith("💬 ")]
    assert all(line.endswith("</a>") for line in listed), f"a thing's line was cut: {listed[-1][-60:]}"
    assert lines[-1] == f"… and {30 - len(listed)} more", f"the call no longer says how many more: {lines[-1][-60:]}"


# -- more orders and failures -----------------------------------------------------------------------------------


def test_a_failure_at_any_call_of_a_nights_call_of_one_alarm_posts_it_anew_once_in_the_end(make_world):
    from pager import attention_store
    from pager.errors import Transient
    from pager.signals import due as due_signals
    from pager_world.matrix import Scenario, failure_matrix

    def setup(w):
        w.now = berlin(15, 23)
        w.deliver("workflow_run", run("failure"))
        w.advance(16)
        tick(w)  # kept for the morning: the night's one thing
        index = attention_store.index(w.services)
        [w.night], w.red = index.summaries, index.red
        w.now = berlin(16, 7, 0, 30)

    def act(w):
        try:
            due_signals.send_summary(w.services, *w.night, w.red, w.now)
        except Transient:
            return 500
        return 200

    scenario = Scenario("a night's call of one alarm", setup, act)
    assert failure_matrix(lambda: make_world(quiet_hours="22:00-07:00", timezone="Europe/Berlin"), scenario).failed


def test_a_failure_at_any_call_of_a_rests_call_of_one_release_posts_it_anew_once_in_the_end(make_world):
    from test_attention import sending_summary

    from pager import attention_store
    from pager_world.matrix import Scenario, failure_matrix

    def setup(w):
        w.deliver("issues", issue_opened())  # the call
        live_pull(w)
        w.deliver("pull_request", pull("opened"))
        w.deliver("check_suite", suite_passed())  # ready while the phone rests: kept
        w.advance(61)
        [w.rest] = attention_store.index(w.services).summaries

    scenario = Scenario("a rest's call of one release", setup, sending_summary(lambda w: w.rest))
    assert failure_matrix(lambda: make_world(buzz_gap_minutes=60), scenario).failed


def test_two_checks_at_the_same_moment_make_a_rests_call_of_one_thing_once(resting):
    world = resting
    world.deliver("issues", issue_opened())
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept
    world.advance(51)
    world.concurrently(lambda: tick(world), lambda: tick(world))
    world.advance(1)
    tick(world)
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("💬 bob")
    assert [m.text.split(" commented")[0] for m in shown(world)].count("💬 bob") == 1
    assert world.pending_claims() == []


def test_two_checks_at_the_same_moment_make_a_rests_call_of_several_things_once(resting):
    world = resting
    world.deliver("issues", issue_opened())
    world.advance(10)
    for n in (8, 9):
        world.deliver("issue_comment", issue_comment_by(f"user{n}", comment_id=n, number=n))  # kept
    world.advance(51)
    world.concurrently(lambda: tick(world), lambda: tick(world))
    world.advance(1)
    tick(world)
    [call] = buzzed(world)[1:]
    assert call.startswith("📬 2 new from outside")
    assert world.pending_claims() == []


def test_an_alarm_due_in_the_minute_its_rest_ends_buzzes_once_and_the_rests_call_follows_silently(resting):
    world = resting
    world.deliver("issues", issue_opened())  # the call at 08:00: the phone rests to 09:00
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept
    world.advance(35)
    world.deliver("workflow_run", run("failure"))  # 08:45: its grace ends at 09:00, with the rest
    world.advance(15.5)
    tick(world)  # 09:00:30
    [alarm_call] = buzzed(world)[1:]
    assert alarm_call.startswith("🚨 ") and shown(world)[-1].text.startswith("💬 bob") and not shown(world)[-1].notified
    for _ in range(5):
        world.advance(1)
        tick(world)
    assert len(buzzed(world)) == 2


def test_a_kept_contact_whose_message_was_deleted_in_the_chat_is_called_as_itself_all_the_same(resting):
    world = resting
    world.deliver("issues", issue_opened())
    world.advance(10)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))  # kept
    world.chat.delete(shown(world)[-1].message_id)  # the maintainer deleted it in the chat
    world.advance(51)
    summary = tick(world)
    assert summary["summaries"] == ["called with its own message"]
    assert buzzed(world)[-1].startswith("💬 bob commented on issue") and shown(world)[-1].notified
    world.advance(1)
    assert tick(world).get("summaries") is None and len(buzzed(world)) == 2


def test_a_release_whose_merge_was_taken_away_while_the_phone_rested_is_left_out_of_its_call(resting):
    from pager_world.cases import NEWER

    world = resting
    world.deliver("issues", issue_opened())  # the call at 08:00
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())  # ready: kept
    world.advance(20)
    live_pull(world, sha=NEWER)
    world.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))  # Merge taken away
    assert "🔀 Merge" not in str(shown(world)[-1].buttons)
    world.advance(41)
    tick(world)
    assert len(buzzed(world)) == 1 and not [m for m in shown(world) if m.text.startswith("📬")]


def test_a_nights_call_escapes_what_a_workflows_name_says(night):
    world = night
    world.deliver("workflow_run", run("failure", name="<build> & test"))
    world.deliver("issues", issue_opened())
    world.advance(16)
    tick(world)
    morning(world)  # two things: one message, each line linked and its words escaped
    [call] = [m for m in shown(world) if m.notified]
    assert "&lt;build&gt; &amp; test run #163 failed" in call.text and call.text.startswith("🌅 1 repository red")


def test_a_flapping_repository_rings_once_when_the_hour_ends_and_its_alarm_is_never_lost(make_world):
    world = make_world(buzz_gap_minutes=0)
    world.deliver("workflow_run", run("failure"))
    world.advance(15)
    tick(world)  # rang at 08:15
    for n, (green, red) in enumerate(((5, 5), (10, 10), (5, 5))):  # green and red again, three times in the hour
        world.advance(green)
        world.deliver("workflow_run", run("success", number=170 + 2 * n))
        world.advance(red)
        world.deliver("workflow_run", run("failure", number=171 + 2 * n))  # red again at 08:25, 08:45, 08:55
    for _ in range(30):  # to 09:25
        world.advance(1)
        tick(world)
    assert len(buzzed(world)) == 2 and buzzed(world)[-1].startswith("🚨 ")  # the hour ended at 09:15: once
    [red] = [m for m in shown(world) if m.text.startswith("🚨 ")]
    assert "test run #175 failed" in red.text and red.notified
    world.advance(5)
    world.deliver("workflow_run", run("success", number=176))
    world.advance(20)
    world.deliver("workflow_run", run("failure", number=177))  # 09:50: red again, within the hour of 09:15
    for _ in range(40):
        world.advance(1)
        tick(world)
    assert len(buzzed(world)) == 3 and "test run #177 failed" in buzzed(world)[-1]  # 10:15, not before


def test_a_repository_renamed_within_the_hour_of_its_alarms_buzz_still_waits_for_the_hour(make_world):
    world = make_world(buzz_gap_minutes=0)
    world.deliver("workflow_run", run("failure"))
    world.advance(15)
    tick(world)  # rang at 08:15
    renamed = {"repository.full_name": "Codertocat/Hello-Mars", "repository.name": "Hello-Mars",
               "workflow_run.head_repository.full_name": "Codertocat/Hello-Mars"}
    world.hub.installations["Codertocat/Hello-Mars"] = world.hub.installations[REPO]
    world.advance(5)
    world.deliver("workflow_run", run("failure", workflow_id=9, name="lint", **renamed))  # renamed meanwhile
    for _ in range(35):  # lint past its grace at 08:35, held to 09:15
        world.advance(1)
        tick(world)
    assert len(buzzed(world)) == 1
    world.advance(20)
    tick(world)
    assert len(buzzed(world)) == 2 and "Hello-Mars" in buzzed(world)[-1] and "lint" in buzzed(world)[-1]


def test_seen_pressed_twice_at_the_same_moment_acknowledges_once_and_says_who_saw_it(world):
    from pager_world.world import REPO_ID

    world.deliver("workflow_run", run("failure"))
    message = shown(world)[0].message_id
    answers = world.concurrently(*(lambda: world.update(world.press_update(f"seen:{REPO_ID}", message_id=message))[1]
                                   for _ in range(2)))
    first, second = sorted((a["outcome"] for a in answers), key=lambda outcome: not outcome.startswith("👀 seen:"))
    assert first.startswith("👀 seen: it is not called again")
    assert second == "👀 seen already, by Maintainer" or second.startswith("busy: ")  # told to press again, or who saw it
    assert "👀 seen by Maintainer" in shown(world)[0].text and world.pending_claims() == []
    world.advance(30)
    tick(world)
    assert buzzed(world) == []


def test_seen_pressed_by_a_stranger_or_on_pagers_own_alarm_changes_nothing(world):
    from pager.signals import alarm
    from pager_world.cases import delivery_entry
    from pager_world.world import REPO_ID

    world.deliver("workflow_run", run("failure"))
    message = shown(world)[0].message_id
    alarm.update_alarm(world.services, alarm.control_alarm(world.services), opened={"delivery:g1": delivery_entry("g1")},
                       closed=[])
    own = shown(world)[-1].message_id
    before = {k: v for k, v in world.store.dump().items() if not k.startswith("press#")}
    status, body = world.update(world.press_update(f"seen:{REPO_ID}", message_id=message, user=7))
    assert status == 200 and body["outcome"] == "not allowed"
    status, body = world.update(world.press_update("seen:control", message_id=own))  # a button ⚙️ never offers
    assert status == 200 and body["outcome"] == "this alarm is no longer known"
    assert {k: v for k, v in world.store.dump().items() if not k.startswith("press#")} == before
    assert "👀" not in shown(world)[0].text and "👀" not in shown(world)[-1].text


def test_an_alarm_seen_then_green_then_red_again_offers_seen_anew_and_rings_past_its_new_grace(make_world):
    world = make_world(buzz_gap_minutes=0)
    world.deliver("workflow_run", run("failure"))
    world.advance(5)
    world.press("👀")
    world.advance(5)
    world.deliver("workflow_run", run("success", number=164))  # 08:10: green; the acknowledgement goes with it
    world.advance(10)
    world.deliver("workflow_run", run("failure", number=165))  # 08:20: red again, something new
    [red] = [m for m in shown(world) if m.text.startswith("🚨 ")]
    assert "👀 seen" not in red.text and ("🛠 Start fix", "👀 Seen") in red.labels()
    world.advance(14)
    tick(world)
    assert buzzed(world) == []
    world.advance(1)
    tick(world)  # 08:35: past its grace; nothing rang before
    assert len(buzzed(world)) == 1 and "test run #165 failed" in buzzed(world)[0]


def test_an_alarm_kept_at_night_and_seen_before_morning_is_left_out_of_the_mornings_call(night):
    world = night
    world.deliver("workflow_run", run("failure"))  # 23:00
    world.deliver("issues", issue_opened())
    world.advance(16)
    tick(world)  # red past its grace in quiet hours: kept, with alice's issue
    world.advance(14)
    world.press("👀", shown(world)[0].message_id)  # 23:30
    morning(world)
    [call] = buzzed(world)  # the one thing left: alice's issue, as itself
    assert call.startswith("💬 alice opened issue")
    world.command("/status")
    assert "👀 seen by Maintainer Fri 23:30" in world.chat.chat()[-1].text
