"""Contribution signal (docs/signals.md), end to end through the webhook and on its pure decisions.

Driven through `Harness` (real webhook endpoint and clients, fake chat and GitHub behind `responses`,
MemoryStore): who counts as outside, the message and the pager-draft dispatch, the closing edits,
a late opening event after the closing one, racing deliveries, and a failure at every external call.
"""

from __future__ import annotations

import pytest

from pager.engine.effects import Dispatch, EditMessage, Posted, SendMessage
from pager.html import visible_length
from pager.signals import contribution
from pager.signals.contribution import Contribution, decide_closing, decide_opening
from pager_world.cases import issue_closed, issue_comment_by, issue_opened, outside
from pager_world.matrix import Scenario, delivering, failure_matrix
from pager_world.world import CHAT_ID, CONTROL, REPO, REPO_ID

# -- who is outside ------------------------------------------------------------------------------------


def test_an_issue_opened_by_someone_outside_sends_one_message_and_asks_for_one_draft(world):
    status, answer = world.deliver("issues", issue_opened())
    assert (status, answer["outcome"]) == (200, "sent, draft asked")
    [(message_id, (text, buttons))] = world.chat.view().items()
    assert text.startswith("💬 alice opened issue ")
    first, second = text.splitlines()[:2]  # the first line within 80 characters, the title whole below when cut there
    assert f'href="https://github.com/{REPO}/issues/1">{REPO}#1</a>: Spelling error in the README…' in first
    assert visible_length(first) <= 80 and second == "<b>Spelling error in the README file</b>"
    assert "accidently spelled" in text
    assert buttons == (("🔕 Mute this thread 8 h",), (f"🔕 Mute {REPO} 8 h",))  # each says what it mutes
    assert world.chat.messages[message_id].notified is True  # an outsider's first contact calls
    assert world.hub.dispatches == [
        {
            "repository": CONTROL,
            "event_type": "pager-draft",
            "client_payload": {
                "repository": REPO,
                "kind": "issue",
                "number": 1,
                "comment_id": None,
                "node_id": "MDU6SXNzdWU0NDQ1MDAwNDE=",
                "subject_node_id": "MDU6SXNzdWU0NDQ1MDAwNDE=",
                "url": f"https://github.com/{REPO}/issues/1",
                "author": "alice",
                "message_id": message_id,
                "chat": CHAT_ID,
            },
        }
    ]


def test_a_contribution_at_telegrams_limit_keeps_its_verdict_when_it_closes(world):
    from pager.html import visible_length

    long = {"issue.title": "&" * 5000}  # longer than GitHub lets a title be: a message cut at 4096 characters
    world.deliver("issues", issue_opened(**long))
    world.deliver("issues", issue_closed(**long))
    [(text, _)] = world.chat.view().values()
    assert text.endswith("\n✅ closed") and visible_length(text) <= 4096


def test_a_draft_pull_request_is_named_a_draft_and_a_deleted_account_ghost_as_github_shows_them(world):
    world.deliver("pull_request", outside("pull_request", "opened", who="pull_request", **{"pull_request.draft": True}))
    assert world.chat.chat()[-1].text.startswith("💬 alice opened draft pull request ")
    world.deliver("issue_comment", issue_comment_by("alice", comment_id=9, number=7, **{"comment.user": None}))
    assert world.chat.chat()[-1].text.startswith("💬 ghost commented on issue ")


def test_after_the_app_is_installed_again_the_draft_still_reaches_the_control_repository(world):
    from pager_world.world import INSTALLATION

    assert world.deliver("issue_comment", issue_comment_by("alice", comment_id=1, number=1))[1]["outcome"] == "sent, draft asked"
    world.hub.reinstall(INSTALLATION)  # a warm container still holds the old installation and its token
    status, answer = world.deliver("issue_comment", issue_comment_by("alice", comment_id=2, number=2))
    assert status == 200 and answer["outcome"].startswith("sent") and answer["outcome"].endswith("draft asked")
    assert [d["client_payload"]["number"] for d in world.hub.dispatches] == [1, 2]


@pytest.mark.parametrize("association", ["OWNER", "MEMBER", "COLLABORATOR"])
def test_a_maintainers_issue_stays_silent_and_writes_nothing(world, association):
    status, answer = world.deliver("issues", issue_opened(**{"issue.author_association": association}))
    assert (status, answer["outcome"]) == (200, "ignored: maintainer or bot")
    assert world.chat.view() == {} and world.hub.dispatches == [] and world.store.dump() == {}


@pytest.mark.parametrize(
    "changes",
    [
        {"sender.type": "Bot", "issue.user.type": "Bot"},
        {"sender.login": "renovate[bot]", "issue.user.login": "renovate[bot]"},
    ],
)
def test_a_bots_issue_stays_silent(world, changes):
    status, answer = world.deliver("issues", issue_opened(**changes))
    assert answer["outcome"] == "ignored: maintainer or bot"
    assert world.chat.view() == {}


def test_user_text_is_escaped_in_the_message(world):
    world.deliver("issues", issue_opened(**{"issue.title": "<b>bold</b> & co", "issue.body": "<script>x</script>"}))
    [(text, _)] = world.chat.view().values()
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; co" in text
    assert "&lt;script&gt;x&lt;/script&gt;" in text and "<script>" not in text


def test_a_comment_on_a_pull_request_says_pull_request_and_links_the_comment(world):
    body = outside("issue_comment", "created", who="comment", **{"issue.pull_request": {"url": "x"}})
    status, answer = world.deliver("issue_comment", body)
    [(text, _)] = world.chat.view().values()
    assert text.startswith("💬 alice commented on pull request ")
    assert "issuecomment-492700400" in text
    assert world.hub.dispatches[0]["client_payload"]["comment_id"] == 492700400
    assert world.hub.dispatches[0]["client_payload"]["kind"] == "issue_comment"


def test_a_review_without_a_body_is_not_shown_and_one_with_a_body_is(world):
    silent = outside("pull_request_review", "submitted", who="review")
    assert world.deliver("pull_request_review", silent)[1]["outcome"].startswith("ignored: nothing to answer; ")
    spoken = outside("pull_request_review", "submitted", who="review", **{"review.body": "Please rename this.", "review.state": "changes_requested"})
    assert world.deliver("pull_request_review", spoken)[1]["outcome"].startswith("sent, draft asked; ")
    [(text, _)] = world.chat.view().values()
    assert text.startswith("💬 alice asked for changes on pull request ")


def test_a_release_pull_request_is_not_a_contribution(world):
    body = outside("pull_request", "opened", who="pull_request", **{"pull_request.head.ref": "release-please--branches--master"})
    assert "ignored: release pull request" in world.deliver("pull_request", body)[1]["outcome"]
    assert world.hub.dispatches == []


def test_closing_a_release_pull_request_its_payload_calls_outside_records_no_contribution(world):
    body = outside("pull_request", "closed", who="pull_request", **{"pull_request.head.ref": "release-please--branches--master"})
    assert world.deliver("pull_request", body)[1]["outcome"].startswith("ignored: release pull request; ")
    number = body["pull_request"]["number"]
    assert world.services.store.load(contribution.thing_key(REPO_ID, "pull", number)).data == {}


# -- closing ---------------------------------------------------------------------------------------------


def test_closing_a_shown_issue_edits_its_message_once(world):
    world.deliver("issues", issue_opened())
    status, answer = world.deliver("issues", issue_closed())
    assert answer["outcome"] == "edited: closed"
    [(text, _)] = world.chat.view().values()
    assert text.endswith("\n✅ closed")
    assert world.deliver("issues", issue_closed())[1]["outcome"] == "already closed"
    assert len(world.chat.edits) == 1


def test_a_reopened_issue_is_shown_open_again_once_and_its_next_closing_edits_it_again(world):
    world.deliver("issues", issue_opened())
    world.deliver("issues", issue_closed())
    reopened = outside("issues", "reopened", **{"issue.updated_at": "2019-05-16T11:00:00Z", "issue.title": "Spelling error"})
    assert world.deliver("issues", reopened)[1]["outcome"] == "edited: reopened"
    [(text, buttons)] = world.chat.view().values()
    assert text.splitlines()[0].endswith(": Spelling error") and text.endswith("\n↩️ reopened")
    assert buttons == (("🔕 Mute this thread 8 h",), (f"🔕 Mute {REPO} 8 h",)) and "✅" not in text
    assert world.deliver("issues", reopened)[1]["outcome"] == "open already"  # applied twice
    late = issue_closed(**{"issue.updated_at": "2019-05-16T10:30:00Z"})  # a closing older than the reopening
    assert world.deliver("issues", late)[1]["outcome"] == "stale: older than what is shown"
    assert world.deliver("issues", issue_closed(**{"issue.updated_at": "2019-05-16T12:00:00Z"}))[1]["outcome"] == \
        "edited: closed"
    assert world.deliver("issues", reopened)[1]["outcome"] == "stale: older than what is shown"  # late: stays closed
    [(text, buttons)] = world.chat.view().values()
    assert text.endswith("↩️ reopened\n✅ closed") and buttons is None
    assert len(world.chat.sent) == 1 and len(world.chat.edits) == 3


def test_reopening_a_maintainers_issue_pager_never_recorded_writes_nothing(world):
    body = issue_opened(**{"action": "reopened", "issue.author_association": "OWNER"})
    assert world.deliver("issues", body)[1]["outcome"] == "open already"
    assert world.store.dump() == {}


def test_a_merged_pull_request_says_merged(world):
    world.deliver("pull_request", outside("pull_request", "opened", who="pull_request"))
    closed = outside("pull_request", "closed", who="pull_request", **{"pull_request.merged": True})
    assert world.deliver("pull_request", closed)[1]["outcome"] == "edited: merged; ignored: not a release pull request"


def test_closing_a_maintainers_issue_writes_nothing(world):
    body = issue_closed(**{"issue.author_association": "OWNER"})
    assert world.deliver("issues", body)[1]["outcome"] == "ignored: not a contribution"
    assert world.store.dump() == {}


def test_a_closing_edit_of_a_deleted_message_sends_it_anew(world):
    world.deliver("issues", issue_opened())
    [first] = world.chat.messages
    world.chat.delete(first)
    world.deliver("issues", issue_closed())
    [(message_id, (text, _))] = world.chat.view().items()
    assert message_id != first and text.endswith("✅ closed")
    assert world.store.dump()[f"contribution#{REPO_ID}#issue#1"]["message_id"] == message_id


# -- late --------------------------------------------------------------------------------------------


def test_a_late_discussion_created_after_discussion_answered_is_not_shown_as_new(world):
    created = outside("discussion", "created", who="discussion")
    answered = outside("discussion", "answered", who="discussion")
    assert world.deliver("discussion", answered)[1]["outcome"] == "recorded: answered before shown"
    assert world.deliver("discussion", created)[1]["outcome"] == "no longer new: answered"
    assert world.chat.view() == {} and world.hub.dispatches == []


def test_a_discussion_answered_after_it_was_shown_edits_it_to_answered(world):
    world.deliver("discussion", outside("discussion", "created", who="discussion"))
    assert world.deliver("discussion", outside("discussion", "answered", who="discussion"))[1]["outcome"] == "edited: answered"
    [(text, _)] = world.chat.view().values()
    assert text.startswith("💬 alice opened discussion ") and text.endswith("✅ answered")


# -- racing ------------------------------------------------------------------------------------------


def test_two_deliveries_of_the_same_issue_racing_show_one_message_and_ask_one_draft(world):
    world.race("issues", [issue_opened(), issue_opened()])
    assert len(world.chat.sent) == 1
    assert len(world.hub.dispatches) == 1
    assert world.pending_claims() == []


# -- failures at every call --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario("issues.opened", lambda h: None, delivering("issues", issue_opened())),
        Scenario(
            "issue_comment.created",
            lambda h: None,
            delivering("issue_comment", outside("issue_comment", "created", who="comment")),
        ),
        Scenario(
            "issues.closed",
            lambda h: h.deliver("issues", issue_opened()),
            delivering("issues", issue_closed()),
        ),
    ],
    ids=lambda s: s.name,
)
def test_a_failure_at_any_call_answers_500_and_the_delivery_again_ends_as_undisturbed(make_world, scenario):
    report = failure_matrix(make_world, scenario)
    assert report.failed  # every Telegram and GitHub call, and the table before an effect, answered 500


def _kept_in_a_rest(world) -> None:
    """The phone called for alice's issue: it rests, and bob's comment ten minutes later is kept for its call."""
    world.deliver("issues", issue_opened())
    world.advance(10)


def test_a_comment_whose_note_the_table_keeps_refusing_is_shown_once_and_kept_by_its_redelivery(make_world):
    """What a delivery did is written together: when the table keeps refusing the note of a comment kept for the
    phone's call, its record is written without the note (the message and the draft recorded, never again), the
    delivery answers 500, and its redelivery keeps the note alone, ending as a delivery never refused."""
    from pager.store import RECORD_ATTEMPTS

    undisturbed = make_world(buzz_gap_minutes=60)
    _kept_in_a_rest(undisturbed)
    assert undisturbed.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8))[0] == 200
    world = make_world(buzz_gap_minutes=60)
    _kept_in_a_rest(world)
    world.faults.fail("store", pattern="save summary#", kind="store", count=RECORD_ATTEMPTS)  # each try of the commit
    status, answer = world.deliver("issue_comment", issue_comment_by("bob", comment_id=5, number=8), guid="bob")
    assert status == 500 and "Note" in answer["error"]
    record = world.store.dump()[f"contribution#{REPO_ID}#issue#8#c5"]
    assert record["drafted"] and isinstance(record["message_id"], int) and "noted" not in record
    assert world.pending_claims() == [] and not any(key.startswith("summary#") for key in world.store.dump())
    assert world.deliver_again("bob") == (200, {"outcome": "kept for the summary"})
    assert world.snapshot() == undisturbed.snapshot() and world.effects() == undisturbed.effects()


# -- the pure decisions ------------------------------------------------------------------------------


def _c(**changes) -> Contribution:
    values = dict(
        repository=REPO, repository_id=REPO_ID, kind="issue", thing="issue", noun="issue", verb="opened", number=7, title="T",
        url="https://github.com/x/y/issues/7", author="alice", body="B", order="2026-01-01T00:00:00Z", outside=True,
    )
    values.update(changes)
    return Contribution(**values)


def test_deciding_an_opening_sends_then_asks_for_the_draft_then_has_nothing_left():
    decide = decide_opening(_c(), CONTROL)
    step = decide({}, 0.0)
    assert isinstance(step.effect, SendMessage)
    data = step.then(Posted(CHAT_ID, 55))
    assert data["message_id"] == 55 and data["chat"] == CHAT_ID and data["state"] == "open"
    step = decide(data, 0.0)
    assert isinstance(step.effect, Dispatch) and step.effect.client_payload["message_id"] == 55
    data = step.then(None)
    step = decide(data, 0.0)
    assert step.effect is None and step.data is None and step.outcome == "already shown"


def test_deciding_a_closing_older_than_the_record_changes_nothing():
    decide = decide_closing("closed", "2025-01-01T00:00:00Z", True)
    step = decide({"state": "open", "order": "2026-01-01T00:00:00Z", "message_id": 3, "text": "t"}, 0.0)
    assert step.effect is None and step.data is None


def test_deciding_a_closing_of_a_shown_contribution_edits_it():
    step = decide_closing("answered", "2026-02-01T00:00:00Z", True)({"state": "open", "order": "2026-01-01T00:00:00Z", "message_id": 3, "text": "t"}, 0.0)
    assert step.effect == EditMessage(3, "t\n✅ answered")
    assert step.then(Posted(CHAT_ID, 3))["state"] == "answered"


def test_the_record_key_is_about_the_thing_and_its_comment_never_the_delivery_nor_the_repositorys_name():
    assert _c().key == f"contribution#{REPO_ID}#issue#7"
    assert _c(comment="c9", comment_id=9).key == f"contribution#{REPO_ID}#issue#7#c9"
    assert contribution.thing_key(REPO_ID, "discussion", 4) == f"contribution#{REPO_ID}#discussion#4"


# -- claims and the one residual risk ---------------------------------------------------------------


def test_a_claim_whose_holder_died_is_taken_over_once_its_lease_has_passed(world, monkeypatch):
    from pager.engine import settle as records

    monkeypatch.setattr(records, "BUSY_POLLS", 1)
    key = f"contribution#{REPO_ID}#issue#1"
    stored = world.store.inner.load(key)
    world.store.inner.save(stored, {records.PENDING: {"effect": "SendMessage", "until": world.now + 30}})
    assert world.deliver("issues", issue_opened())[0] == 500  # someone is acting: come again later
    assert world.chat.view() == {}
    world.now += 31
    assert world.deliver("issues", issue_opened())[1]["outcome"] == "sent, draft asked"
    assert len(world.chat.sent) == 1 and world.pending_claims() == []


def test_the_residual_risk_a_delivery_whose_recording_keeps_failing_is_repeated_after_the_lease(world, monkeypatch):
    """Documented in pager.engine.settle: the only way a message can be shown twice (and its draft asked twice:
    what a delivery did is written together, once its effects are done)."""
    from pager.engine import settle as records
    from pager.errors import StoreUnavailable

    monkeypatch.setattr(records, "BUSY_POLLS", 1)
    monkeypatch.setattr(records, "RECORD_WAITS", (0.0,))
    save_all = world.store.save_all
    broken = {"on": True}

    def save_all_unless_recording(writes):
        if broken["on"] and any("message_id" in (w.data or {}) for w in writes):
            raise StoreUnavailable("DynamoDB save_all: ThrottlingError")
        return save_all(writes)

    world.store.save_all = save_all_unless_recording
    assert world.deliver("issues", issue_opened())[0] == 500  # sent and drafted, but not recorded even on retry
    assert world.pending_claims()  # the claims stay: nothing repeats it while their lease runs
    broken["on"] = False
    assert world.deliver("issues", issue_opened())[0] == 500  # the claim's lease still runs
    assert len(world.chat.sent) == 1 and len(world.hub.dispatches) == 1
    world.now += records.LEASE_SECONDS + 1
    assert world.deliver("issues", issue_opened())[0] == 200
    assert len(world.chat.sent) == 2  # the residual risk: shown twice
    assert len(world.hub.dispatches) == 2  # and its draft asked twice
    assert world.deliver("issues", issue_opened())[1]["outcome"] == "already shown"


def test_a_short_flood_wait_of_telegram_is_waited_out_and_the_message_sent_once(world):
    world.faults.fail_next("telegram-429-short", "sendMessage")
    status, answer = world.deliver("issues", issue_opened())
    assert (status, answer["outcome"]) == (200, "sent, draft asked")
    assert world.sleeps == [2.0]
    assert len(world.chat.sent) == 1


def test_the_busy_wait_for_another_delivery_stops_at_the_handlers_deadline(world, monkeypatch):
    from pager import deadline
    from pager.engine import settle as records
    from pager.errors import DeadlineExceeded

    key = f"contribution#{REPO_ID}#issue#1"
    world.store.inner.save(world.store.inner.load(key), {records.PENDING: {"effect": "SendMessage", "until": world.now + 30}})
    ticks = iter(range(100))
    with deadline.within(2.5, clock=lambda: float(next(ticks))):
        with pytest.raises(DeadlineExceeded):
            records.settle(world.services, key, contribution.decide_opening(contribution.read_contribution("issues", issue_opened(), REPO), CONTROL))


def test_the_draft_of_a_discussion_comment_carries_the_comment_to_answer_and_its_discussion(world):
    body = outside("discussion_comment", "created", who="comment")
    world.deliver("discussion_comment", body)
    [dispatch] = world.hub.dispatches
    payload = dispatch["client_payload"]
    assert payload["kind"] == "discussion_comment" and payload["comment_id"] == body["comment"]["id"]
    assert payload["node_id"] == body["comment"]["node_id"] and payload["subject_node_id"] == body["discussion"]["node_id"]
    assert len(payload) <= 10  # GitHub's limit of client_payload's properties
