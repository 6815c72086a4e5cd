"""Webhook payloads for the demo and the simulator, in GitHub's shape with the fields pager reads.

The tests build their payloads from GitHub's published examples; the demo and the simulator must
run on a fresh machine without them, so these builders make the same shapes from a few arguments.
"""

from __future__ import annotations

from typing import Any

from .emulators import iso


def repository(full_name: str, repo_id: int, default_branch: str = "main") -> dict[str, Any]:
    owner, name = full_name.split("/")
    return {
        "id": repo_id,
        "node_id": f"R_{repo_id}",
        "name": name,
        "full_name": full_name,
        "private": False,
        "owner": {"login": owner, "id": 1000 + repo_id, "type": "Organization"},
        "html_url": f"https://github.com/{full_name}",
        "default_branch": default_branch,
    }


def user(login: str, *, bot: bool = False) -> dict[str, Any]:
    return {"login": login, "id": abs(hash(login)) % 10**8, "type": "Bot" if bot else "User",
            "html_url": f"https://github.com/{login.removesuffix('[bot]')}"}


def _base(action: str | None, repo: dict[str, Any], sender: dict[str, Any]) -> dict[str, Any]:
    payload: dict[str, Any] = {"repository": repo, "sender": sender, "installation": {"id": 1}}
    if action is not None:
        payload = {"action": action, **payload}
    return payload


def discussion(action: str, repo: dict[str, Any], number: int, title: str, body: str, author: str, *,
               association: str = "NONE", at: float, answered_at: float | None = None) -> dict[str, Any]:
    payload = _base(action, repo, user(author))
    payload["discussion"] = {
        "id": 9000 + number, "number": number, "title": title, "body": body,
        "html_url": f"{repo['html_url']}/discussions/{number}",
        "user": user(author), "author_association": association, "state": "open",
        "created_at": iso(at), "updated_at": iso(answered_at or at),
        "answer_chosen_at": iso(answered_at) if answered_at else None,
        "category": {"name": "Q&A", "is_answerable": True},
    }
    return payload


def issue(action: str, repo: dict[str, Any], number: int, title: str, body: str, author: str, *,
          association: str = "NONE", at: float, state: str = "open") -> dict[str, Any]:
    payload = _base(action, repo, user(author))
    payload["issue"] = {
        "id": 7000 + number, "number": number, "title": title, "body": body, "state": state,
        "html_url": f"{repo['html_url']}/issues/{number}", "user": user(author),
        "author_association": association, "created_at": iso(at), "updated_at": iso(at),
    }
    return payload


def issue_comment(repo: dict[str, Any], number: int, comment_id: int, body: str, author: str, *,
                  association: str = "NONE", at: float, title: str = "An issue") -> dict[str, Any]:
    payload = issue("created", repo, number, title, "", "someone", association="OWNER", at=at - 3600)
    payload["sender"] = user(author)
    payload["comment"] = {
        "id": comment_id, "body": body, "user": user(author), "author_association": association,
        "html_url": f"{repo['html_url']}/issues/{number}#issuecomment-{comment_id}",
        "created_at": iso(at), "updated_at": iso(at),
    }
    return payload


def workflow_run(repo: dict[str, Any], *, run_id: int, workflow_id: int, name: str, conclusion: str,
                 at: float, run_number: int, run_attempt: int = 1, branch: str | None = None,
                 head_sha: str = "a" * 40) -> dict[str, Any]:
    payload = _base("completed", repo, user("maintainer"))
    payload["workflow"] = {"id": workflow_id, "name": name, "path": f".github/workflows/{name.lower()}.yml"}
    payload["workflow_run"] = {
        "id": run_id, "name": name, "workflow_id": workflow_id, "head_branch": branch or repo["default_branch"],
        "head_sha": head_sha, "run_number": run_number, "run_attempt": run_attempt, "event": "push",
        "status": "completed", "conclusion": conclusion,
        "html_url": f"{repo['html_url']}/actions/runs/{run_id}",
        "created_at": iso(at - 300), "run_started_at": iso(at - 240), "updated_at": iso(at),
    }
    return payload


def check_suite(repo: dict[str, Any], *, suite_id: int, head_sha: str, conclusion: str, at: float,
                app: str = "github-actions", branch: str | None = None,
                pulls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    payload = _base("completed", repo, user("maintainer"))
    payload["check_suite"] = {
        "id": suite_id, "head_branch": branch or repo["default_branch"], "head_sha": head_sha,
        "status": "completed", "conclusion": conclusion,
        "app": {"id": 15368 if app == "github-actions" else 99, "slug": app, "name": app},
        "pull_requests": pulls or [], "created_at": iso(at - 120), "updated_at": iso(at),
        "url": f"https://api.github.com/repos/{repo['full_name']}/check-suites/{suite_id}",
    }
    return payload


def check_run(repo: dict[str, Any], *, run_id: int, head_sha: str, conclusion: str, at: float) -> dict[str, Any]:
    payload = _base("completed", repo, user("maintainer"))
    payload["check_run"] = {"id": run_id, "name": "build", "head_sha": head_sha, "status": "completed",
                            "conclusion": conclusion, "started_at": iso(at - 60), "completed_at": iso(at),
                            "check_suite": {"id": run_id // 10, "head_branch": repo["default_branch"]}}
    return payload


def pull_request(action: str, repo: dict[str, Any], number: int, *, title: str, head_ref: str, head_sha: str,
                 author: str, at: float, association: str = "NONE", bot: bool = False, merged: bool = False,
                 merge_commit_sha: str | None = None, body: str = "") -> dict[str, Any]:
    sender = user(author, bot=bot)
    payload = _base(action, repo, sender)
    payload["number"] = number
    payload["pull_request"] = {
        "id": 5000 + number, "number": number, "title": title, "body": body,
        "state": "closed" if action == "closed" else "open",
        "html_url": f"{repo['html_url']}/pull/{number}", "user": sender, "author_association": association,
        "head": {"ref": head_ref, "sha": head_sha, "repo": {"id": repo["id"], "full_name": repo["full_name"]}},
        "base": {"ref": repo["default_branch"], "sha": "b" * 40, "repo": {"id": repo["id"], "full_name": repo["full_name"]}},
        "merged": merged, "merge_commit_sha": merge_commit_sha, "draft": False,
        "created_at": iso(at), "updated_at": iso(at),
        "closed_at": iso(at) if action == "closed" else None, "merged_at": iso(at) if merged else None,
    }
    return payload


def release(repo: dict[str, Any], tag: str, *, at: float) -> dict[str, Any]:
    payload = _base("published", repo, user("release-bot[bot]", bot=True))
    payload["release"] = {"id": 3000, "tag_name": tag, "name": tag, "draft": False, "prerelease": False,
                          "html_url": f"{repo['html_url']}/releases/tag/{tag}", "target_commitish": repo["default_branch"],
                          "created_at": iso(at), "published_at": iso(at)}
    return payload
