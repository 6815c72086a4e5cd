"""Where a payload is not the truth, pager asks: who is outside, which chat, which commit is newer, what a
repository is called now; and a page refused once is kept. Each case end to end in the fake world, in a
closed loop: the real handler answers, GitHub's deliveries list records its answers, the sweep reads
that list and its redeliveries go through the handler again.
"""

from __future__ import annotations

import pytest
from support import OWN_MESSAGE, looked_again

from pager import refusals
from pager.chat import BOT_COMMANDS, Chat
from pager.errors import GitHubRefused, TelegramRefused
from pager.permissions import needed_permissions
from pager.signals import release
from pager.store import Record
from pager.sweep import health
from pager.waiting import SWEEP_KEY
from pager.webhook import handle_github
from pager_world.cases import issue_comment_by, issue_opened, live_pull, pull, run, suite, suite_passed
from pager_world.events import github_event
from pager_world.payloads import INSTALLATION, payload
from pager_world.world import CHAT_ID, CONTROL, REPO, WEBHOOK_SECRET

ORGANIZATION = {"repository.owner.type": "Organization"}
MENU = [{"command": command, "description": description} for command, description in BOT_COMMANDS]  # the examples' repository, owned by an organization
NEW_NAME = "octo-org/Hello-Universe"  # the examples' repository after a rename and a transfer


def comment(login: str, n: int, association: str = "CONTRIBUTOR", **changes) -> dict:
    """A comment on an issue of the examples' repository, owned by an organization."""
    return issue_comment_by(login, comment_id=500 + n, number=40 + n,
                            **{"comment.author_association": association, **ORGANIZATION, **changes})


def another_container(world) -> Chat:
    """The chat as a container that has not met the move itself knows it (the configured chat, and the table)."""
    return Chat(CHAT_ID, lambda: world.services.telegram)


def checks(world) -> list[str]:
    return [r.path for r in world.hub.requests if "/collaborators/" in r.path]


def refusals_work(sweeps) -> bool:
    """Whether pager's own health, as the last run left it, holds that the refused signals would be taken now."""
    return health.Health.from_data(sweeps.store.load(SWEEP_KEY, health.ITEM).data).refusals.works


def newest(world):
    return world.chat.messages[max(world.chat.messages)]


# -- who is outside -----------------------------------------------------------------------------------------


def test_a_private_member_who_arrives_as_contributor_is_confirmed_a_colleague_and_never_paged(world):
    world.hub.collaborators[REPO] = {"Carol"}  # a member whose membership is private: GitHub counts her
    status, answer = world.deliver("issue_comment", comment("carol", 1))
    assert (status, answer["outcome"]) == (200, "ignored: a colleague (GitHub counts them a collaborator)")
    assert world.chat.view() == {} and world.hub.dispatches == []
    status, answer = world.deliver("issue_comment", comment("mallory", 2))  # the same association, from outside
    assert answer["outcome"] == "sent, draft asked" and [d["event_type"] for d in world.hub.dispatches] == ["pager-draft"]
    assert checks(world) == [f"/repos/{REPO}/collaborators/carol", f"/repos/{REPO}/collaborators/mallory"]


def test_the_answer_is_kept_per_repository_and_login_and_a_users_repository_needs_no_call(world):
    world.deliver("issue_comment", comment("mallory", 1))
    world.deliver("issue_comment", comment("mallory", 2))  # the same author again: no second call
    world.deliver("issue_comment", issue_comment_by("eve", comment_id=9, number=9, **{"comment.author_association": "NONE"}))
    assert len(checks(world)) == 1 and len(world.chat.sent) == 3  # the examples' owner is a user: the payload is right


def test_an_absent_association_is_confirmed_too(world):
    body = payload("discussion", "created", **{"discussion.user.login": "dana", "sender.login": "dana"})
    del body["discussion"]["author_association"]
    world.hub.collaborators[REPO] = {"dana"}
    assert world.deliver("discussion", body)[1]["outcome"] == "ignored: a colleague (GitHub counts them a collaborator)"
    assert checks(world) == [f"/repos/{REPO}/collaborators/dana"]


def test_github_failing_the_check_answers_500_and_the_sweeps_redelivery_pages_an_outsider_once(sweeps):
    world = sweeps.world
    world.hub.fail(r"/collaborators/", 502)
    status, _ = world.deliver("issue_comment", comment("mallory", 1), guid="unconfirmed")
    assert status == 500 and world.chat.view() == {}  # neither paged nor dropped
    sweeps.advance(15)
    sweeps.sweep()  # the sweep reads the 500 in GitHub's list and asks for it again
    assert [a["status_code"] for a in world.attempts("unconfirmed")] == [500, 200]
    assert len(world.chat.sent) == 1 and len(world.hub.dispatches) == 1


def test_github_failing_the_check_never_pages_a_colleague(sweeps):
    world = sweeps.world
    world.hub.collaborators[REPO] = {"carol"}
    world.hub.fail(r"/collaborators/", 502)
    assert world.deliver("issue_comment", comment("carol", 1), guid="colleague")[0] == 500
    sweeps.advance(15)
    sweeps.sweep()
    assert [a["status_code"] for a in world.attempts("colleague")] == [500, 200]
    assert world.chat.view() == {} and world.hub.dispatches == []


# -- which chat -----------------------------------------------------------------------------------------------


def test_a_group_made_a_supergroup_gets_the_page_in_the_same_delivery_and_every_later_send_edit_and_press(sweeps):
    world = sweeps.world
    world.deliver("workflow_run", run("failure"))  # an alarm shown in the group
    old = newest(world)
    new = world.chat.migrate(CHAT_ID)
    status, answer = world.deliver("issues", issue_opened())
    assert (status, answer["outcome"]) == (200, "sent, draft asked") and newest(world).chat_id == new

    refused = len(world.chat.refused)
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=3, number=9))
    assert newest(world).chat_id == new and len(world.chat.refused) == refused  # straight there: remembered

    world.services.chat = another_container(world)  # another container: it reads the move from the table
    world.deliver("issues", issue_opened(action="closed", **{"issue.state": "closed", "issue.updated_at": "2019-05-16T10:00:00Z"}))
    shown = [m for m in world.chat.chat() if "alice opened issue" in m.text]
    assert len(shown) == 1 and shown[0].text.endswith("✅ closed") and shown[0].edits == 1  # edited where it is

    world.deliver("workflow_run", run("failure", number=164, workflow_id=99, name="lint"))
    assert old.edits == 0 and newest(world).chat_id == new and "lint" in newest(world).text  # the old one is not edited
    status, answer = world.update(world.press_update(world.chat.button_data(newest(world).message_id, "🛠"),
                                                     message_id=newest(world).message_id, chat=new))
    assert answer["outcome"] == "🛠 fix started"  # a press in the supergroup is the maintainer's

    for _ in range(3):
        sweeps.advance(15)
        sweeps.sweep()
    said = [m for m in world.chat.chat() if "set TELEGRAM_CHAT_ID" in m.text]
    assert len(said) == 1 and said[0].chat_id == new and f"to {new}" in said[0].text and said[0].edits == 0


def test_the_supergroup_telegram_made_of_the_group_gets_the_chats_command_menu_once(world):
    world.chat.handle("setMyCommands", {"commands": MENU, "scope": {"type": "chat", "chat_id": CHAT_ID}})  # as setup
    new = world.chat.migrate(CHAT_ID)
    assert world.chat.menu(new) == []  # a new chat: the group's menu stayed with the group's scope
    assert world.deliver("issues", issue_opened())[1]["outcome"] == "sent, draft asked"
    assert world.chat.menu(new) == list(BOT_COMMANDS) and world.chat.menu() == []  # there only, not every chat
    world.services.chat = another_container(world)  # it learns the move from the table: the menu is set already
    world.deliver("issue_comment", issue_comment_by("bob", comment_id=3, number=9))
    world.services.chat = another_container(world)
    world.deliver("workflow_run", run("failure"))
    assert [r.path.rsplit("/", 1)[-1] for r in world.chat.requests].count("setMyCommands") == 1


def test_a_menu_telegram_does_not_take_after_the_move_never_costs_the_page(world, caplog):
    new = world.chat.migrate(CHAT_ID)
    world.chat.fail("^setMyCommands$", 502)
    status, answer = world.deliver("issues", issue_opened())
    assert (status, answer["outcome"]) == (200, "sent, draft asked") and newest(world).chat_id == new
    assert world.chat.menu(new) == [] and "chat menu not set" in caplog.text


def test_a_warm_container_that_read_the_chat_before_the_move_learns_it_from_a_record_naming_the_new_chat(world):
    warm = world.services.chat
    assert not warm.is_current("-1009999", world.store)  # it looked once, before any move: none recorded
    world.deliver("workflow_run", run("failure"))
    new = world.chat.migrate(CHAT_ID)
    world.services.chat = another_container(world)  # another container meets the move and records it
    world.deliver("issues", issue_opened())
    world.services.chat = warm  # the warm one edits the issue's message, which is in the new chat
    world.deliver("issues", issue_opened(action="closed", **{"issue.state": "closed", "issue.updated_at": "2019-05-16T10:00:00Z"}))
    [shown] = [m for m in world.chat.chat() if "alice opened issue" in m.text]
    assert shown.chat_id == new and shown.edits == 1 and shown.text.endswith("✅ closed")


# -- refused pages come back ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shut, open_again", [
    (lambda chat: setattr(chat, "kicked", True), lambda chat: setattr(chat, "kicked", False)),  # removed, added back
    (lambda chat: chat.set_permissions(CHAT_ID, can_send_messages=False),  # only administrators may write, then all
     lambda chat: chat.set_permissions(CHAT_ID)),
], ids=["bot-removed", "read-only-group"])
def test_pages_refused_while_the_bot_may_not_post_reach_the_chat_once_it_may(sweeps, shut, open_again):
    world = sweeps.world
    shut(world.chat)
    assert world.deliver("issues", issue_opened(), guid="while-out")[0] == 424
    assert world.deliver("workflow_run", run("failure"), guid="alarm-while-out")[0] == 424
    for _ in range(2):
        sweeps.advance(15)
        sweeps.sweep()  # Telegram refuses pager's own message too: nothing shown, nothing lost
    own = health.Health.from_data(sweeps.store.load(SWEEP_KEY, health.ITEM).data)
    assert own.refusals.works is False and world.chat.chat() == []  # Telegram would still refuse: no ↻
    open_again(world.chat)
    sweeps.advance(15)
    sweeps.sweep()
    [control] = [m for m in world.chat.chat() if m.text.startswith(OWN_MESSAGE)]
    assert "2 pages Telegram refused" in control.text and "take such calls again" in control.text
    assert sweeps.press_control("refused:pages").startswith("↻ the refused pages since")
    sweeps.until_nothing_waits()
    texts = [m.text for m in world.chat.chat()]
    assert any("alice opened issue" in t for t in texts) and any(t.startswith("🚨") and REPO in t for t in texts)
    assert [a["status_code"] for a in world.attempts("while-out")] == [424, 200]
    sweeps.advance(15)
    sweeps.sweep()
    assert [m for m in world.chat.chat() if m.text.startswith(OWN_MESSAGE)][-1].text.startswith("✅ pager is well again")


def test_refused_pages_are_not_offered_again_while_the_bot_is_still_out(sweeps):
    world = sweeps.world
    world.chat.kicked = True
    world.deliver("issues", issue_opened())
    for _ in range(3):
        sweeps.advance(15)
        sweeps.sweep()
    own = health.Health.from_data(sweeps.store.load(SWEEP_KEY, health.ITEM).data)
    assert own.refusals.count == 1 and own.refusals.works is False  # Telegram would still refuse: no ↻
    answer = health.start_job(None, sweeps.now, own, health.PAGE_REFUSED)[0]
    assert answer.startswith("⚠️ GitHub or Telegram would still refuse them")


# -- what a repository is called now --------------------------------------------------------------------------


def renamed(**changes) -> dict:
    """The examples' repository after a rename and a transfer: another owner and name, the same id."""
    return {"repository.name": "Hello-Universe", "repository.full_name": NEW_NAME,
            "repository.html_url": f"https://github.com/{NEW_NAME}", "repository.owner.login": "octo-org", **changes}


def test_a_pass_under_the_new_name_clears_the_failure_shown_under_the_old_one_also_when_it_comes_late(sweeps):
    world = sweeps.world
    world.deliver("workflow_run", run("failure"))
    [(alarm_id, (text, _))] = world.chat.view().items()
    assert REPO in text
    world.hub.rename(REPO, NEW_NAME)
    world.chat.fail("editMessageText", 502)  # the pass's first delivery fails: the sweep brings it back
    success = run("success", number=164, **renamed(**{"workflow_run.head_repository.full_name": NEW_NAME}))
    assert world.deliver("workflow_run", success, guid="renamed-pass")[0] == 500
    sweeps.advance(15)
    sweeps.sweep()
    assert [a["status_code"] for a in world.attempts("renamed-pass")] == [500, 200]
    [(shown_id, (text, buttons))] = world.chat.view().items()
    assert shown_id == alarm_id and buttons is None
    assert text.startswith(f'✅ <a href="https://github.com/{NEW_NAME}">{NEW_NAME}</a> is green again on master after ')


def test_a_release_shown_under_the_old_name_is_offered_and_merged_under_the_new_one(world):
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    world.hub.rename(REPO, NEW_NAME)
    assert world.deliver("check_suite", {**suite_passed(), **{k: v for k, v in payload("check_suite", "completed",
                                                                     **renamed()).items() if k == "repository"}})[0] == 200
    [(message_id, (text, buttons))] = world.chat.view().items()
    assert NEW_NAME in text and buttons == (("🔀 Merge",),)
    assert world.press("🔀", message_id)[1]["outcome"] == "🔀 merged"
    assert [m["repository"] for m in world.hub.merges] == [NEW_NAME]


# -- which commit is newer ------------------------------------------------------------------------------------


def test_an_older_commits_late_success_does_not_clear_a_newer_commits_failure_and_a_rerun_does(sweeps):
    world = sweeps.world
    older = suite("success", created_at="2026-12-01T10:00:00Z", updated_at="2026-12-01T11:10:00Z", sha="a" * 40)
    newer = suite("failure", created_at="2026-12-01T11:00:00Z", updated_at="2026-12-01T11:05:00Z", sha="b" * 40)
    world.faults.fail("store", r"^save alarm#", kind="store")  # the older success's first delivery fails
    assert world.deliver("check_suite", older, guid="older-success")[0] == 500
    world.deliver("check_suite", newer)
    sweeps.advance(15)
    sweeps.sweep()  # it comes back late, after the newer commit's failure
    assert [a["status_code"] for a in world.attempts("older-success")] == [500, 200]
    [(text, _)] = world.chat.view().values()
    assert text.startswith("🚨") and "failed on bbbbbbb" in text
    rerun = suite("success", created_at="2026-12-01T11:00:00Z", updated_at="2026-12-01T11:30:00Z", sha="b" * 40)
    world.deliver("check_suite", rerun)  # the newer commit's suite run again, and passing
    [(text, _)] = world.chat.view().values()
    assert "is green again" in text


# -- ↻ once -----------------------------------------------------------------------------------------------------


def test_ten_presses_of_a_failed_deliverys_retry_ask_github_for_one_attempt_until_the_sweep_sees_it(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.answer = lambda guid, redelivery: 500
    guid = sweeps.deliver("issue_comment", "created", 10)
    for _ in range(3):
        sweeps.advance(15)
        sweeps.sweep()
    [control] = [m for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)]
    data = sweeps.telegram.button_data(control.message_id, "↻")
    asked = len(sweeps.github.redelivery_requests)

    def press(n: int) -> str:
        return sweeps.world.update(sweeps.world.press_update(data, message_id=control.message_id, callback_id=f"p{n}"))[1]["outcome"]

    answers = sweeps.world.concurrently(*(lambda n=n: press(n) for n in range(5)))
    answers += [press(n) for n in range(5, 10)]
    assert len(sweeps.github.redelivery_requests) == asked + 1
    assert answers.count("↻ GitHub delivers it again; the next sweep shows whether it passed") == 1
    sweeps.github.deliver_pending()  # GitHub delivers it: it fails again
    sweeps.advance(15)
    sweeps.sweep()  # the entry shows the new attempt: ↻ may ask again
    [control] = [m for m in sweeps.telegram.chat() if m.text.startswith(OWN_MESSAGE)]
    assert press(10) == "this delivery is no longer in the alarm"  # the old button: that attempt is known now
    data = sweeps.telegram.button_data(control.message_id, "↻")
    press(11)
    press(12)
    assert len(sweeps.github.redelivery_requests) == asked + 2 and len(sweeps.attempts(guid)) == 4


# -- edges a review found ---------------------------------------------------------------------------------------


def test_a_colleague_is_not_paged_when_the_404_means_the_installation_cannot_see_the_repository(world):
    world.hub.collaborators[REPO] = {"carol"}
    world.hub.installations[REPO] = 999  # taken out of the installation the payload names, into another
    world.hub.installation_permissions[999] = needed_permissions()
    assert world.deliver("issue_comment", comment("carol", 1))[1]["outcome"].startswith("ignored: a colleague")
    del world.hub.installations[REPO]  # and then out of the app altogether: refused and kept, not paged
    world.services.github._collaborators.clear()
    assert world.deliver("issue_comment", comment("carol", 2))[0] == 424
    assert world.chat.view() == {} and world.hub.dispatches == []


def test_the_first_refused_page_is_delivered_again_whatever_the_clocks_fractions(sweeps):
    world = sweeps.world
    sweeps.now += 0.4  # a real clock has fractions; GitHub stamps a delivery to the second, before the handler ran
    world.chat.kicked = True
    assert world.deliver("issues", issue_opened(), guid="first-refused")[0] == 424
    sweeps.advance(15)
    sweeps.sweep()
    world.chat.kicked = False
    sweeps.advance(15)
    sweeps.sweep()
    sweeps.press_control("refused:pages")
    sweeps.until_nothing_waits()
    assert [a["status_code"] for a in world.attempts("first-refused")] == [424, 200]


def test_a_refused_page_whose_first_delivery_left_the_window_is_named_if_its_redelivery_fails(sweeps):
    world = sweeps.world

    def answer(guid, redelivery):  # pager's handler, but the first delivery of G got no answer in time
        if guid == "G" and not redelivery:
            return 0
        event, body = world.github.payloads[guid]
        status, out = handle_github(github_event(event, body, guid=guid, secret=WEBHOOK_SECRET), world.services,
                                    monotonic=world.clock)
        world.answers[guid] = out
        return status

    sweeps.answer = answer
    world.chat.kicked = True
    world.github.deliver("issues", issue_opened(), guid="G")
    sweeps.advance(15)
    sweeps.sweep()  # asked for again: 424, the page kept
    for _ in range(16):  # four hours: its first delivery leaves what the runs know
        sweeps.advance(15)
        sweeps.sweep()
    world.chat.kicked = False
    sweeps.advance(15)
    sweeps.sweep()
    world.chat.fail("sendMessage", 502, count=50)  # Telegram fails when the page comes back
    sweeps.press_control("refused:pages")
    for _ in range(5):
        sweeps.advance(1)
        sweeps.check()
    assert [a["status_code"] for a in world.attempts("G")][-1] == 500
    world.chat.heal()
    sweeps.advance(15)
    sweeps.sweep()
    assert "G" in sweeps.entries()  # named, with ↻: its earlier attempts are not known, so not asked for blindly


def test_the_probe_asks_the_chat_pager_writes_to_and_the_control_repositorys_installation(sweeps):
    world = sweeps.world
    world.deliver("workflow_run", run("failure"))
    world.chat.migrate(CHAT_ID)
    world.deliver("issues", issue_opened(**{"issue.number": 77}))  # pager follows the move
    world.hub.installations[CONTROL] = 7  # the control repository on another installation, without Contents
    world.hub.installation_permissions[7] = {k: v for k, v in needed_permissions().items() if k != "contents"}
    assert world.deliver("issues", issue_opened(), guid="draft-refused")[0] == 424
    for _ in range(2):
        sweeps.advance(15)
        world.services.chat = another_container(world)  # the sweep's own container, which sent nothing since the move
        sweeps.sweep()
        assert refusals_work(sweeps) is False  # the control repository's would refuse
    world.hub.installation_permissions[7] = needed_permissions()
    sweeps.advance(15)
    world.services.chat = another_container(world)
    sweeps.sweep()
    assert refusals_work(sweeps) is True  # Telegram asked in the supergroup


def test_the_smallest_budget_accepted_still_redelivers_while_a_refusal_waits(make_sweeps):
    # the least the settings accept: a page of the deliveries, a minute's redeliveries, the alarm's change, and
    # five entries' names, four for pager's own health (whether the refusers answer, a ↻ job's page)
    sweeps = make_sweeps(sweep_call_budget=1 + 10 + 1 + 5 + 4, sweep_max_redeliveries=10)
    world = sweeps.world
    world.hub.installation_permissions[INSTALLATION] = {k: v for k, v in needed_permissions().items() if k != "contents"}
    refusals.record(world.store, guid="kept", event="issues.opened", repository=REPO, now=sweeps.now,
                    refusals=[TelegramRefused("send: refused", status=400), GitHubRefused("dispatch: refused", status=403)])
    sweeps.answer = lambda guid, redelivery: 500
    failed = [sweeps.deliver("issue_comment", "created", 10 + n) for n in range(150)]
    sweeps.answer = lambda guid, redelivery: 200  # pager answers (its endpoint is not what fails: no hold)
    sweeps.deliver("issues", "labeled", 1)
    sweeps.advance(15)
    runs = [sweeps.sweep(), *sweeps.minutes(30)]  # comments: Telegram's six a minute, twenty-five minutes
    assert all(s.get("calls_used", 0) <= 21 for s in runs) and sum(s.get("redeliveries", 0) for s in runs) == 150
    assert all([a["status_code"] for a in sweeps.attempts(g)] == [500, 200] for g in failed)  # the probe took no list call
    own = health.Health.from_data(sweeps.store.load(SWEEP_KEY, health.ITEM).data)
    assert own.refusals.count == 1  # and the refusal still waits, counted


def test_github_refusing_the_app_from_the_first_run_is_said_in_the_chat(make_sweeps):
    sweeps = make_sweeps(through_handler=True)
    sweeps.world.hub.fail(None, 401, count=10_000, body={"message": "A JSON web token could not be decoded"})
    for _ in range(2):
        sweeps.advance(15)
        sweeps.sweep()
    assert any("not served pager its webhook's deliveries" in m.text for m in sweeps.world.chat.chat()
               if m.text.startswith(OWN_MESSAGE))


def test_a_waiting_release_written_before_records_were_kept_by_id_is_retired_not_shown(world):
    live_pull(world, mergeable_state="blocked")
    world.store.save(Record(release.WAITING_KEY, item=f"{REPO}#2"),  # as an earlier version wrote it
                     {"repository": REPO, "number": 2, "waiting": True, "installation_id": INSTALLATION})
    for _ in range(2):
        looked_again(world.services)
    assert world.chat.sent == [] and not world.store.load("release#0#2").exists
    assert world.store.load(release.WAITING_KEY, f"{REPO}#2").data["waiting"] is False
