"""The signals' cases: variants of GitHub's example payloads for each signal, and the acts tests share.

All in the examples' repository (`REPO`, Codertocat/Hello-World, default branch `master`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .payloads import payload, repository
from .world import CONTROL, REPO, World

# -- contributions ---------------------------------------------------------------------------------------


def outside(event: str, action: str, /, who: str = "issue", **changes: Any) -> dict[str, Any]:
    """An example payload made into one by someone from outside (alice, no association)."""
    return payload(
        event,
        action,
        **{f"{who}.author_association": "NONE", f"{who}.user.login": "alice", "sender.login": "alice", **changes},
    )


def issue_comment_by(login: str, *, comment_id: int, number: int, **changes: Any) -> dict[str, Any]:
    """An outsider's comment on an issue (a thing of its own: each comment is shown once)."""
    return outside("issue_comment", "created", who="comment", **{
        "comment.user.login": login, "sender.login": login, "comment.id": comment_id, "issue.number": number,
        "comment.html_url": f"https://github.com/{REPO}/issues/{number}#issuecomment-{comment_id}", **changes})


def issue_opened(**changes: Any) -> dict[str, Any]:
    return outside("issues", "opened", **changes)


def issue_closed(**changes: Any) -> dict[str, Any]:
    return issue_opened(**{"action": "closed", "issue.state": "closed", "issue.updated_at": "2019-05-16T10:00:00Z", **changes})


# -- the alarm -------------------------------------------------------------------------------------------


def run(conclusion: str, *, workflow_id: int = 2823525, number: int = 163, attempt: int = 1, name: str = "test",
        branch: str = "master", **changes: Any) -> dict[str, Any]:
    """A workflow_run.completed of the example payload, on the examples' repository."""
    return payload(
        "workflow_run",
        "completed",
        **{
            "workflow_run.conclusion": conclusion,
            "workflow_run.workflow_id": workflow_id,
            "workflow.id": workflow_id,
            "workflow.name": name,
            "workflow_run.run_number": number,
            "workflow_run.run_attempt": attempt,
            "workflow_run.head_branch": branch,
            "workflow_run.head_repository.full_name": REPO,
            "workflow_run.html_url": f"https://github.com/{REPO}/actions/runs/{workflow_id}{number}{attempt}",
            **changes,
        },
    )


FIX_RUN_URL = f"https://github.com/{CONTROL}/actions/runs/4242001"


def fix_run(action: str = "requested", *, created_at: str = "2027-01-15T08:02:05Z", url: str = FIX_RUN_URL,
            **changes: Any) -> dict[str, Any]:
    """A run of the control repository's pager-fix workflow, started by a `repository_dispatch` for the examples'
    repository and named as examples/workflows/pager-fix.yml names it (run-name "pager-fix owner/name"):
    `requested` when GitHub creates it (GitHub's example payload is such a dispatched run)."""
    return payload(
        "workflow_run",
        action,
        repository=repository(CONTROL, 4242),
        **{
            "workflow.name": "pager-fix",
            "workflow_run.name": "pager-fix",
            "workflow_run.event": "repository_dispatch",
            "workflow_run.display_title": f"pager-fix {REPO}",
            "workflow_run.head_branch": "main",
            "workflow_run.head_repository.full_name": CONTROL,
            "workflow_run.html_url": url,
            "workflow_run.created_at": created_at,
            "workflow_run.run_started_at": created_at,
            "workflow_run.updated_at": created_at,
            **changes,
        },
    )


def suite(conclusion: str, *, slug: str | None = "octocoders-linter", branch: str = "master",
          updated_at: str = "2019-05-15T15:21:14Z", created_at: str = "2019-05-15T15:20:31Z",
          sha: str | None = None) -> dict[str, Any]:
    """Another app's check suite: `created_at` when its commit was pushed, `updated_at` when its run ended."""
    body = payload(
        "check_suite",
        "completed",
        **{"check_suite.conclusion": conclusion, "check_suite.head_branch": branch, "check_suite.updated_at": updated_at,
           "check_suite.created_at": created_at},
    )
    if sha is not None:
        body["check_suite"]["head_sha"] = sha
    if slug is not None:
        body["check_suite"]["app"]["slug"] = slug
    return body


def alert(action: str, fixture: str | None = None, **changes: Any) -> dict[str, Any]:
    return payload("code_scanning_alert", fixture or action, **{"action": action, **changes})


def live_alert(w: World, state: str, updated_at: str, number: int = 10) -> None:
    """Code scanning alert #10 as GitHub's REST API has it: its state, and `updated_at`, which moves with each
    change of state (the webhook payloads carry no such time)."""
    w.hub.alerts[(REPO, number)] = {"number": number, "state": state, "created_at": "2021-02-11T03:10:43Z",
                                    "updated_at": updated_at}


def delivery_entry(guid: str, order: str = "2026-12-02T08:00:00Z") -> dict[str, Any]:
    """A `delivery:` entry as the sweep opens it for an issue's event whose attempts all failed, its line in
    the sweep's own words (`delivery_title`, `delivery_detail`), linked to the issue it read."""
    from pager.sweep.deliveries import delivery_detail, delivery_title

    entry = {"url": f"https://github.com/{REPO}/issues/1", "order": order, "guid": guid, "event": "issues",
             "repository": REPO, "reason": "all attempts failed", "attempts": 3, "last": "answered 500"}
    return {"title": delivery_title(entry), "detail": delivery_detail(entry), **entry}


def alarmed(w: World) -> None:
    """A failing run on the default branch: the alarm is open, with 🛠 Start fix."""
    w.deliver("workflow_run", run("failure"))


# -- releases ---------------------------------------------------------------------------------------------

BRANCH = "release-please--branches--master"
HEAD = "a" * 40
NEWER = "b" * 40


def pull(action: str, *, head: str = HEAD, updated_at: str = "2026-12-01T10:00:00Z", **changes: Any) -> dict[str, Any]:
    """A pull_request event of the example payload, made a release pull request (#2)."""
    fixture = action if action in ("opened", "closed", "synchronize", "reopened", "converted_to_draft", "ready_for_review") else "opened"
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


def merged(**changes: Any) -> dict[str, Any]:
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


def suite_passed(sha: str = HEAD, conclusion: str = "success") -> dict[str, Any]:
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


def pull_review_approved(**changes: Any) -> dict[str, Any]:
    """A maintainer's approval of the release pull request (#2)."""
    return payload("pull_request_review", "submitted", **{
        "pull_request.head.ref": BRANCH, "pull_request.head.sha": HEAD, "pull_request.number": 2,
        "review.state": "approved", "review.user.login": "maintainer", "review.author_association": "OWNER", **changes})


def published(tag: str = "v1.2.0", at: str = "2026-12-01T12:05:00Z") -> dict[str, Any]:
    return payload("release", "published", **{"release.tag_name": tag, "release.published_at": at,
                                              "release.html_url": f"https://github.com/{REPO}/releases/tag/{tag}"})


def live_pull(w: World, *, sha: str = HEAD, mergeable_state: str = "clean", state: str = "open") -> None:
    """The release pull request as GitHub has it."""
    w.hub.pulls[(REPO, 2)] = {"number": 2, "state": state, "head": {"sha": sha, "ref": BRANCH},
                              "base": {"ref": "master"}, "mergeable_state": mergeable_state, "merged": False}


def check_run(name: str, conclusion: str | None = "success", *, status: str = "completed", sha: str = HEAD,
              number: int = 1) -> dict[str, Any]:
    """A check run of a commit as "List check runs for a Git reference" lists it (a run still going has no
    conclusion)."""
    url = f"https://github.com/{REPO}/runs/{number}"
    return {"id": number, "node_id": f"CR_{number}", "head_sha": sha, "external_id": "", "url": f"https://api.github.com/repos/{REPO}/check-runs/{number}",
            "html_url": url, "details_url": url, "status": status, "conclusion": conclusion if status == "completed" else None,
            "started_at": "2026-12-01T10:01:00Z", "completed_at": "2026-12-01T10:04:00Z" if status == "completed" else None,
            "output": {"title": None, "summary": None, "text": None, "annotations_count": 0,
                       "annotations_url": f"https://api.github.com/repos/{REPO}/check-runs/{number}/annotations"},
            "name": name, "check_suite": {"id": 5}, "app": None, "pull_requests": []}


def unstable(w: World, *runs: dict[str, Any], sha: str = HEAD) -> None:
    """The release pull request as GitHub has it when a check that is not required failed or is pending
    (`mergeable_state` unstable), and its head's check runs."""
    live_pull(w, sha=sha, mergeable_state="unstable")
    w.hub.check_runs[(REPO, sha)] = list(runs)


def pushed_unseen(w: World) -> None:
    """A new head pushed whose synchronize has not reached the pager."""
    live_pull(w, sha=NEWER)
    w.hub.pulls[(REPO, 2)]["updated_at"] = "2026-12-01T11:00:00Z"


def ready(w: World) -> None:
    """A release pull request shown and offered for merge."""
    live_pull(w)
    w.deliver("pull_request", pull("opened"))
    w.deliver("check_suite", suite_passed())


# -- presses ---------------------------------------------------------------------------------------------


def pressing(label: str) -> tuple[Callable[[World], int], Callable[[World, int], int]]:
    """A press as `Scenario.act`, and its `again`: Telegram retries a 500, the person presses anew."""

    def act(w: World) -> int:
        message_id = max(w.chat.messages)
        w.last_press = (w.chat.button_data(message_id, label), message_id)
        w.last_update = w.press_update(w.last_press[0], message_id=message_id)
        status, body = w.update(w.last_update)
        w.last_status = status
        return 500 if str(body.get("outcome", "")).startswith("failed") else status

    def again(w: World, _status: int) -> int:
        if w.last_status == 500:
            return w.update(w.last_update)[0]  # Telegram retries the same update
        data, message_id = w.last_press
        status, body = w.update(w.press_update(data, message_id=message_id))  # pressed again
        assert not str(body["outcome"]).startswith("failed")
        return status

    return act, again
