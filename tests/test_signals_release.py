"""Release signal (docs/signals.md), end to end through the webhook and the Telegram endpoint, and on its
pure decisions.

Driven through `Harness` (real endpoints and clients, fake chat and GitHub behind `responses`,
MemoryStore): the release pull request's message, 🔀 Merge once its head passed and GitHub calls
it clean, the merge with the recorded head, refusals, the merge and the tag recorded once, a stale
synchronize, racing deliveries, and a failure at every external call.
"""

from __future__ import annotations

from functools import partial

import pytest
from support import looked_again

from pager.engine.effects import Posted
from pager.routing import Repository
from pager.signals import release
from pager.signals.release import ReleasePull, decide_pull
from pager_world.cases import (
    HEAD,
    NEWER,
    check_run,
    live_pull,
    merged,
    pressing,
    published,
    pull,
    pull_review_approved,
    pushed_unseen,
    ready,
    suite_passed,
    unstable,
)
from pager_world.matrix import Scenario, delivering, failure_matrix
from pager_world.payloads import payload
from pager_world.world import CHAT_ID, EXAMPLE_REPO, REPO, REPO_ID

KEY = f"release#{REPO_ID}#2"









def only_message(h):
    [(message_id, shown)] = h.chat.view().items()
    return message_id, shown


def gets(h) -> int:
    return sum(1 for service, name in h.faults.log if service == "github" and name == f"GET /repos/{REPO}/pulls/2")


# -- the message and Merge ------------------------------------------------------------------------------


def test_a_release_offered_merge_that_an_edit_shows_closed_offers_it_no_longer(world):
    ready(world)  # then its closed event is lost or late; an edit says it is closed
    edited = pull("edited", updated_at="2026-12-01T11:00:00Z", **{"pull_request.state": "closed"})
    assert "release updated" in world.deliver("pull_request", edited)[1]["outcome"]
    _, (text, buttons) = only_message(world)
    assert text.startswith("✖️ ") and buttons is None


def test_a_release_pull_request_gets_one_message_without_merge(world):
    status, answer = world.deliver("pull_request", pull("opened"))
    assert "release shown" in answer["outcome"]
    _, (text, buttons) = only_message(world)
    assert text.splitlines()[0] == (
        f'📦 <a href="https://github.com/{REPO}/pull/2">{REPO}#2</a> release pull request opened: chore(master): release 1.2.0'
    )
    assert buttons is None
    assert world.chat.messages[max(world.chat.messages)].notified is False  # nothing to do yet
    assert world.hub.dispatches == []  # not a contribution


def test_a_passed_suite_on_the_recorded_head_reads_the_pull_request_and_offers_merge(world):
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    status, answer = world.deliver("check_suite", suite_passed())
    assert "#2: Merge offered" in answer["outcome"]
    message_id, (text, buttons) = only_message(world)
    assert text.startswith(f'🔀 <a href="https://github.com/{REPO}/pull/2">{REPO}#2</a> is ready to merge: ')
    assert buttons == (("🔀 Merge",),)
    # The moment to act buzzes: the message is posted anew with a sound, and the silent one is gone.
    assert world.chat.messages[message_id].notified is True and len(world.chat.sent) == 2
    assert world.chat.deleted == [world.chat.sent[0]]
    assert gets(world) == 1
    data = world.chat.button_data(max(world.chat.messages), "🔀")
    assert len(data.encode()) <= 64


@pytest.mark.parametrize(("state", "line"), [
    ("clean", "🟢 its checks passed and GitHub calls it mergeable"),
    ("has_hooks", "🟢 its checks passed and GitHub calls it mergeable"),
    ("unstable", "⚠️ GitHub: unstable — a check that is not required failed or is pending"),
    ("behind", "⚠️ GitHub: behind master — it merges unless master must be up to date"),
])
def test_merge_is_offered_in_every_state_githubs_own_button_merges(world, state, line):
    live_pull(world, mergeable_state=state)
    world.deliver("pull_request", pull("opened"))
    assert "#2: Merge offered" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    message_id, (text, buttons) = only_message(world)
    assert text.splitlines()[0].startswith(f'🔀 <a href="https://github.com/{REPO}/pull/2">{REPO}#2</a> is ready to merge: ')
    assert text.splitlines()[1] == line and buttons == (("🔀 Merge",),)
    assert world.chat.messages[message_id].notified is True
    assert world.press("🔀")[1]["outcome"] == "🔀 merged"  # and GitHub merges it (behind: its base need not be up to date)


@pytest.mark.parametrize(("state", "line"), [
    ("blocked", "⏳ GitHub: blocked — a required review or check is missing"),
    ("dirty", "⚠️ GitHub: conflicts with master, which must be resolved"),
    ("draft", "⏳ GitHub: a draft — mark it ready for review to merge it"),
])
def test_a_release_github_would_not_merge_is_not_offered_merge_and_says_why_in_githubs_words(world, state, line):
    live_pull(world, mergeable_state=state)
    world.deliver("pull_request", pull("opened"))
    assert f"#2: not ready: {state}" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    message_id, (text, buttons) = only_message(world)
    assert text.splitlines() == [
        f'📦 <a href="https://github.com/{REPO}/pull/2">{REPO}#2</a> release pull request opened: chore(master): release 1.2.0',
        line]
    assert buttons is None and len(world.chat.sent) == 1 and world.chat.messages[message_id].notified is False  # an edit
    assert world.store.dump()[KEY]["mergeable_state"] == state
    edits, effects = len(world.chat.edits), world.effects()
    assert f"#2: not ready: {state}" in world.deliver("check_suite", suite_passed())[1]["outcome"]  # again: nothing new
    assert len(world.chat.edits) == edits and world.effects() == effects
    assert looked_again(world.services) == [f"{REPO}#2: not ready: {state}"]  # the sweep looks again


@pytest.mark.parametrize(("state", "line", "delivered"), [
    ("blocked", "⏳ GitHub: blocked — a required review or check is missing",  # changes asked for, reviews required
     ("pull_request_review", pull_review_approved(**{"review.state": "changes_requested"}))),
    ("dirty", "⚠️ GitHub: conflicts with master, which must be resolved", ("check_suite", suite_passed())),  # the base moved
    ("draft", "⏳ GitHub: a draft — mark it ready for review to merge it", ("pull_request", pull("converted_to_draft"))),
])
def test_a_release_offered_merge_that_github_now_would_not_merge_loses_merge_and_says_why(world, state, line, delivered):
    ready(world)
    assert only_message(world)[1][1] == (("🔀 Merge",),)
    sent = len(world.chat.sent)
    live_pull(world, mergeable_state=state)
    assert f"#2: Merge taken away: {state}" in world.deliver(*delivered)[1]["outcome"]
    message_id, (text, buttons) = only_message(world)
    assert buttons is None and text.splitlines() == [
        f'📦 <a href="https://github.com/{REPO}/pull/2">{REPO}#2</a> release pull request no longer ready to merge: '
        "chore(master): release 1.2.0", line]
    assert len(world.chat.sent) == sent  # an edit, without a sound
    assert not world.store.dump()[KEY]["ready"]
    assert looked_again(world.services) == [f"{REPO}#2: not ready: {state}"]  # waiting again: the sweep looks again
    live_pull(world)  # clean again (approved, the conflict resolved, ready for review)
    [again] = looked_again(world.services)
    assert again.startswith(f"{REPO}#2: Merge offered")  # (kept for the rest's call: the phone rests since the first)
    assert only_message(world)[1][1] == (("🔀 Merge",),)


def test_a_release_offered_merge_keeps_it_while_github_computes_its_state_again(world):
    ready(world)
    live_pull(world, mergeable_state="unknown")
    status, answer = world.deliver("pull_request", pull("converted_to_draft"))
    assert status == 500, answer  # delivered again later, when GitHub has computed it
    assert only_message(world)[1][1] == (("🔀 Merge",),) and world.store.dump()[KEY]["ready"]


def test_a_draft_release_marked_ready_for_review_is_offered_merge_once_github_calls_it_clean(world):
    live_pull(world, mergeable_state="draft")
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    assert only_message(world)[1][1] is None
    live_pull(world)
    assert "#2: Merge offered" in world.deliver("pull_request", pull("ready_for_review"))[1]["outcome"]
    assert only_message(world)[1][1] == (("🔀 Merge",),)


def test_while_github_still_computes_the_mergeable_state_a_delivery_fails_to_come_back_and_the_sweep_looks_again(world):
    live_pull(world, mergeable_state="unknown")
    world.deliver("pull_request", pull("opened"))
    status, answer = world.deliver("check_suite", suite_passed(), guid="suite")
    assert status == 500 and "computing whether it is mergeable" in answer["error"] and gets(world) == 2
    assert looked_again(world.services) == [f"{REPO}#2: not ready: unknown"]  # the sweep: read again next run
    assert only_message(world)[1][1] is None
    live_pull(world, mergeable_state="unstable")
    assert "#2: Merge offered" in world.deliver_again("suite")[1]["outcome"]


def test_an_unstable_release_names_the_checks_that_are_not_required_and_did_not_pass(world):
    unstable(world, check_run("build"), check_run("lint", "failure", number=2), check_run("e2e", status="in_progress", number=3),
             check_run("docs", "skipped", number=4))
    world.deliver("pull_request", pull("opened"))
    assert "#2: Merge offered" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    _, (text, buttons) = only_message(world)
    runs = f"https://github.com/{REPO}/runs"
    assert text.splitlines()[1] == (f'⚠️ <a href="{runs}/2">lint</a> failed and <a href="{runs}/3">e2e</a> pending, '
                                    "not required")
    assert buttons == (("🔀 Merge",),)
    listed = [n for s, n in world.faults.log if s == "github" and n == f"GET /repos/{REPO}/commits/{HEAD}/check-runs"]
    assert len(listed) == 1
    assert world.press("🔀")[1]["outcome"] == "🔀 merged"


def test_a_clean_release_reads_no_check_runs(world):
    ready(world)
    assert not [n for s, n in world.faults.log if s == "github" and n.endswith("/check-runs")]


def test_an_unstable_release_with_many_checks_not_passing_names_three_and_counts_the_rest(world):
    unstable(world, *(check_run(f"job{n}", "failure", number=n) for n in range(1, 6)),
             check_run("slow", "timed_out", number=6))
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    line = only_message(world)[1][0].splitlines()[1]
    assert line.startswith("⚠️ ") and line.endswith(">job3</a> failed and 3 more, not required")
    assert [c["name"] for c in world.store.dump()[KEY]["checks"]] == ["job1", "job2", "job3", "job4", "job5", "slow"]


def test_an_unstable_release_whose_check_runs_github_will_not_list_says_only_that_it_is_unstable(world):
    from pager.permissions import needed_permissions

    unstable(world, check_run("lint", "failure"))
    world.hub.installation_permissions[1] = {k: v for k, v in needed_permissions().items() if k != "checks"}
    world.deliver("pull_request", pull("opened"))
    assert "#2: Merge offered" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    assert only_message(world)[1][0].splitlines()[1] == (
        "⚠️ GitHub: unstable — a check that is not required failed or is pending")


def test_a_release_offered_merge_shows_what_github_says_of_it_when_a_check_finishes(world):
    unstable(world, check_run("lint", "failure"), check_run("e2e", status="in_progress", number=2))
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    sent = len(world.chat.sent)
    world.hub.check_runs[(REPO, HEAD)][1] = check_run("e2e", "success", number=2)  # e2e passed: its suite completes
    assert "#2: release updated" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    _, (text, buttons) = only_message(world)
    assert text.splitlines()[1].endswith(">lint</a> failed, not required") and buttons == (("🔀 Merge",),)
    assert len(world.chat.sent) == sent  # an edit, without a sound
    live_pull(world)  # lint was run again and passed: GitHub calls it clean
    world.deliver("check_suite", suite_passed())
    assert only_message(world)[1][0].splitlines()[1] == "🟢 its checks passed and GitHub calls it mergeable"
    assert "checks" not in world.store.dump()[KEY]


def test_a_behind_release_is_offered_merge_and_githubs_refusal_says_its_base_must_be_up_to_date(world):
    live_pull(world, mergeable_state="behind")
    world.hub.up_to_date_required.add(REPO)  # branch protection: pager cannot read it; GitHub's answer tells
    world.deliver("pull_request", pull("opened"))
    assert "#2: Merge offered" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    code, answer = world.press("🔀")
    assert (code, answer["outcome"]) == (200, "GitHub refused the merge: Head branch is out of date. "
                                              "(behind master, which must be up to date)")
    _, (text, buttons) = only_message(world)
    assert text.splitlines()[1:] == ["⏳ GitHub: behind master, which must be up to date",
                                     "⚠️ GitHub refused the merge: Head branch is out of date."]
    assert buttons is None and world.hub.merges == []
    assert looked_again(world.services) == []  # not read again: GitHub said it, for this head
    chat = world.chat.view()
    assert "not offered again" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    assert world.chat.view() == chat
    # The branch updated on GitHub: a new head, its checks, and 🔀 Merge again
    live_pull(world, sha=NEWER)
    world.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))
    assert "#2: Merge offered" in world.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert "refusal_cause" not in world.store.dump()[KEY]
    assert world.press("🔀")[1]["outcome"] == "🔀 merged"


def test_a_suite_of_a_head_the_pull_request_no_longer_has_changes_nothing_and_a_failed_suite_reads_nothing(world):
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    before = world.store.dump()
    assert "#2: not the recorded head" in world.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert gets(world) == 1 and world.store.dump() == before
    assert "the suite did not pass" in world.deliver("check_suite", suite_passed(conclusion="failure"))[1]["outcome"]
    assert gets(world) == 1


def test_a_suite_passed_on_a_head_whose_synchronize_never_came_records_the_head_and_offers_merge(world):
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    pushed_unseen(world)  # its synchronize failed and is not back (yet)
    answer = world.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert "Merge offered" in answer
    state = world.store.dump()
    assert "Merge already offered" in world.deliver("check_suite", suite_passed(sha=NEWER))[1]["outcome"]
    assert world.store.dump() == state and len(world.chat.sent) == 2  # opened, then ready (with a sound)
    assert world.store.dump()[KEY]["head"] == NEWER
    _, (text, buttons) = only_message(world)
    assert buttons == (("🔀 Merge",),)
    # The synchronize, delivered late, changes nothing.
    late = world.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))[1]
    assert only_message(world)[1][1] == (("🔀 Merge",),), late


def test_while_github_computes_mergeability_the_pull_request_is_read_again_then_the_step_fails_to_come_back(world):
    live_pull(world)
    world.hub.pulls[(REPO, 2)]["mergeable"] = None
    world.deliver("pull_request", pull("opened"))
    status, answer = world.deliver("check_suite", suite_passed())
    assert status == 500 and "computing whether it is mergeable" in answer["error"]
    assert gets(world) == 2 and only_message(world)[1][1] is None
    world.hub.pulls[(REPO, 2)]["mergeable"] = True
    status, answer = world.deliver("check_suite", suite_passed())
    assert status == 200 and "Merge offered" in answer["outcome"]


def test_a_new_head_takes_merge_away(world):
    ready(world)
    answer = world.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))[1]
    assert "release updated" in answer["outcome"]
    _, (text, buttons) = only_message(world)
    assert buttons is None and "ready to merge" not in text
    assert text.splitlines()[0].endswith("release pull request updated with new commits: chore(master): release 1.2.0")
    assert text.splitlines()[1].startswith("⏳ new commits: waiting again for its checks")


def test_a_stale_synchronize_does_not_take_merge_from_a_ready_release(world):
    live_pull(world, sha=NEWER)
    world.deliver("pull_request", pull("opened"))
    world.deliver("pull_request", pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z"))
    world.deliver("check_suite", suite_passed(sha=NEWER))
    assert only_message(world)[1][1] == (("🔀 Merge",),)
    effects, before = world.effects(), world.store.dump()
    # The synchronize that brought the older head comes again, late.
    stale = pull("synchronize", head=HEAD, updated_at="2026-12-01T10:30:00Z")
    assert "stale: older than the recorded head" in world.deliver("pull_request", stale)[1]["outcome"]
    # And the newest one again, twice.
    again = pull("synchronize", head=NEWER, updated_at="2026-12-01T11:00:00Z")
    assert "already shown" in world.deliver("pull_request", again)[1]["outcome"]
    assert world.effects() == effects and world.store.dump() == before
    assert only_message(world)[1][1] == (("🔀 Merge",),)


def test_an_edited_title_keeps_merge(world):
    ready(world)
    edited = pull("edited", updated_at="2026-12-01T11:00:00Z", **{"pull_request.title": "chore(master): release 1.3.0"})
    world.deliver("pull_request", edited)
    _, (text, buttons) = only_message(world)
    assert "release 1.3.0" in text and buttons == (("🔀 Merge",),)


# -- the press ---------------------------------------------------------------------------------------------


def test_merge_merges_the_recorded_head_with_the_configured_method_and_records_it(world):
    ready(world)
    status, answer = world.press("🔀")
    assert (status, answer["outcome"]) == (200, "🔀 merged")
    assert world.hub.merges == [{"repository": REPO, "number": 2, "sha": HEAD, "merge_method": "squash"}]
    assert world.chat.answers[-1][1] == "🔀 merged"
    _, (text, buttons) = only_message(world)
    commit = world.hub.pulls[(REPO, 2)]["merge_commit_sha"]
    assert text.startswith(f'✅ <a href="https://github.com/{REPO}/pull/2">{REPO}#2</a> merged: ') and buttons is None
    assert f'<a href="https://github.com/{REPO}/commit/{commit}">{commit[:7]}</a>' in text
    record = world.store.dump()[KEY]
    assert record["state"] == "merged" and record["merged"]["commit"] == commit


def test_a_second_press_on_merge_merges_nothing(world):
    ready(world)
    message_id = max(world.chat.messages)
    data = world.chat.button_data(message_id, "🔀")
    world.update(world.press_update(data, message_id=message_id))
    status, answer = world.update(world.press_update(data, message_id=message_id))
    assert answer["outcome"] == "✅ already merged"
    assert len(world.hub.merges) == 1


def test_a_merge_whose_record_the_table_refuses_is_answered_merged_and_a_press_again_finds_it_merged_on_github(world):
    ready(world)

    def after_the_merge(service, name):  # the table throttles from GitHub's merge on: its record, and any load
        if service == "github" and name.endswith("/merge") and not world.faults.rules:
            world.faults.fail("store", None, kind="store", count=100)

    world.faults.observers.append(after_the_merge)
    message_id = max(world.chat.messages)
    data = world.chat.button_data(message_id, "🔀")
    world.update(world.press_update(data, message_id=message_id))
    assert world.chat.answers[-1][1] == "🔀 merged (the message catches up in a moment)"
    world.faults.observers.clear()
    world.faults.heal()
    world.advance(4)  # the merge's claim has passed its lease
    assert world.update(world.press_update(data, message_id=message_id))[1]["outcome"] == "✅ already merged"
    assert len(world.hub.merges) == 1
    _, (text, buttons) = only_message(world)
    assert buttons is None and "refused" not in text and "merged" in text


def test_a_release_merged_on_github_meanwhile_is_answered_merged_even_when_the_table_fails_after(world):
    ready(world)
    world.hub.pulls[(REPO, 2)].update(merged=True, state="closed", merge_commit_sha="d" * 40)  # merged by hand

    def after_reading_it(service, name):  # the table throttles once GitHub said it is merged
        if service == "github" and name == f"GET /repos/{REPO}/pulls/2" and not world.faults.rules:
            world.faults.fail("store", None, kind="store", count=100)

    world.faults.observers.append(after_reading_it)
    world.press("🔀")
    assert world.chat.answers[-1][1] == "🔀 merged (the message catches up in a moment)"
    assert world.hub.merges == []


def test_a_refused_merge_whose_pull_request_github_cannot_show_now_keeps_merge_and_says_try_again(world):
    ready(world)
    world.hub.merge_refusal = (405, "Pull Request is not mergeable")
    world.hub.fail(rf"^GET /repos/{REPO}/pulls/2$", 502, count=10)  # merged already? GitHub cannot say now
    status, answer = world.press("🔀")
    assert status == 200 and world.chat.answers[-1][1] == "⚠️ GitHub is not answering: try again in a minute"
    assert only_message(world)[1][1] == (("🔀 Merge",),)  # not taken away on a guess


@pytest.mark.parametrize(
    "status,reason",
    [(405, "Pull Request is not mergeable"), (409, "Head branch was modified. Review and try the merge again.")],
)
def test_a_refused_merge_answers_the_reason_and_takes_merge_away(world, status, reason):
    ready(world)
    world.hub.merge_refusal = (status, reason)
    code, answer = world.press("🔀")
    assert (code, answer["outcome"]) == (200, f"GitHub refused the merge: {reason}")
    assert world.chat.answers[-1][1].startswith("GitHub refused the merge")
    _, (text, buttons) = only_message(world)
    assert buttons is None and f"⚠️ GitHub refused the merge: {reason}" in text


def test_a_release_whose_head_github_refused_to_merge_is_not_read_again_by_the_sweep(world):
    ready(world)
    world.hub.merge_refusal = (405, "Pull Request is not mergeable")
    world.press("🔀")
    assert looked_again(world.services) == []  # GitHub may still call it clean: a new head or a review offers it again


WORKFLOW_FILE = ".github/workflows/release.yml"


def test_the_fake_github_refuses_to_merge_a_change_to_workflows_to_an_installation_without_the_permission(world):
    from pager.errors import WorkflowsRefused
    from pager_world.payloads import INSTALLATION

    live_pull(world)
    world.hub.pull_files[(REPO, 2)] = ["CHANGELOG.md", WORKFLOW_FILE]
    with pytest.raises(WorkflowsRefused) as refused:
        world.services.github.merge_pull(REPO, 2, sha=HEAD, method="squash", installation_id=INSTALLATION)
    # the answer public reports quote: 403, GitHub's words naming the first workflow file changed
    assert refused.value.status == 403 and refused.value.file == WORKFLOW_FILE
    assert refused.value.reason == ("refusing to allow a GitHub App to create or update workflow "
                                    f"`{WORKFLOW_FILE}` without `workflows` permission")
    assert world.hub.merges == []
    world.hub.installation_permissions[INSTALLATION]["workflows"] = "write"  # the owner accepted it
    assert world.services.github.merge_pull(REPO, 2, sha=HEAD, method="squash", installation_id=INSTALLATION)["merged"]


@pytest.mark.parametrize("status", [403, 422])  # 403 as public reports quote it; GitHub documents no status for it
def test_a_refusal_for_the_workflows_permission_is_known_by_its_words_whatever_the_status(world, status):
    from pager.errors import WorkflowsRefused
    from pager_world.payloads import INSTALLATION

    live_pull(world)
    reason = f"refusing to allow a GitHub App to create or update workflow `{WORKFLOW_FILE}` without `workflows` permission"
    world.hub.merge_refusal = (status, reason)
    with pytest.raises(WorkflowsRefused) as refused:
        world.services.github.merge_pull(REPO, 2, sha=HEAD, method="squash", installation_id=INSTALLATION)
    assert refused.value.status == status and refused.value.file == WORKFLOW_FILE and refused.value.reason == reason


def test_a_merge_refused_for_the_workflows_permission_with_422_says_so_in_words(world):
    ready(world)
    world.hub.merge_refusal = (422, "refusing to allow a GitHub App to create or update workflow "
                                    f"`{WORKFLOW_FILE}` without `workflows` permission")
    code, answer = world.press("🔀")
    assert (code, answer["outcome"]) == (200, "GitHub refused the merge: this release changes .github/workflows/, and "
                                              "pager's app lacks the Workflows permission. Merge it on GitHub, or add the "
                                              "permission (linked in the message)")
    assert world.store.dump()[KEY]["refusal_cause"] == "workflows" and world.hub.merges == []


def test_a_merge_refused_for_the_workflows_permission_says_so_in_words_and_links_where_to_add_it(world):
    ready(world)
    world.hub.pull_files[(REPO, 2)] = [WORKFLOW_FILE]
    code, answer = world.press("🔀")
    said = ("GitHub refused the merge: this release changes .github/workflows/, and pager's app lacks the Workflows "
            "permission. Merge it on GitHub, or add the permission (linked in the message)")
    assert (code, answer["outcome"]) == (200, said) and world.chat.answers[-1][1] == said
    assert len(said) <= 200  # answerCallbackQuery's text
    _, (text, buttons) = only_message(world)
    assert buttons is None and world.hub.merges == []
    page = "https://github.com/settings/apps/pager-test/permissions"
    assert ("⚠️ GitHub refused the merge: this release changes .github/workflows/, and pager's app lacks the "
            f'Workflows permission. Merge it on GitHub, or add it on <a href="{page}">the app\'s permissions page</a> '
            "(Repository permissions → Workflows: Read and write; the installation's owner then accepts it) and approve "
            "the pull request again for 🔀") in text
    assert "refusing to allow" not in text and "403" not in text and "WorkflowsRefused" not in text
    # no loop: the sweep does not offer 🔀 again for this head, nor does GitHub's next check suite on it
    chat = world.chat.view()
    world.sweep()
    world.deliver("check_suite", suite_passed())
    assert world.chat.view() == chat and world.hub.merges == []
    assert world.store.dump()[KEY]["refusal_cause"] == "workflows"
    # with the permission added and accepted, an approval offers 🔀 again, and it merges
    world.hub.installation_permissions[1]["workflows"] = "write"
    world.deliver("pull_request_review", pull_review_approved())
    assert world.press("🔀")[1]["outcome"] == "🔀 merged"
    assert "refusal_cause" not in world.store.dump()[KEY]


def test_a_merge_with_a_head_that_moved_on_github_is_refused_and_never_merges_the_new_head(world):
    ready(world)
    live_pull(world, sha=NEWER)  # pushed to, and the webhook of it not here yet
    assert world.press("🔀")[1]["outcome"].startswith("GitHub refused the merge: Head branch was modified")
    assert world.hub.merges == []


# -- merged and published ----------------------------------------------------------------------------------


def test_a_merged_release_is_recorded_and_edited_once(world):
    ready(world)
    assert "merge recorded" in world.deliver("pull_request", merged())[1]["outcome"]
    assert "merge already recorded" in world.deliver("pull_request", merged())[1]["outcome"]
    assert len(world.chat.sent) == 2 and len(world.chat.edits) == 1  # opened, Merge offered anew; merged
    record = world.store.dump()[KEY]
    assert record["merged"] == {"commit": "c" * 40, "at": "2026-12-01T12:00:00Z"}
    assert world.store.dump()[f"release-latest#{REPO_ID}"] == {"number": 2, "at": "2026-12-01T12:00:00Z"}


def test_a_release_merged_through_the_button_is_not_recorded_again_by_its_webhook(world):
    ready(world)
    world.press("🔀")
    effects = world.effects()
    assert "merge already recorded" in world.deliver("pull_request", merged())[1]["outcome"]
    assert world.effects() == effects


def test_release_published_afterwards_adds_the_tag_once(world):
    ready(world)
    world.deliver("pull_request", merged())
    assert world.deliver("release", published())[1]["outcome"] == "tag added"
    assert world.deliver("release", published())[1]["outcome"] == "tag already shown"
    _, (text, _) = only_message(world)
    assert text.endswith(f'🏷 <a href="https://github.com/{REPO}/releases/tag/v1.2.0">v1.2.0</a>')


def test_the_tag_of_an_older_version_is_not_added_to_this_release(world):
    ready(world)
    world.deliver("pull_request", merged())
    old = published(tag="v1.1.0", at="2026-11-01T00:00:00Z")
    assert world.deliver("release", old)[1]["outcome"] == "tag kept until its release pull request is known"
    assert "v1.1.0" not in only_message(world)[1][0]


def test_a_tag_published_while_its_merge_is_failing_lands_on_its_own_release_not_the_previous_one(world):
    # Release 1.1.0 (#1) was merged and tagged before.
    previous = {"pull_request.number": 1, "number": 1, "pull_request.title": "chore(master): release 1.1.0",
                "pull_request.html_url": f"https://github.com/{REPO}/pull/1"}
    world.deliver("pull_request", pull("opened", **previous))
    world.deliver("pull_request", merged(**previous, **{"pull_request.merged_at": "2026-11-20T12:00:00Z"}))
    world.deliver("release", published(tag="v1.1.0", at="2026-11-20T12:05:00Z"))
    # Release 1.2.0 (#2) is ready; its merge's delivery fails (Telegram answers 502 on the edit).
    ready(world)
    world.faults.fail_next("telegram-5xx", "editMessageText")
    assert world.deliver("pull_request", merged(), guid="merged-2")[0] == 500
    assert world.deliver("release", published())[1]["outcome"] == "tag kept until the merge is recorded"
    assert world.deliver_again("merged-2")[0] == 200  # the sweep brings the merge back
    [older] = [text for text, _ in world.chat.view().values() if "release 1.1.0" in text]
    [newer] = [text for text, _ in world.chat.view().values() if "release 1.2.0" in text]
    assert " merged: " in newer and newer.endswith(">v1.2.0</a>")
    assert "v1.2.0" not in older


def test_a_tag_published_before_its_release_pull_request_is_known_shows_once_it_is_merged(world):
    assert world.deliver("release", published())[1]["outcome"] == "tag kept until its release pull request is known"
    ready(world)
    world.deliver("pull_request", merged())
    text = only_message(world)[1][0]
    assert text.endswith(f'🏷 <a href="https://github.com/{REPO}/releases/tag/v1.2.0">v1.2.0</a>')


def test_an_approval_that_comes_after_the_checks_passed_offers_merge(world):
    live_pull(world, mergeable_state="blocked")  # a required review is missing
    world.deliver("pull_request", pull("opened"))
    assert "not ready: blocked" in world.deliver("check_suite", suite_passed())[1]["outcome"]
    live_pull(world)  # approved: GitHub calls it clean now
    assert "#2: Merge offered" in world.deliver("pull_request_review", pull_review_approved())[1]["outcome"]
    assert only_message(world)[1][1] == (("🔀 Merge",),)


def test_the_versions_of_a_release_are_read_from_release_please_and_changesets_texts():
    assert release.versions_of("chore(main): release 1.2.0") == ("1.2.0",)
    assert release.versions_of("chore(main): release app 2.4.0-rc.1") == ("2.4.0-rc.1",)
    assert release.versions_of("Version Packages", "## @acme/app@3.0.1\n## @acme/lib@1.0.0") == ("3.0.1", "1.0.0")
    assert release.versions_of("v1.2.0") == release.versions_of("app-v1.2.0") == ("1.2.0",)
    assert release.versions_of("release 1.2.0.1.3") == ()


def test_closed_without_merging_says_so_and_removes_merge(world):
    ready(world)
    closed = pull("closed", updated_at="2026-12-01T12:00:00Z", **{"pull_request.merged": False})
    assert "closed recorded" in world.deliver("pull_request", closed)[1]["outcome"]
    _, (text, buttons) = only_message(world)
    assert "closed without merging" in text and buttons is None
    live_pull(world)
    world.deliver("pull_request", pull("reopened", updated_at="2026-12-01T13:00:00Z"))
    assert only_message(world)[1][0].splitlines()[0].endswith("release pull request reopened: chore(master): release 1.2.0")


def test_a_non_release_pull_request_is_left_to_contributions(world):
    body = payload("pull_request", "synchronize")
    assert world.deliver("pull_request", body)[1]["outcome"] == "ignored: not a release pull request"


# -- racing ----------------------------------------------------------------------------------------------


def test_two_deliveries_of_the_same_release_pull_request_racing_send_one_message(world):
    world.race("pull_request", [pull("opened"), pull("opened")])
    assert len(world.chat.sent) == 1


# -- failures at every call -------------------------------------------------------------------------------



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
        Scenario(
            "suite passed, a check that is not required failed",
            lambda h: (unstable(h, check_run("lint", "failure")), h.deliver("pull_request", pull("opened"))),
            delivering("check_suite", suite_passed()),
        ),
        Scenario(
            "suite passed, a required review missing",
            lambda h: (live_pull(h, mergeable_state="blocked"), h.deliver("pull_request", pull("opened"))),
            delivering("check_suite", suite_passed()),
        ),
        Scenario(
            "suite passed on a release offered merge, a check finished since",
            lambda h: (unstable(h, check_run("lint", "failure"), check_run("e2e", status="queued", number=2)),
                       h.deliver("pull_request", pull("opened")), h.deliver("check_suite", suite_passed()),
                       h.hub.check_runs[(REPO, HEAD)].pop()),
            delivering("check_suite", suite_passed()),
        ),
        Scenario("merged", ready, delivering("pull_request", merged())),
        Scenario("published", lambda h: (ready(h), h.deliver("pull_request", merged())), delivering("release", published())),
        Scenario("merge pressed", ready, *pressing("🔀"), presses=False),
        Scenario("merge pressed, behind a base that must be up to date", lambda h: (
            live_pull(h, mergeable_state="behind"), h.hub.up_to_date_required.add(REPO),
            h.deliver("pull_request", pull("opened")), h.deliver("check_suite", suite_passed())),
            *pressing("🔀"), presses=False),
    ],
    ids=lambda s: s.name,
)
def test_a_failure_at_any_call_fails_the_step_and_doing_it_again_ends_as_undisturbed(make_world, scenario):
    report = failure_matrix(make_world, scenario)
    assert report.failed


# -- the pure decisions ------------------------------------------------------------------------------------


def _p(**changes) -> ReleasePull:
    values = dict(number=2, title="t", url="u", head=HEAD, order="2026-12-01T10:00:00Z", state="open", merged=False,
                  merge_commit="", merged_at="", installation_id=1)
    values.update(changes)
    return ReleasePull(**values)


def test_deciding_a_payload_older_than_the_record_changes_nothing():
    data = {"order": "2026-12-01T11:00:00Z", "head": NEWER, "state": "open", "ready": True, "message_id": 1}
    step = decide_pull(EXAMPLE_REPO, _p())(data, 0.0)
    assert step.effect is None and step.data is None


def test_deciding_a_new_head_drops_ready():
    data = {"order": "2026-12-01T09:00:00Z", "head": NEWER, "state": "open", "ready": True, "message_id": 1,
            "text": "x", "buttons": None, "number": 2, "title": "t", "url": "u", "ref": "r"}
    step = decide_pull(EXAMPLE_REPO, _p())(data, 0.0)
    assert step.then(Posted(CHAT_ID, 1))["ready"] is False and step.effect.buttons is None


def test_merge_callback_data_fits_64_bytes_for_the_longest_names():
    long_name = "o" * 39 + "/" + "r" * 100
    _, buttons = release.render(long_name, {"number": 99999999, "state": "open", "ready": True, "title": "t", "url": "u"},
                                2**63 - 1)  # GitHub's ids are 64-bit
    assert len(buttons[0][0][1].encode()) <= 64


def test_a_pull_request_from_a_fork_on_a_branch_named_like_a_release_is_a_contribution(world):
    forked = pull("opened", **{"pull_request.head.repo": {"full_name": "someone/Hello-World", "id": 9},
                               "pull_request.author_association": "NONE", "pull_request.user.login": "mallory",
                               "sender.login": "mallory"})
    outcome = world.deliver("pull_request", forked)[1]["outcome"]
    assert outcome == "sent, draft asked; ignored: not a release pull request"
    [(text, buttons)] = world.chat.view().values()
    assert text.startswith("💬 mallory opened pull request") and buttons == (("🔕 Mute this thread 8 h",), (f"🔕 Mute {REPO} 8 h",))


def test_a_release_that_gets_no_check_suite_is_offered_merge_once_github_calls_it_clean(world):
    # Opened with GITHUB_TOKEN (release-please's default), it runs no workflow: no check_suite comes.
    live_pull(world, mergeable_state="unknown")
    world.deliver("pull_request", pull("opened"))
    assert looked_again(world.services) == [f"{REPO}#2: not ready: unknown"]
    live_pull(world)  # GitHub has computed it: mergeable and clean
    assert looked_again(world.services) == [f"{REPO}#2: Merge offered"]
    assert only_message(world)[1][1] == (("🔀 Merge",),)
    assert looked_again(world.services) == []  # ready: no longer waiting, no call made


def test_releases_waiting_for_merge_are_read_again_the_longest_unchecked_first(world):
    for number in (2, 3, 4, 5):
        world.hub.pulls[(REPO, number)] = {"number": number, "state": "open", "head": {"sha": HEAD, "ref": "release-please--x"},
                                           "base": {"ref": "master"}, "mergeable_state": "blocked"}
        world.deliver("pull_request", pull("opened", **{"pull_request.number": number, "number": number}))
        world.now += 1
    first = looked_again(world.services, limit=2)
    second = looked_again(world.services, limit=2)
    assert [o.split(":")[0] for o in first + second] == [f"{REPO}#{n}" for n in (2, 3, 4, 5)]


def test_an_outsiders_approval_whose_draft_is_refused_still_offers_merge(world):
    # pull_request_review.submitted runs the contribution's handler, then the release's: a refusal in
    # the first (the draft's dispatch) is answered 424 as a refusal, and the second still acts.
    live_pull(world)
    world.deliver("pull_request", pull("opened"))
    body = pull_review_approved(**{"review.user.login": "alice", "review.author_association": "NONE",
                                   "review.body": "LGTM", "review.user.type": "User", "sender.login": "alice"})
    world.hub.fail(r"^POST /repos/.*/dispatches$", 422, body={"message": "Validation Failed"})
    status, answer = world.deliver("pull_request_review", body)
    assert status == 424 and answer["outcome"] == "refused" and "#2: Merge offered" in answer["done"]
    [release_buttons] = [buttons for text, buttons in world.chat.view().values() if text.startswith("🔀")]
    assert release_buttons == (("🔀 Merge",),)  # and the review itself was shown to the maintainer


def test_a_release_closed_before_its_late_opened_shows_nothing(world):
    live_pull(world, state="closed")
    assert world.deliver("pull_request", pull("closed", updated_at="2026-12-01T10:10:00Z"))[1]["outcome"].endswith("closed recorded")
    outcome = world.deliver("pull_request", pull("opened", updated_at="2026-12-01T10:00:00Z"))[1]["outcome"]
    assert outcome.endswith("stale: older than the recorded head") and world.chat.view() == {}
    assert looked_again(world.services) == []  # nothing waits for Merge


def test_a_release_whose_closed_event_never_came_stops_waiting_once_the_sweep_reads_it_closed(world):
    live_pull(world, mergeable_state="unknown")
    world.deliver("pull_request", pull("opened"))
    world.hub.pulls[(REPO, 2)].update(state="closed", updated_at="2026-12-01T12:00:00Z")
    assert looked_again(world.services) == [f"{REPO}#2: closed as GitHub has it"]
    assert "closed without merging" in only_message(world)[1][0]
    assert looked_again(world.services) == []


@pytest.mark.parametrize("closing_comes", [True, False], ids=["its-closing-brings-it", "its-edit-delivered-again-does"])
def test_a_title_edited_before_a_merge_by_the_button_is_what_the_merged_message_shows(world, closing_comes):
    # 🔀 records the merge first (the record's order stays the head's); GitHub's closed event, or the edited
    # one delivered again after the press, carries the newer title: it is still GitHub's latest word (found
    # by a property test delivering a release's events in any order).
    from pager_world.cases import BRANCH

    edited_title = "chore(master): release 1.2.0 (edited)"
    head = "1" * 40
    world.hub.pulls[(REPO, 2)] = {"number": 2, "state": "open", "title": edited_title, "html_url": f"https://github.com/{REPO}/pull/2",
                                  "head": {"sha": head, "ref": BRANCH}, "base": {"ref": "master"},
                                  "updated_at": "2026-12-01T10:01:00Z", "merged": False, "mergeable_state": "clean"}
    world.deliver("pull_request", pull("opened", head=head, updated_at="2026-12-01T10:00:00Z"))
    world.deliver("check_suite", suite_passed(head))
    world.chat.fail("editMessageText", 502)
    edited = pull("edited", head=head, updated_at="2026-12-01T10:01:00Z", **{"pull_request.title": edited_title})
    assert world.deliver("pull_request", edited, guid="edited")[0] == 500
    [message_id] = world.chat.view()
    assert world.press("🔀", message_id)[0] == 200
    if closing_comes:
        sha = world.hub.pulls[(REPO, 2)]["merge_commit_sha"]
        world.deliver("pull_request", pull("closed", head=head, updated_at="2026-12-01T10:05:00Z", **{
            "pull_request.title": edited_title, "pull_request.state": "closed", "pull_request.merged": True,
            "pull_request.merged_at": "2026-12-01T10:05:00Z", "pull_request.merge_commit_sha": sha}))
    world.deliver_again("edited")
    [(text, _)] = world.chat.view().values()
    assert edited_title in text and "merged" in text.splitlines()[0]


def test_a_read_of_github_made_before_a_review_offered_merge_does_not_take_it_away(world):
    # a check suite's delivery read the pull request blocked; meanwhile the approval's delivery offered Merge
    live_pull(world, mergeable_state="blocked")
    world.deliver("pull_request", pull("opened"))
    read_at = world.services.now()
    live = world.services.github.get_pull(REPO, 2, installation_id=None)
    world.now += 1
    live_pull(world)
    assert "Merge offered" in world.deliver("pull_request_review", pull_review_approved())[1]["outcome"]
    decide = partial(release.decide_ready, Repository(REPO_ID, REPO), HEAD, live, True, None, read_at=read_at)
    assert "Merge already offered" in release.settle_release(world.services, Repository(REPO_ID, REPO), 2, decide).outcome
    assert world.store.dump()[KEY]["ready"] and only_message(world)[1][1] == (("🔀 Merge",),)


def test_the_sweeps_read_of_a_waiting_release_does_not_take_away_the_merge_a_review_offered_since(world):
    live_pull(world, mergeable_state="blocked")
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    looked = release.look_again(world.services)  # the run reads it: blocked
    world.now += 1
    live_pull(world)  # approved before the run acts on its read
    assert "Merge offered" in world.deliver("pull_request_review", pull_review_approved())[1]["outcome"]
    release.settle_looked(world.services, looked, world.services.now())
    assert world.store.dump()[KEY]["ready"] and only_message(world)[1][1] == (("🔀 Merge",),)
