"""Release signal (SPEC §5.3), end to end through the webhook and the Telegram endpoint, and on its
pure decisions.

Driven through `Harness` (real endpoints and clients, fake chat and GitHub behind `responses`,
MemoryStore): the release pull request's message, 🔀 Merge once its head passed and GitHub calls
it clean, the merge with the recorded head, refusals, the merge and the tag recorded once, a stale
synchronize, racing deliveries, and a failure at every external call.
"""

from __future__ import annotations


import pytest

from pager.signals import release
from pager.signals.release import ReleasePull, decide_pull
from test_signals_harness import REPO, Scenario, delivering, failure_matrix, harness, make_harness, payload  # noqa: F401

BRANCH = "release-please--branches--master"
HEAD = "a" * 40
NEWER = "b" * 40
KEY = f"release#{REPO}#2"


def pull(action: str, *, head: str = HEAD, updated_at: str = "2026-12-01T10:00:00Z", **changes):
    """A pull_request event of the example payload, made a release pull request."""
    fixture = action if action in ("opened", "closed", "synchronize", "reopened") else "opened"
    return payload(
        "pull_request",
        fixture,
        **{
            "action": action,
            "pull_request.head.ref": BRANCH,
            "pull_request.head.sha": head,
            "pull_request.updated_at": updated_at,
            "pull_request.title": "chore(master): release 1.2.0",
            **changes,
        },
    )


def merged(**changes):
    return pull(
        "closed",
        updated_at="2026-12-01T12:00:00Z",
        **{
            "pull_request.merged": True,
            "pull_request.merged_at": "2026-12-01T12:00:00Z",
            "pull_request.merge_commit_sha": "c" * 40,
            **changes,
        },
    )


def suite_passed(sha: str = HEAD, conclusion: str = "success"):
    return payload(
        "check_suite",
        "completed",
        **{
            "check_suite.head_branch": BRANCH,
            "check_suite.head_sha": sha,
            "check_suite.conclusion": conclusion,
            "check_suite.pull_requests": [{"number": 2, "head": {"ref": BRANCH, "sha": sha}, "base": {"ref": "master"}}],
        },
    )


def published(tag: str = "v1.2.0", at: str = "2026-12-01T12:05:00Z"):
    return payload("release", "published", **{"release.tag_name": tag, "release.published_at": at,
                                              "release.html_url": f"https://github.com/{REPO}/releases/tag/{tag}"})


def live_pull(h, *, sha: str = HEAD, mergeable_state: str = "clean", state: str = "open"):
    h.hub.pulls[(REPO, 2)] = {"number": 2, "state": state, "head": {"sha": sha, "ref": BRANCH}, "mergeable_state": mergeable_state, "merged": False}


def pushed_unseen(h):
    """A new head pushed whose synchronize has not reached the pager."""
    live_pull(h, sha=NEWER)
    h.hub.pulls[(REPO, 2)]["updated_at"] = "2026-12-01T11:00:00Z"


def ready(h):
    """A release pull request shown and offered for merge."""
    live_pull(h)
    h.deliver("pull_request", pull("opened"))
    h.deliver("check_suite", suite_passed())


def only_message(h):
    [(message_id, shown)] = h.chat.view().items()
    return message_id, shown


def gets(h) -> int:
    return sum(1 for service, name in h.calls.log if service == "github" and name == f"GET /repos/{REPO}/pulls/2")


# -- the message and Merge ------------------------------------------------------------------------------


def test_a_release_pull_request_gets_one_message_without_merge(harness):
    status, answer = harness.deliver("pull_request", pull("opened"))
    assert "release shown" in answer["outcome"]
    _, (text, buttons) = only_message(harness)
    assert text == (
        f'📦 <a href="https://github.com/{REPO}">{REPO}</a>: chore(master): release 1.2.0 '
        f'(<a href="https://github.com/{REPO}/pull/2">#2</a>)'
    )
    assert buttons is None
    assert harness.hub.dispatches == []  # not a contribution


def test_a_passed_suite_on_the_recorded_head_reads_the_pull_request_and_offers_merge(harness):
    live_pull(harness)
    harness.deliver("pull_request", pull("opened"))
    status, answer = harness.deliver("check_suite", suite_passed())
    assert "#2: Merge offered" in answer["outcome"]
    _, (text, buttons) = only_message(harness)
    assert "🟢 checks passed, ready to merge" in text and buttons == (("🔀 Merge",),)
    assert gets(harness) == 1
    data = harness.chat.button_data(max(harness.chat.messages), "🔀")
    assert len(data.encode()) <= 64


@pytest.mark.parametrize("state", ["blocked", "unstable", "unknown", "behind"])
def test_merge_is_not_offered_until_github_calls_the_pull_request_clean(harness, state):
    live_pull(harness, mergeable_state=state)
    harness.deliver("pull_request", pull("opened"))
    before = harness.store.dump()
    assert f"#2: not ready: {state}" in harness.deliver("check_suite", suite_passed())[1]["outcome"]
    assert harness.store.dump() == before and only_message(harness)[1][1] is None


def test_a_suite_of_a_head_the_pull_request_no_longer_has_changes_nothing_and_a_failed_suite_reads_nothing(harness):
    live_pull(harness)
    harness.deliver("pull_request", pull("opened"))
    before = harness.store.dump()
    assert "#2: not the recorded head" in harness.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert gets(harness) == 1 and harness.store.dump() == before
    assert "the suite did not pass" in harness.deliver("check_suite", suite_passed(conclusion="failure"))[1]["outcome"]
    assert gets(harness) == 1


def test_a_suite_passed_on_a_head_whose_synchronize_never_came_records_the_head_and_offers_merge(harness):
    live_pull(harness)
    harness.deliver("pull_request", pull("opened"))
    pushed_unseen(harness)  # its synchronize failed and is not back (yet)
    answer = harness.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert "Merge offered" in answer
    state = harness.store.dump()
    assert "Merge already offered" in harness.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert harness.store.dump() == state and len(harness.chat.sent) == 1
    assert harness.store.dump()[KEY]["head"] == NEWER
    _, (text, buttons) = only_message(harness)
    assert buttons == (("🔀 Merge",),)
    # The synchronize, delivered late, changes nothing.
    late = harness.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))[1]
    assert only_message(harness)[1][1] == (("🔀 Merge",),), late


def test_while_github_computes_mergeability_the_pull_request_is_read_again_then_the_step_fails_to_come_back(harness):
    live_pull(harness)
    harness.hub.pulls[(REPO, 2)]["mergeable"] = None
    harness.deliver("pull_request", pull("opened"))
    status, answer = harness.deliver("check_suite", suite_passed())
    assert status == 500 and "computing whether it is mergeable" in answer["error"]
    assert gets(harness) == 2 and only_message(harness)[1][1] is None
    harness.hub.pulls[(REPO, 2)]["mergeable"] = True
    status, answer = harness.deliver("check_suite", suite_passed())
    assert status == 200 and "Merge offered" in answer["outcome"]


def test_a_new_head_takes_merge_away(harness):
    ready(harness)
    answer = harness.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))[1]
    assert "release updated" in answer["outcome"]
    _, (text, buttons) = only_message(harness)
    assert buttons is None and "ready to merge" not in text


def test_a_stale_synchronize_does_not_take_merge_from_a_ready_release(harness):
    live_pull(harness, sha=NEWER)
    harness.deliver("pull_request", pull("opened"))
    harness.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))
    harness.deliver("check_suite", suite_passed(sha=NEWER))
    assert only_message(harness)[1][1] == (("🔀 Merge",),)
    effects, before = harness.effects(), harness.store.dump()
    # The synchronize that brought the older head comes again, late.
    stale = pull("synchronize", head=HEAD, updated_at="2026-12-01T10:30:00Z")
    assert "stale: older than the recorded head" in harness.deliver("pull_request", stale)[1]["outcome"]
    # And the newest one again, twice.
    again = pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z")
    assert "already shown" in harness.deliver("pull_request", again)[1]["outcome"]
    assert harness.effects() == effects and harness.store.dump() == before
    assert only_message(harness)[1][1] == (("🔀 Merge",),)


def test_an_edited_title_keeps_merge(harness):
    ready(harness)
    edited = pull("edited", updated_at="2026-12-01T11:00:00Z", **{"pull_request.title": "chore(master): release 1.3.0"})
    harness.deliver("pull_request", edited)
    _, (text, buttons) = only_message(harness)
    assert "release 1.3.0" in text and buttons == (("🔀 Merge",),)


# -- the press ---------------------------------------------------------------------------------------------


def test_merge_merges_the_recorded_head_with_the_configured_method_and_records_it(harness):
    ready(harness)
    status, answer = harness.press("🔀")
    assert (status, answer["outcome"]) == (200, "🔀 merged")
    assert harness.hub.merges == [{"repository": REPO, "number": 2, "sha": HEAD, "merge_method": "squash"}]
    assert harness.chat.answers[-1][1] == "🔀 merged"
    _, (text, buttons) = only_message(harness)
    assert "✅ merged 5eaf00d" in text and buttons is None
    record = harness.store.dump()[KEY]
    assert record["state"] == "merged" and record["merged"]["commit"].startswith("5eaf00d")


def test_a_second_press_on_merge_merges_nothing(harness):
    ready(harness)
    message_id = max(harness.chat.messages)
    data = harness.chat.button_data(message_id, "🔀")
    harness.update(harness.press_update(data, message_id=message_id))
    status, answer = harness.update(harness.press_update(data, message_id=message_id))
    assert answer["outcome"] == "✅ already merged"
    assert len(harness.hub.merges) == 1


@pytest.mark.parametrize(
    "status,reason",
    [(405, "Pull Request is not mergeable"), (409, "Head branch was modified. Review and try the merge again.")],
)
def test_a_refused_merge_answers_the_reason_and_takes_merge_away(harness, status, reason):
    ready(harness)
    harness.hub.merge_refusal = (status, reason)
    code, answer = harness.press("🔀")
    assert (code, answer["outcome"]) == (200, f"GitHub refused the merge: {reason}")
    assert harness.chat.answers[-1][1].startswith("GitHub refused the merge")
    _, (text, buttons) = only_message(harness)
    assert buttons is None and "⚠️ merge refused: " in text


def test_a_merge_with_a_head_that_moved_on_github_is_refused_and_never_merges_the_new_head(harness):
    ready(harness)
    live_pull(harness, sha=NEWER)  # pushed to, and the webhook of it not here yet
    assert harness.press("🔀")[1]["outcome"].startswith("GitHub refused the merge: Head branch was modified")
    assert harness.hub.merges == []


# -- merged and published ----------------------------------------------------------------------------------


def test_a_merged_release_is_recorded_and_edited_once(harness):
    ready(harness)
    assert "merge recorded" in harness.deliver("pull_request", merged())[1]["outcome"]
    assert "merge already recorded" in harness.deliver("pull_request", merged())[1]["outcome"]
    assert len(harness.chat.edits) == 2  # Merge offered, then merged
    record = harness.store.dump()[KEY]
    assert record["merged"] == {"commit": "c" * 40, "at": "2026-12-01T12:00:00Z"}
    assert harness.store.dump()[f"release-latest#{REPO}"] == {"number": 2, "at": "2026-12-01T12:00:00Z"}


def test_a_release_merged_through_the_button_is_not_recorded_again_by_its_webhook(harness):
    ready(harness)
    harness.press("🔀")
    effects = harness.effects()
    assert "merge already recorded" in harness.deliver("pull_request", merged())[1]["outcome"]
    assert harness.effects() == effects


def test_release_published_afterwards_adds_the_tag_once(harness):
    ready(harness)
    harness.deliver("pull_request", merged())
    assert harness.deliver("release", published())[1]["outcome"] == "tag added"
    assert harness.deliver("release", published())[1]["outcome"] == "tag already shown"
    _, (text, _) = only_message(harness)
    assert text.endswith(f'🏷 <a href="https://github.com/{REPO}/releases/tag/v1.2.0">v1.2.0</a>')


def test_a_release_published_before_the_merge_is_not_added(harness):
    ready(harness)
    harness.deliver("pull_request", merged())
    old = published(tag="v1.1.0", at="2026-11-01T00:00:00Z")
    assert harness.deliver("release", old)[1]["outcome"] == "ignored: published before the last release merge"


def test_closed_without_merging_says_so_and_removes_merge(harness):
    ready(harness)
    closed = pull("closed", updated_at="2026-12-01T12:00:00Z", **{"pull_request.merged": False})
    assert "closed recorded" in harness.deliver("pull_request", closed)[1]["outcome"]
    _, (text, buttons) = only_message(harness)
    assert "closed without merging" in text and buttons is None


def test_a_non_release_pull_request_is_left_to_contributions(harness):
    body = payload("pull_request", "synchronize")
    assert harness.deliver("pull_request", body)[1]["outcome"] == "ignored: not a release pull request"


# -- racing ----------------------------------------------------------------------------------------------


def test_two_deliveries_of_the_same_release_pull_request_racing_send_one_message(harness):
    harness.slow_chat()
    harness.race("pull_request", [pull("opened"), pull("opened")])
    assert len(harness.chat.sent) == 1


# -- failures at every call -------------------------------------------------------------------------------


def pressing(label: str) -> tuple:
    """A press as `Scenario.act`, and its `again`: Telegram retries a 500, the person presses anew."""

    def act(h):
        message_id = max(h.chat.messages)
        h.last_press = (h.chat.button_data(message_id, label), message_id)
        h.last_update = h.press_update(*h.last_press[:1], message_id=message_id)
        status, body = h.update(h.last_update)
        h.last_status = status
        return 500 if str(body.get("outcome", "")).startswith("failed") else status

    def again(h, _status):
        if h.last_status == 500:
            return h.update(h.last_update)[0]  # Telegram retries the same update
        data, message_id = h.last_press
        status, body = h.update(h.press_update(data, message_id=message_id))  # pressed again
        assert not str(body["outcome"]).startswith("failed")
        return status

    return act, again


@pytest.mark.parametrize(
    "scenario",
    [
        Scenario("opened", lambda h: None, delivering("pull_request", pull("opened"))),
        Scenario(
            "suite passed",
            lambda h: (live_pull(h), h.deliver("pull_request", pull("opened"))),
            delivering("check_suite", suite_passed()),
        ),
        Scenario(
            "suite passed on a head not recorded yet",
            lambda h: (live_pull(h), h.deliver("pull_request", pull("opened")), pushed_unseen(h)),
            delivering("check_suite", suite_passed(sha=NEWER)),
        ),
        Scenario(
            "new head",
            ready,
            delivering("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z")),
        ),
        Scenario("merged", ready, delivering("pull_request", merged())),
        Scenario("published", lambda h: (ready(h), h.deliver("pull_request", merged())), delivering("release", published())),
        Scenario("merge pressed", ready, *pressing("🔀"), presses=False),
    ],
    ids=lambda s: s.name,
)
def test_a_failure_at_any_call_fails_the_step_and_doing_it_again_ends_as_undisturbed(make_harness, scenario):
    report = failure_matrix(make_harness, scenario)
    assert report.failed


# -- the pure decisions ------------------------------------------------------------------------------------


def _p(**changes) -> ReleasePull:
    values = dict(number=2, title="t", url="u", head=HEAD, order="2026-12-01T10:00:00Z", state="open", merged=False,
                  merge_commit="", merged_at="", installation_id=1)
    values.update(changes)
    return ReleasePull(**values)


def test_deciding_a_payload_older_than_the_record_changes_nothing():
    data = {"order": "2026-12-01T11:00:00Z", "head": NEWER, "state": "open", "ready": True, "message_id": 1}
    step = decide_pull(REPO, _p())(data, 0.0)
    assert step.effect is None and step.data is None


def test_deciding_a_new_head_drops_ready():
    data = {"order": "2026-12-01T09:00:00Z", "head": NEWER, "state": "open", "ready": True, "message_id": 1,
            "text": "x", "buttons": None, "number": 2, "title": "t", "url": "u", "ref": "r"}
    step = decide_pull(REPO, _p())(data, 0.0)
    assert step.then(1)["ready"] is False and step.effect.buttons is None


def test_merge_callback_data_fits_64_bytes_for_the_longest_names():
    long_name = "o" * 39 + "/" + "r" * 100
    _, buttons = release.render(long_name, {"number": 99999999, "state": "open", "ready": True, "title": "t", "url": "u"},
                                release.short_ref(long_name))
    assert len(buttons[0][0][1].encode()) <= 64
