"""GitHub's example webhook payloads, and variants of them for a case.

The examples are octokit/webhooks' `payload-examples/api.github.com` (MIT), carried in the repository
at tests/fixtures/github-webhooks (its README names the commit). A case loads one and changes the
fields it needs, by dotted path:

    payload("workflow_run", "completed", **{"workflow_run.conclusion": "failure"})

The builders below (`workflow_run`, `pull_request`, ...) do the same for the demo and the
simulator, in a repository of their own.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

from pager.values import iso

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "github-webhooks"
INSTALLATION = 1


def fixture_files() -> list[Path]:
    """Every example payload: one file per event and action."""
    return sorted(FIXTURES.glob("*/*.json"))


@functools.cache
def _text(event: str, name: str) -> str:
    return (FIXTURES / event / name).read_text()


def example(event: str, action: str | None = None, variant: str = "") -> dict[str, Any]:
    """GitHub's example payload for an event and action (a fresh copy each call)."""
    name = (f"{action}.{variant}" if variant else action) if action else "payload"
    return json.loads(_text(event, f"{name}.payload.json"))


def set_path(data: dict[str, Any], path: str, value: Any) -> None:
    """Set a nested field by dotted path, making the objects on the way."""
    *parents, last = path.split(".")
    current = data
    for name in parents:
        current = current.setdefault(name, {})
    current[last] = value


def payload(event: str, action: str | None = None, /, *, variant: str = "", repository: dict[str, Any] | None = None,
            **changes: Any) -> dict[str, Any]:
    """GitHub's example payload for an event and action, in one repository and installation, changed.

    The repository is the examples' own (Codertocat/Hello-World) unless one is given; `changes` set
    nested fields by dotted path, e.g. `**{"issue.author_association": "NONE"}`."""
    data = example(event, action, variant)
    data["repository"] = copy.deepcopy(repository) if repository is not None else example("issues", "opened")["repository"]
    data["installation"] = {"id": INSTALLATION}
    for path, value in changes.items():
        set_path(data, path, value)
    return data


def repository(full_name: str, repo_id: int, default_branch: str = "main") -> dict[str, Any]:
    """The examples' repository object, renamed."""
    owner, name = full_name.split("/")
    repo = example("issues", "opened")["repository"]
    repo.update(id=repo_id, node_id=f"R_{repo_id}", name=name, full_name=full_name, private=False,
                html_url=f"https://github.com/{full_name}", url=f"https://api.github.com/repos/{full_name}",
                default_branch=default_branch)
    repo["owner"] = dict(repo.get("owner") or {}, login=owner, id=1000 + repo_id, type="Organization",
                         html_url=f"https://github.com/{owner}")
    return repo


def user(login: str, *, bot: bool = False) -> dict[str, Any]:
    """The examples' user object, renamed (a bot's login ends in [bot])."""
    person = example("issues", "opened")["sender"]
    person.update(login=login, id=abs(hash(login)) % 10**8, type="Bot" if bot else "User",
                  html_url=f"https://github.com/{login.removesuffix('[bot]')}")
    return person


# -- builders for the demo and the simulator ------------------------------------------------------------


def discussion(action: str, repo: dict[str, Any], number: int, title: str, body: str, author: str, *,
               association: str = "NONE", at: float) -> dict[str, Any]:
    who = user(author)
    return payload("discussion", "created", repository=repo, action=action, sender=who, **{
        "discussion.number": number, "discussion.title": title, "discussion.body": body, "discussion.user": who,
        "discussion.author_association": association, "discussion.created_at": iso(at), "discussion.updated_at": iso(at),
        "discussion.html_url": f"{repo['html_url']}/discussions/{number}"})


def issue_comment(repo: dict[str, Any], number: int, comment_id: int, body: str, author: str, *,
                  association: str = "NONE", at: float, title: str = "An issue") -> dict[str, Any]:
    who = user(author)
    return payload("issue_comment", "created", repository=repo, sender=who, **{
        "issue.number": number, "issue.title": title, "issue.html_url": f"{repo['html_url']}/issues/{number}",
        "comment.id": comment_id, "comment.body": body, "comment.user": who, "comment.author_association": association,
        "comment.html_url": f"{repo['html_url']}/issues/{number}#issuecomment-{comment_id}",
        "comment.created_at": iso(at), "comment.updated_at": iso(at)})


def workflow_run(repo: dict[str, Any], *, run_id: int, workflow_id: int, name: str, conclusion: str, at: float,
                 run_number: int, run_attempt: int = 1, branch: str | None = None, head_sha: str = "a" * 40) -> dict[str, Any]:
    return payload("workflow_run", "completed", repository=repo, sender=user("maintainer"), **{
        "workflow.id": workflow_id, "workflow.name": name, "workflow.path": f".github/workflows/{name.lower()}.yml",
        "workflow_run.id": run_id, "workflow_run.name": name, "workflow_run.workflow_id": workflow_id,
        "workflow_run.head_branch": branch or repo["default_branch"], "workflow_run.head_sha": head_sha,
        "workflow_run.run_number": run_number, "workflow_run.run_attempt": run_attempt,
        "workflow_run.status": "completed", "workflow_run.conclusion": conclusion,
        "workflow_run.html_url": f"{repo['html_url']}/actions/runs/{run_id}",
        "workflow_run.head_repository": repo, "workflow_run.repository": repo,
        "workflow_run.created_at": iso(at - 300), "workflow_run.updated_at": iso(at)})


def check_suite(repo: dict[str, Any], *, suite_id: int, head_sha: str, conclusion: str, at: float,
                app: str = "github-actions", branch: str | None = None,
                pulls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return payload("check_suite", "completed", repository=repo, sender=user("maintainer"), **{
        "check_suite.id": suite_id, "check_suite.head_branch": branch or repo["default_branch"],
        "check_suite.head_sha": head_sha, "check_suite.status": "completed", "check_suite.conclusion": conclusion,
        "check_suite.app.slug": app, "check_suite.app.name": "GitHub Actions" if app == "github-actions" else app,
        "check_suite.pull_requests": pulls or [], "check_suite.updated_at": iso(at)})


def pull_request(action: str, repo: dict[str, Any], number: int, *, title: str, head_ref: str, head_sha: str,
                 author: str, at: float, association: str = "NONE", bot: bool = False, merged: bool = False,
                 merge_commit_sha: str | None = None, body: str = "") -> dict[str, Any]:
    who = user(author, bot=bot)
    closed = action == "closed"
    return payload("pull_request", "opened", repository=repo, action=action, number=number, sender=who, **{
        "pull_request.number": number, "pull_request.title": title, "pull_request.body": body,
        "pull_request.state": "closed" if closed else "open", "pull_request.user": who,
        "pull_request.author_association": association, "pull_request.html_url": f"{repo['html_url']}/pull/{number}",
        "pull_request.head.ref": head_ref, "pull_request.head.sha": head_sha, "pull_request.head.repo": repo,
        "pull_request.base.ref": repo["default_branch"], "pull_request.base.repo": repo,
        "pull_request.merged": merged, "pull_request.merge_commit_sha": merge_commit_sha,
        "pull_request.created_at": iso(at), "pull_request.updated_at": iso(at),
        "pull_request.closed_at": iso(at) if closed else None, "pull_request.merged_at": iso(at) if merged else None})


def release(repo: dict[str, Any], tag: str, *, at: float) -> dict[str, Any]:
    return payload("release", "published", repository=repo, sender=user("release-bot[bot]", bot=True), **{
        "release.tag_name": tag, "release.name": tag, "release.html_url": f"{repo['html_url']}/releases/tag/{tag}",
        "release.target_commitish": repo["default_branch"], "release.created_at": iso(at),
        "release.published_at": iso(at)})
