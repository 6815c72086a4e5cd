"""Release (docs/signals.md): a release pull request's one message, 🔀 Merge once ready, the merge recorded once.

A release pull request has a head branch starting with one of `RELEASE_BRANCH_PREFIXES` and the
default branch as its base.

    pull_request opened, reopened, synchronize, edited   one message "📦 owner/repo: title (#n)"; a new
                                                         head takes Merge away
    check_suite.completed, success, on a release branch  gather: read the pull request as GitHub has it
                                                         (mergeable null or mergeable_state unknown: read
                                                         again, then 500), and, when GitHub calls it
                                                         unstable, its head's check runs; decide: open,
                                                         the suite's head, a state GitHub's own button
                                                         merges (`MERGES`) -> offer 🔀 Merge, naming a
                                                         check that is not required and did not pass; any
                                                         other state -> say why, in GitHub's words (a head
                                                         not recorded yet, whose pull_request event has
                                                         not come, is adopted from GitHub's pull request)
    🔀 Merge pressed (`merge_press`)                      merge with the recorded head sha; a refusal
                                                         answers with GitHub's reason, takes Merge away;
                                                         a release that changes .github/workflows/,
                                                         refused for the Workflows permission, is said
                                                         in words, with the app's permissions page
    pull_request_review.submitted                        gather the pull request as GitHub has it; an
                                                         approval may have made it clean: offer 🔀 Merge;
                                                         changes asked for may have blocked it: take it away
    pull_request converted_to_draft, ready_for_review    the same: a draft is never offered 🔀 Merge
    pull_request.closed                                  merged: record (pull request, merge commit,
                                                         time) and edit once; else: closed
    release.published                                    add the tag to the message of the release pull
                                                         request of the tag's version (its own, even while
                                                         its merge has not reached pager yet)

Which states merge (GitHub's `mergeable_state`, API-NOTES): 🔀 Merge is offered where GitHub's own Merge
button merges, `clean`, `has_hooks` and `unstable` (a check that is not required failed or is pending: the
message names each such check run, as the head's check runs say; `unstable` means every required one
passed), and for `behind`: GitHub merges a head behind its base unless the base must be up to date, which
pager cannot read (branch protection needs the Administration permission, which pager does not ask for), so
GitHub's answer decides: its 405 is said ("behind main, which must be up to date") and takes Merge away for
that head, as any refusal does; updating the branch is a new head. `blocked`, `dirty` and `draft` are never
offered, and the message says why in GitHub's words (a release offered Merge that GitHub calls one of them
when read again loses it); `unknown` (GitHub still computing) is read again, as `mergeable` null is.

One record per pull request, `release#<repository id>#<number>` (the id survives a rename or a transfer):

    order            updated_at of the newest pull_request payload applied (with its head: "head sha
                     with time"); an older payload changes nothing, so a stale synchronize never
                     takes Merge from a release that is ready
    head, title, url, number, installation_id
    state            open, closed or merged; ready: Merge is offered (offered_at: when; a read of GitHub
                     made before then changes nothing); refusal: GitHub's last reason
                     (refused_head: its head; refusal_cause "workflows" and refusal_page: the app lacks
                     the Workflows permission, and where to add it; "behind": GitHub called the head
                     behind and refused it, so its base must be up to date)
    mergeable_state  GitHub's word for the recorded head, as last read (taken away with the head); checks:
                     the check runs of an unstable head that did not pass [{name, state, url}], state
                     GitHub's conclusion or, while it runs, its status; base: the branch it merges into
    merged           {commit, at}, once; tags: [{tag, url}] added by release.published (shown once merged)
    versions         the versions its title and body name ("release 1.2.0", "## pkg@1.2.3")
    message_id, chat, text, buttons   what the chat shows (the message and its chat)
    repository       its name as GitHub called it last (what a 🔀 press merges, what the message shows)

and the indexes: `release-waiting` with an item `<repository id>#<n>` per release pull request that is open
and not offered Merge yet ({waiting, checked}), which the sweep reads again every run (`look_again`, then
`settle_looked` once the run has committed: a release opened with GITHUB_TOKEN, or in a repository without CI, gets no check suite at all);
`release-version#<repository id>#<version>` = {number, order}, the release pull request of a
version, which release.published looks up by its tag; `release-tag#<repository id>#<version>` = {tag, url},
a tag published before any release pull request of its version was known, taken up when one is;
`release-latest#<repository id>` = {number, at}, the release pull request merged last, which a tag without a
version tags. The check suite needs no index from head to pull request: a suite of a branch of the
repository itself lists its pull requests (`check_suite.pull_requests`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from .. import attention_store
from ..attention import LOUD, Moment, Volume, period_of
from ..engine.effects import WORKFLOWS, MergePull, MergeResult, Note, Posted, Step
from ..engine.settle import settle
from ..errors import GitHubRefused, GitHubUnavailable, PagerError, Partial
from ..html import escape, link
from ..observe import logger
from ..routing import Delivery, Repository
from ..services import Services
from ..values import field, integer, iso, newest, order_of_time, text
from ..words import WORKFLOWS_FIX, merge_answer, merge_refused, with_title
from .common import default_branch, is_release_pull, repo_url
from .messages import RETIRED, Shown, buttons_json, retired_after, show, tidy

MERGE_PREFIX = "merge:"
TTL_SECONDS = 180 * 24 * 3600
PASSING = frozenset({"success", "neutral", "skipped"})
# The mergeable_state values 🔀 Merge is offered for (see the module's docstring): what GitHub's own button merges,
# and behind, which GitHub merges unless the base must be up to date (its refusal says so).
MERGES = frozenset({"clean", "has_hooks", "unstable", "behind"})
BEHIND = "behind"  # a refusal's cause: GitHub called the head behind and refused its merge
# Why a release is not offered 🔀 Merge, in GitHub's words for its mergeable_state ({base}: the branch it merges into).
NOT_MERGEABLE = {
    "blocked": "⏳ GitHub: blocked — a required review or check is missing",
    "dirty": "⚠️ GitHub: conflicts with {base}, which must be resolved",
    "draft": "⏳ GitHub: a draft — mark it ready for review to merge it",
}
BEHIND_WORDS = "behind {base}, which must be up to date"  # a behind head whose merge GitHub refused
BEHIND_REFUSED = f"⏳ GitHub: {BEHIND_WORDS}"
# What a check run that did not pass came to, as GitHub's checks page says it (else: still running, "pending").
CHECK_WORDS = {"failure": "failed", "timed_out": "timed out", "cancelled": "was cancelled", "action_required": "needs action",
               "startup_failure": "failed to start", "stale": "went stale"}
CHECKS_NAMED = 3  # check runs that did not pass named in the message (then counted)
MERGED = "🔀 merged"  # the 🔀 press's answer when GitHub merged
ALREADY_MERGED = "✅ already merged"  # when it was merged before the press (GitHub says so, or the record)


def release_key(repository_id: int, number: int) -> str:
    return f"release#{int(repository_id)}#{number}"


def latest_key(repository_id: int) -> str:
    return f"release-latest#{int(repository_id)}"


def version_key(repository_id: int, version: str) -> str:
    return f"release-version#{int(repository_id)}#{version}"


def tag_key(repository_id: int, version: str) -> str:
    return f"release-tag#{int(repository_id)}#{version}"


VERSION = re.compile(r"(?<![0-9A-Za-z.])v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?)(?!\.?\d)")
MAX_VERSIONS = 12


def versions_of(*texts: str) -> tuple[str, ...]:
    """The versions some text names, in order, without a leading v: "release 1.2.0", "app-v2.4.0",
    "## pkg@1.2.3" (release-please's and changesets' titles, bodies and tags)."""
    found: list[str] = []
    for value in texts:
        for match in VERSION.finditer(value[:20_000]):
            version = match.group(1).rstrip(".-")
            if version not in found:
                found.append(version)
    return tuple(found[:MAX_VERSIONS])


@dataclass(frozen=True)
class ReleasePull:
    number: int
    title: str
    url: str
    head: str
    order: str
    state: str
    merged: bool
    merge_commit: str
    merged_at: str
    installation_id: int | None
    versions: tuple[str, ...] = ()


def read_pull(payload: Mapping[str, Any]) -> ReleasePull:
    """The release pull request of a pull_request event."""
    return pull_of(payload.get("pull_request"), field(payload, "installation", "id"))


def pull_of(pull: Any, installation: Any) -> ReleasePull:
    """A pull request, as an event carries it or GitHub's REST API answers it."""
    return ReleasePull(
        number=integer(field(pull, "number")),
        title=text(field(pull, "title")),
        url=text(field(pull, "html_url")),
        head=text(field(pull, "head", "sha")),
        order=order_of_time(field(pull, "updated_at")),
        state=text(field(pull, "state")),
        merged=field(pull, "merged") is True,
        merge_commit=text(field(pull, "merge_commit_sha")),
        merged_at=order_of_time(field(pull, "merged_at")),
        installation_id=installation if isinstance(installation, int) else None,
        versions=versions_of(text(field(pull, "title")), text(field(pull, "body"))),
    )


# -- the message --------------------------------------------------------------------------------------


def offers_merge(data: Mapping[str, Any]) -> bool:
    return data.get("state") == "open" and bool(data.get("ready"))


NEWS = {  # what happened to a release pull request still waiting, as its message's first line says it
    "": ("opened", "waiting "),
    "pushed": ("updated with new commits", "new commits: waiting again "),
    "reopened": ("reopened", "waiting "),
    "unready": ("no longer ready to merge", "waiting again "),  # 🔀 Merge taken away: GitHub would not merge it now
}


def render(repository: str, data: Mapping[str, Any], repository_id: int) -> tuple[str, list | None]:
    """The message: its first line says what the release pull request's state is, and where (what a phone's
    notification shows); the second what it waits for, or what came of it."""
    number = data.get("number", 0)
    ref = link(str(data.get("url") or f"{repo_url(repository)}/pull/{number}"), f"{repository}#{number}")
    title = str(data.get("title", ""))

    def head(before: str, calls: bool = False) -> list[str]:
        """The first line; one that may call (ready to merge) within FIRST_LINE, the title whole below if cut there."""
        line, cut = with_title(before, title) if calls else (before + escape(title), False)
        return [line] + ([f"<b>{escape(title)}</b>"] if cut else [])

    state = data.get("state")
    if state == "merged":
        lines = head(f"✅ {ref} merged: ") + _merged(repository, data)
    elif state == "closed":
        lines = head(f"✖️ {ref} closed without merging: ")
    elif data.get("ready"):
        lines = head(f"🔀 {ref} is ready to merge: ", calls=True) + [_mergeable(data)]
    elif data.get("refusal"):
        behind = [BEHIND_REFUSED.format(base=_base(data))] if data.get("refusal_cause") == BEHIND else []
        lines = head(f"📦 {ref} release pull request: ") + behind + [_refused(data)]
    else:
        happened, waits = NEWS.get(str(data.get("news") or ""), NEWS[""])
        why = NOT_MERGEABLE.get(str(data.get("mergeable_state") or ""), "").format(base=_base(data))
        lines = head(f"📦 {ref} release pull request {happened}: ") + [
            why or f"⏳ {waits}for its checks and for GitHub to call it mergeable"]
    buttons = [[("🔀 Merge", f"{MERGE_PREFIX}{int(repository_id)}:{number}")]] if offers_merge(data) else None
    return "\n".join(lines), buttons


def _merged(repository: str, data: Mapping[str, Any]) -> list[str]:
    """The line under a merged release's first line: its merge commit and the tags made of it, linked (none
    when neither is known)."""
    commit = str(field(data, "merged", "commit") or "")
    done = [f"commit {link(f'{repo_url(repository)}/commit/{commit}', commit[:7])}"] if commit else []
    tags = data.get("tags") or []
    if tags:
        done.append("🏷 " + ", ".join(link(t["url"], t["tag"]) if t.get("url") else escape(t["tag"]) for t in tags))
    return [" · ".join(done)] if done else []


def _mergeable(data: Mapping[str, Any]) -> str:
    """The line of a release offered 🔀 Merge: what GitHub says of it, and for an unstable head the checks that are
    not required and did not pass, each linked to its run ("⚠️ lint failed, not required")."""
    state = data.get("mergeable_state")
    if state == "unstable":
        checks = [c for c in data.get("checks") or [] if isinstance(c, Mapping) and c.get("name")]
        if not checks:
            return "⚠️ GitHub: unstable — a check that is not required failed or is pending"
        said = [_check(c) for c in checks[:CHECKS_NAMED]]
        more = len(checks) - len(said)
        if more:
            named = f"{', '.join(said)} and {more} more"
        else:
            named = said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"
        return f"⚠️ {named}, not required"
    if state == BEHIND:
        base = _base(data)
        return f"⚠️ GitHub: behind {base} — it merges unless {base} must be up to date"
    return "🟢 its checks passed and GitHub calls it mergeable"


def _base(data: Mapping[str, Any]) -> str:
    """The branch the release merges into, as the message names it (HTML)."""
    return escape(str(data.get("base") or "its base"))


def _check(check: Mapping[str, Any]) -> str:
    """A check run that did not pass, linked to its page when GitHub gave one: "lint failed", "e2e pending"."""
    name = str(check["name"])
    url = str(check.get("url") or "")
    shown = link(url, name) if url else escape(name)
    return f"{shown} {CHECK_WORDS.get(str(check.get('state') or ''), 'pending')}"


def _refused(data: Mapping[str, Any]) -> str:
    """The line of a merge GitHub refused: why; for a release that changes workflows, what to do, with the app's
    permissions page."""
    workflows = data.get("refusal_cause") == WORKFLOWS
    line = f"⚠️ {escape(merge_refused(str(data['refusal']), workflows=workflows))}"
    if not workflows:
        return line
    page = str(data.get("refusal_page") or "")
    where = link(page, "the app's permissions page") if page else "the app's permissions page"
    return f"{line}. {escape(WORKFLOWS_FIX).format(page=where)}"


REFUSAL = ("refusal", "refused_head", "refusal_cause", "refusal_page")  # a merge GitHub refused, for its head
GATE = ("mergeable_state", "checks")  # what GitHub said of the recorded head's mergeability


def without_refusal(data: dict[str, Any]) -> dict[str, Any]:
    """The record without the merge GitHub refused (a new head, an offer of 🔀 again, or the merge itself)."""
    return {k: v for k, v in data.items() if k not in REFUSAL}


def moment_of(data: Mapping[str, Any], new: Mapping[str, Any]) -> Moment | None:
    """The moment of a change that sends or reposts the message (None: an edit at most): 🔀 Merge offered
    where it was not, or a release pull request shown the first time."""
    if offers_merge(new) and not offers_merge(data):
        return Moment.RELEASE_READY
    if data.get("message_id") is None:
        return Moment.RELEASE_OPENED
    return None


def converge(repo: Repository, data: dict[str, Any], new: dict[str, Any], done: str, idle: str,
             volume: Volume = LOUD, now: float = 0.0) -> Step:
    """The step that records `new` and makes the chat show it: send, repost (🔀 Merge offered: a moment that
    buzzes), edit, or only save. The record keeps the repository's name as GitHub called it last (a 🔀
    press finds it there), and the sound of the message that last buzzed or would have."""
    noting = _quiet_note(repo, data, now)
    if noting is not None:
        return noting
    if new.get("repository") != repo.name:
        new = {**new, "repository": repo.name}
    body, buttons = render(repo.name, new, repo.id)
    shown = _shown(data)
    if shown is None and new.get("state") != "open":
        return _saved(data, new, done, idle)  # never shown, over already
    moment = moment_of(data, new)
    sound = volume.sound(moment) if moment is not None else None
    effect, reposted = show(shown, body, buttons, sound)
    if effect is None:
        return _saved(data, new, done, idle)
    retired = retired_after(data, shown, reposted)
    heard = {"sound": sound.to_data(), "shown_at": now, "noted": False} if sound is not None else {}

    def shown_now(posted: Posted) -> dict[str, Any]:
        kept = {k: v for k, v in new.items() if k != RETIRED}
        return {**kept, **posted.fields(), "text": body, "buttons": buttons_json(buttons), **heard,
                **({RETIRED: retired} if retired else {})}

    return Step(done, effect=effect, then=shown_now)


def _quiet_note(repo: Repository, data: dict[str, Any], now: float) -> Step | None:
    """A release offered 🔀 Merge in quiet hours or while the phone rests (its sound kept for their summary or
    the rest's call), kept for it once; None for any other."""
    period = period_of(data.get("sound") or {})
    if period is None or not offers_merge(data) or data.get("noted"):
        return None
    number = int(data.get("number") or 0)
    key = release_key(repo.id, number)
    note = Note("release", key, f"{repo.name}#{number}", str(data.get("url") or ""), period, repo.name,
                at=float(data.get("shown_at") or now), message=key)
    return Step("kept for the summary", effect=note, then=lambda _: {**data, "noted": True})


def _shown(data: Mapping[str, Any]) -> Shown | None:
    """The message the record says the chat shows, if any."""
    message_id = data.get("message_id")
    if not isinstance(message_id, int):
        return None
    return Shown(int(message_id), data.get("chat"), str(data.get("text", "")), data.get("buttons"))


def _saved(data: dict[str, Any], new: dict[str, Any], done: str, idle: str) -> Step:
    """Nothing for the chat: `new` saved when it changed the record (`done`), else nothing at all (`idle`)."""
    return Step(done if new != data else idle, data=new if new != data else None)


# -- decisions ----------------------------------------------------------------------------------------


def decide_pull(repo: Repository, p: ReleasePull, tags: Iterable[Mapping[str, str]] = (), volume: Volume = LOUD):
    """opened, reopened, synchronize, edited: show it; a new head takes Merge away; older changes nothing.
    `tags` were published for its versions before it was known, and wait for its merge."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("order") and p.order < data["order"]:
            return Step("stale: older than the recorded head")
        if data.get("state") == "merged":  # (merged by 🔀 before this came: a newer title is still shown)
            return converge(repo, data, with_tags(retitled(data, p), tags), "release updated", "already merged", volume, now)
        done = "release shown" if data.get("message_id") is None else "release updated"
        return converge(repo, data, with_tags(applied(data, p), tags), done, "already shown", volume, now)

    return decide


def retitled(data: dict[str, Any], p: ReleasePull) -> dict[str, Any]:
    """A merged release's record with the title and link of an event newer than it (a merge 🔀 recorded
    first keeps the record's order, and what GitHub said after is still its latest word); else as it is."""
    title, url = p.title or data.get("title", ""), p.url or data.get("url", "")
    if not p.order or p.order <= str(data.get("order") or "") or (title, url) == (data.get("title"), data.get("url")):
        return data  # (nothing new to show: the record stays as it is, written once)
    return {**data, "title": title, "url": url, "order": p.order}


def with_tags(data: dict[str, Any], tags: Iterable[Mapping[str, str]]) -> dict[str, Any]:
    """The record with tags added that it does not hold yet."""
    held = list(data.get("tags") or [])
    added = [{"tag": t["tag"], "url": t.get("url", "")} for t in tags if t.get("tag") and all(h.get("tag") != t["tag"] for h in held)]
    return {**data, "tags": held + added} if added else data


def applied(data: dict[str, Any], p: ReleasePull) -> dict[str, Any]:
    """The record once a pull request's state is applied to it; a new head takes Merge away."""
    new = {
        **data,
        "number": p.number,
        "title": p.title,
        "url": p.url,
        "order": p.order,
        "installation_id": p.installation_id,
        "state": "open" if p.state == "open" else "closed",
    }
    if p.versions:
        new["versions"] = list(p.versions)
    if data.get("state") == "closed" and new["state"] == "open":
        new["news"] = "reopened"
    if data.get("head") != p.head:
        if data.get("head"):
            new["news"] = "pushed"  # a new head: what the message says happened, until it is ready again
        new.update(head=p.head, ready=False)
        new = {k: v for k, v in without_refusal(new).items() if k not in GATE}  # what GitHub said of the old head
    return new


def decide_ready(repo: Repository, sha: str | None, live: Mapping[str, Any], live_is_release: bool,
                 installation_id: int | None, volume: Volume = LOUD, *, review: bool = False,
                 checks: Iterable[Mapping[str, str]] = (), read_at: float | None = None):
    """`live` is the pull request as GitHub has it now, read after a check suite passed on `sha` (or,
    with `sha` None, after a review or the sweep's look), and `checks` its head's check runs that did not
    pass (read when GitHub calls it unstable): offer Merge if it is open, still at that head and in a state
    GitHub merges (`MERGES`); in any other state, say why. A head whose merge GitHub refused is not offered
    again (GitHub may still call it clean: a merge method the repository forbids, a workflow file the app
    may not change, a base that must be up to date) but after a review (`review`), which may be what it
    lacked, or a new head. A release offered Merge keeps it while GitHub would merge it, and shows what GitHub
    says of it now; GitHub calling it blocked, dirty or a draft takes Merge away and says why (the sweep then
    reads it again, as any release waiting for Merge); unknown (still computing) changes nothing, and so does a
    read made before Merge was offered (`read_at`, when GitHub was read: another delivery offered it since).

    A head the record does not have yet is adopted from `live` when it is the suite's: its
    pull_request event failed or comes late (and may never come, if a newer one passed meanwhile)."""
    p = pull_of(live, installation_id)
    sha = sha or p.head
    state = text(field(live, "mergeable_state")) or "unknown"
    said = said_of(live, state, checks)

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("state") not in (None, "open"):
            return Step("not open")
        new = data
        if data.get("head") != sha:
            if not _adopts(data, p, sha, live_is_release):
                return Step("not the recorded head")
            new = applied(data, p)
        current = p.state == "open" and p.head == sha
        if new.get("ready"):
            fresh = current and (read_at is None or read_at >= float(new.get("offered_at") or 0))
            return _offered(repo, data, new, state if fresh else "", said, volume, now)
        if new.get("refused_head") == sha and not review:
            return Step("not offered again: GitHub refused this head's merge")
        if _closed_on_github(data, p):
            # Closed or merged as GitHub has it (its closed event failed, or comes late): so recorded,
            # and no longer waiting for Merge; the closed event, if it comes, records the merge.
            return converge(repo, data, applied(data, p), "closed as GitHub has it", "already closed", volume, now)
        if not current:
            return Step("not ready: the pull request moved on")
        return _offer(repo, data, new, state, said, volume, now)

    return decide


def _offered(repo: Repository, data: dict[str, Any], new: dict[str, Any], state: str, said: Mapping[str, Any],
             volume: Volume, now: float) -> Step:
    """A release offered Merge, read again: `state` what GitHub says of its head now ("": a read of another head,
    or made before Merge was offered, which changes nothing). It keeps Merge where GitHub merges, with what
    GitHub says now; blocked, dirty or a draft take it away; unknown (still computing) changes nothing."""
    if state and state not in MERGES and state != "unknown":
        taken = with_said({**new, "ready": False, "news": "unready"}, said)
        return converge(repo, data, taken, f"Merge taken away: {state}", f"not ready: {state}", volume, now)
    shown = with_said(new, said) if state in MERGES else new
    return converge(repo, data, shown, "release updated", "Merge already offered", volume, now)


def _adopts(data: Mapping[str, Any], p: ReleasePull, sha: str, live_is_release: bool) -> bool:
    """Whether a head the record does not have (`sha`) is taken from the pull request as GitHub has it (`p`):
    when it is that pull request's head, still open, and a release's (the record knows it, or `live` says so)."""
    return p.head == sha and p.state == "open" and (bool(data) or live_is_release)


def _closed_on_github(data: Mapping[str, Any], p: ReleasePull) -> bool:
    """Whether GitHub has the pull request closed (or merged) at an order no older than the record's."""
    return p.state != "open" and bool(p.order) and p.order >= data.get("order", "")


def _offer(repo: Repository, data: dict[str, Any], new: dict[str, Any], state: str, said: Mapping[str, Any],
           volume: Volume, now: float) -> Step:
    """An open release at the head GitHub has, not offered Merge yet: offered when GitHub's mergeable `state`
    is one it merges (`MERGES`), else the message says why."""
    if state == "unknown":  # GitHub is still computing it: the sweep reads it again
        return converge(repo, data, new, "not ready: unknown", "not ready: unknown", volume, now)
    if state not in MERGES:
        return converge(repo, data, with_said(new, said), f"not ready: {state}", f"not ready: {state}", volume, now)
    ready = without_refusal({**with_said(new, said), "ready": True, "offered_at": now})
    return converge(repo, data, ready, "Merge offered", "Merge already offered", volume, now)


def said_of(live: Mapping[str, Any], state: str, checks: Iterable[Mapping[str, str]]) -> dict[str, Any]:
    """What GitHub says of a head's mergeability, as the record keeps it: its state, the branch it merges
    into, and for an unstable head the checks that did not pass."""
    said: dict[str, Any] = {"mergeable_state": state}
    base = text(field(live, "base", "ref"))
    if base:
        said["base"] = base
    if state == "unstable":
        said["checks"] = [dict(c) for c in checks]
    return said


def with_said(data: dict[str, Any], said: Mapping[str, Any]) -> dict[str, Any]:
    """The record with what GitHub says of its head now, instead of what it said before."""
    return {**{k: v for k, v in data.items() if k not in GATE}, **said}


def decide_closed(repo: Repository, p: ReleasePull, tags: Iterable[Mapping[str, str]] = (), volume: Volume = LOUD):
    """Closed: merged is recorded once (pull request, merge commit, time); otherwise closed. `tags`
    were published for its versions before it was known."""

    def decide(data: dict[str, Any], now: float) -> Step:
        data_tags = with_tags(data, tags)
        if data.get("state") == "merged":  # (by 🔀: this event's title, newer than the record's, is shown)
            return converge(repo, data, retitled(data_tags, p), "release updated", "merge already recorded", volume, now)
        # Never shown yet (its opened comes late, or failed): recorded all the same, so that the late
        # opened is stale and shows nothing.
        base = {**data_tags, "number": p.number, "title": p.title or data.get("title", ""), "url": p.url or data.get("url", "")}
        if p.versions:
            base["versions"] = list(p.versions)
        if p.merged:
            new = {
                **base,
                "state": "merged",
                "ready": False,
                "head": p.head or data.get("head", ""),
                "order": newest(data.get("order"), p.order),
                "merged": {"commit": p.merge_commit, "at": p.merged_at},
            }
            new = without_refusal(new)
            return converge(repo, data, new, "merge recorded", "merge already recorded", volume, now)
        if data.get("order") and p.order < data["order"]:
            return Step("stale: older than the recorded head")
        new = {**base, "state": "closed", "ready": False, "order": p.order}
        return converge(repo, data, new, "closed recorded", "already closed", volume, now)

    return decide


def decide_latest(number: int, merged_at: str):
    """The repository's release pull request merged last, which release.published tags."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if (data.get("at", ""), data.get("number", 0)) >= (merged_at, number):
            return Step("")
        return Step("", data={"number": number, "at": merged_at})

    return decide


def decide_tag(repo: Repository, tag: str, url: str, volume: Volume = LOUD):
    """release.published: add the tag to its release pull request's record; the message shows it once
    the merge is recorded (at once, if it is)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if not data:
            return Step("ignored: the release pull request is not known")
        new = with_tags(data, [{"tag": tag, "url": url}])
        if new is data:
            return converge(repo, data, data, "release updated", "tag already shown", volume, now)
        done = "tag added" if data.get("state") == "merged" else "tag kept until the merge is recorded"
        return converge(repo, data, new, done, "tag already shown", volume, now)

    return decide


def decide_index(number: int, order: str):
    """The release pull request of a version: the newest one that names it."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("number") == number or (data.get("order", "") > order):
            return Step("")
        return Step("", data={"number": number, "order": order})

    return decide


def decide_waiting_tag(tag: str, url: str):
    def decide(data: dict[str, Any], now: float) -> Step:
        if data.get("tag") == tag:
            return Step("tag already kept")
        return Step("tag kept until its release pull request is known", data={"tag": tag, "url": url})

    return decide


def decide_merge(repo: Repository, number: int, method: str, volume: Volume = LOUD, *, permissions_page: str = ""):
    """🔀 Merge pressed: merge the recorded head once; a refusal takes Merge away (for this head: a new head, or
    an approval, offers it again), its cause recorded when pager knows it (a release that changes workflows,
    merged by an app without the Workflows permission: the message then links `permissions_page`)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        if not data:
            return Step("this release pull request is not known")
        state = data.get("state")
        if state == "merged":
            return converge(repo, data, data, "release updated", ALREADY_MERGED, volume, now)
        if state != "open":
            return converge(repo, data, data, "release updated", "the pull request is closed", volume, now)
        if not data.get("ready"):
            return converge(repo, data, data, "release updated", "🔀 Merge is not offered now", volume, now)

        def behind(result: MergeResult) -> bool:
            """GitHub refused a head it called behind: its base must be up to date (GitHub merges it otherwise)."""
            return result.cause != WORKFLOWS and result.status == 405 and data.get("mergeable_state") == BEHIND

        def then(result: MergeResult) -> dict[str, Any]:
            if result.merged:
                merged = {**data, "state": "merged", "ready": False, "merged": {"commit": result.sha, "at": iso(now)}}
                return without_refusal(merged)
            workflows = {"refusal_cause": WORKFLOWS, "refusal_page": permissions_page} if result.cause == WORKFLOWS else {}
            cause = {"refusal_cause": BEHIND} if behind(result) else workflows
            return {**without_refusal(data), "ready": False, "refusal": result.reason, "refused_head": data["head"], **cause}

        def describe(result: MergeResult) -> str:
            if result.merged:
                return ALREADY_MERGED if result.before else MERGED
            said = merge_answer(result.reason, workflows=result.cause == WORKFLOWS)
            if behind(result):
                said = f"{said} ({BEHIND_WORDS.format(base=data.get('base') or 'its base')})"
            return said[:200]  # (answerCallbackQuery's text)

        effect = MergePull(repo.name, number, sha=data["head"], method=method, installation_id=data.get("installation_id"))
        return Step(describe, effect=effect, then=then)

    return decide


# -- the shell ----------------------------------------------------------------------------------------


WAITING_KEY = "release-waiting"
RELEASES_CHECKED = 3  # release pull requests the sweep reads again per run, the longest unchecked first


def _waiting(data: Mapping[str, Any]) -> bool:
    """Open and not offered Merge: the sweep looks again (not at a head whose merge GitHub refused)."""
    return data.get("state") == "open" and not data.get("ready") and data.get("refused_head") != data.get("head")


def ready_to_merge(services: Services, muted: Collection[int] = ()) -> dict[str, dict[str, Any]]:
    """The releases offered 🔀 Merge now, by their record's key (one query of the index), but those of a
    repository in `muted`."""
    ready: dict[str, dict[str, Any]] = {}
    for r in services.store.items(WAITING_KEY):  # item: <repository id>#<number>
        repository_id, _, number = r.item.partition("#")
        if r.data.get("ready") and repository_id.isdigit() and number.isdigit() and int(repository_id) not in muted:
            ready[release_key(int(repository_id), int(number))] = r.data
    return ready


def settle_release(services: Services, repo: Repository, number: int, decide_with: Callable[[Volume], Any],
                   *, tidy_first: bool = True, **kwargs: Any) -> Any:
    """Settle a release pull request's record with the decision `decide_with(volume)` makes (its repository's
    mute and quiet hours, read when the record is free), and keep the index of those waiting for Merge or
    ready in step. `tidy_first`: a message a repost left (its delete failed) is deleted first, whatever the
    decision (also by a stale delivery, which changes nothing else); a 🔀 press leaves that to the deliveries."""

    def gather() -> Any:
        decide = decide_with(attention_store.volume(services, repo.id, services.now()))
        return (lambda data, now: tidy(data) or decide(data, now)) if tidy_first else decide

    settled = settle(services, release_key(repo.id, number), gather=gather, ttl_seconds=TTL_SECONDS, **kwargs)
    after = settled.after
    if after:  # (written only when it changes; also after a delivery that failed in between)
        waiting = _waiting(after)
        settle(services, WAITING_KEY, decide_waiting(repo, number, after), item=f"{repo.id}#{number}",
               ttl_seconds=None if waiting or offers_merge(after) else 7 * 24 * 3600)
    return settled


def decide_waiting(repo: Repository, number: int, record: Mapping[str, Any]):
    """The index item of a release pull request: waiting for Merge (the sweep reads those again), or ready
    (the summary and /status list those)."""

    def decide(data: dict[str, Any], now: float) -> Step:
        new = {**data, "repository": repo.name, "repository_id": repo.id, "number": number, "waiting": _waiting(record),
               "ready": offers_merge(record), "installation_id": record.get("installation_id"),
               "title": str(record.get("title") or ""), "url": str(record.get("url") or "")}
        return Step("", data=new if new != data else None)

    return decide


@dataclass(frozen=True)
class LookedAgain:
    """A release waiting for Merge, as the sweep read it again: reads only, before the run commits."""

    item: str  # its index item (<repository id>#<number>)
    repo: Repository
    number: int
    installation_id: int | None = None
    live: Mapping[str, Any] | None = None  # the pull request as GitHub has it (None: retired, or not read)
    checks: tuple[dict[str, str], ...] = ()
    error: str = ""  # what GitHub answered when it did not serve the pull request
    read_at: float | None = None  # when it was read (a delivery may offer Merge before the run acts on the read)

    @property
    def retired(self) -> bool:
        """Written before records were kept by the repository's id: retired, not read again."""
        return not self.repo.id


def look_again(services: Services, *, limit: int = RELEASES_CHECKED) -> tuple[LookedAgain, ...]:
    """The sweep's gather for releases that no event may ever make ready (opened with GITHUB_TOKEN, or in a
    repository without CI, they get no check suite): the longest unchecked of those waiting for Merge, read
    as GitHub has them. Reads only: `settle_looked` acts on them once the run has committed."""
    waiting = sorted((r for r in services.store.items(WAITING_KEY) if r.data.get("waiting")),
                     key=lambda r: float(r.data.get("checked", 0)))[:limit]
    return tuple(_look(services, record.item, record.data) for record in waiting)


def _look(services: Services, item: str, data: Mapping[str, Any]) -> LookedAgain:
    installation = data.get("installation_id")
    looked = LookedAgain(item, Repository(integer(data.get("repository_id")), text(data.get("repository"))),
                         integer(data.get("number")), installation if isinstance(installation, int) else None)
    if looked.retired:
        return looked
    try:
        looked = replace(looked, read_at=services.now())
        live = gather_pull(services, looked.repo.name, looked.number, looked.installation_id, again_later=False)
        checks = gather_checks(services, looked.repo.name, live, looked.installation_id)
    except PagerError as exc:
        logger.warning("release not read again", extra={"repository": looked.repo.name, "number": looked.number,
                                                        "error": type(exc).__name__, "reason": str(exc)})
        return replace(looked, error=type(exc).__name__)
    return replace(looked, live=live, checks=tuple(checks))


def settle_looked(services: Services, looked: Iterable[LookedAgain], now: float) -> list[str]:
    """What the sweep read again, acted on after its commit: Merge offered where GitHub would merge, the reason
    said where not; each release marked checked at `now` (the next run reads the longest unchecked). Their
    outcomes."""
    outcomes = []
    for release in looked:
        if release.retired:
            settle(services, WAITING_KEY, decide_retired(), item=release.item, ttl_seconds=7 * 24 * 3600)
            continue
        where = f"{release.repo.name}#{release.number}: "
        try:
            if release.live is None:
                outcomes.append(where + f"not read: {release.error}")
                continue
            decide = partial(decide_ready, release.repo, None, release.live, True, release.installation_id,
                             checks=list(release.checks), read_at=release.read_at)
            outcomes.append(where + settle_release(services, release.repo, release.number, decide).outcome)
        finally:
            settle(services, WAITING_KEY, decide_checked(now), item=release.item)
    return outcomes


def decide_retired():
    def decide(data: dict[str, Any], _: float) -> Step:
        return Step("", data={**data, "waiting": False} if data.get("waiting") else None)

    return decide


def decide_checked(now: float):
    def decide(data: dict[str, Any], _: float) -> Step:
        return Step("", data={**data, "checked": now} if data else None)

    return decide


def merge_press(services: Services, repository_id: int, number: int) -> str:
    """The 🔀 Merge press: the answer to show the person (the record names the repository)."""
    repository = text(services.store.load(release_key(repository_id, number)).data.get("repository"))
    if not repository:
        return "this release is no longer known"
    repo = Repository(repository_id, repository)
    decide = partial(decide_merge, repo, number, services.settings.release_merge_method,
                     permissions_page=services.settings.permissions_page)
    try:
        settled = settle_release(services, repo, number, decide, tidy_first=False, wait=False)
    except PagerError as exc:
        # GitHub merged, and then the message, the index or the merge's own record could not be brought up to
        # date: the merge is what the person asked for (the pull request's `closed`, or a press again, which
        # finds it merged on GitHub, edits the message).
        merged = {MERGED, ALREADY_MERGED} & set(getattr(exc, "performed", ()))
        if merged or _recorded_merged(services, release_key(repository_id, number)):
            raise Partial(f"merged, then: {exc}", said=f"{MERGED} (the message catches up in a moment)") from exc
        raise
    return settled.performed[0] if settled.performed else settled.idle


def _recorded_merged(services: Services, key: str) -> bool:
    try:
        return services.store.load(key).data.get("state") == "merged"
    except PagerError:
        return False


def gather_waiting_tags(services: Services, repo: Repository, p: ReleasePull) -> list[Mapping[str, str]]:
    """Tags published for the pull request's versions before any release pull request of them was known."""
    found = [services.store.load(tag_key(repo.id, version)).data for version in p.versions]
    return [tag for tag in found if tag.get("tag")]


def index_versions(services: Services, repo: Repository, p: ReleasePull) -> None:
    """Remember which release pull request each of its versions belongs to (for release.published)."""
    for version in p.versions:
        settle(services, version_key(repo.id, version), decide_index(p.number, p.order), ttl_seconds=TTL_SECONDS)


def pull_request(delivery: Delivery, services: Services) -> str:
    """pull_request opened, reopened, synchronize, edited of a release pull request: show it."""
    payload = delivery.payload
    repo = delivery.repo
    if repo is None or not is_release_pull(payload.get("pull_request"), payload, services.settings):
        return "ignored: not a release pull request"
    p = read_pull(payload)
    tags = gather_waiting_tags(services, repo, p)
    outcome = settle_release(services, repo, p.number, partial(decide_pull, repo, p, tags)).outcome
    index_versions(services, repo, p)
    return outcome


def closed(delivery: Delivery, services: Services) -> str:
    """pull_request.closed of a release pull request: the merge recorded once, or closed."""
    payload = delivery.payload
    repo = delivery.repo
    if repo is None or not is_release_pull(payload.get("pull_request"), payload, services.settings):
        return "ignored: not a release pull request"
    p = read_pull(payload)
    tags = gather_waiting_tags(services, repo, p)
    outcome = settle_release(services, repo, p.number, partial(decide_closed, repo, p, tags)).outcome
    index_versions(services, repo, p)
    if p.merged:
        settle(services, latest_key(repo.id), decide_latest(p.number, p.merged_at))
    return outcome


def reviewed(delivery: Delivery, services: Services) -> str:
    """pull_request_review.submitted on a release pull request: an approval may be what it waited for, changes
    asked for may block it. Read it as GitHub has it (gather), then decide whether it is ready for 🔀 Merge."""
    return _read_again(delivery, services, review=True)


def drafted(delivery: Delivery, services: Services) -> str:
    """pull_request converted_to_draft or ready_for_review of a release pull request: a draft is not merged
    (🔀 Merge taken away), one ready for review may be. Read it as GitHub has it, then decide."""
    return _read_again(delivery, services, review=False)


def _read_again(delivery: Delivery, services: Services, *, review: bool) -> str:
    payload = delivery.payload
    pull = payload.get("pull_request")
    repo = delivery.repo
    if repo is None or not is_release_pull(pull, payload, services.settings):
        return "ignored: not a release pull request"
    number = integer(field(pull, "number"))
    if not number:
        return "ignored: no pull request number"
    read_at = services.now()
    live = gather_pull(services, repo.name, number, delivery.installation_id)
    checks = gather_checks(services, repo.name, live, delivery.installation_id)
    decide = partial(decide_ready, repo, None, live, is_release_pull(live, payload, services.settings), delivery.installation_id,
                     review=review, checks=checks, read_at=read_at)
    return f"#{number}: " + settle_release(services, repo, number, decide).outcome


@dataclass(frozen=True)
class SuitePassed:
    """A check suite that passed on a release branch, and the pull requests it lists into the default branch."""

    sha: str
    numbers: tuple[int, ...]
    installation_id: int | None


def read_suite(payload: Mapping[str, Any], prefixes: tuple[str, ...]) -> SuitePassed | str:
    suite = payload.get("check_suite")
    branch = text(field(suite, "head_branch"))
    if not any(branch.startswith(p) for p in prefixes if p):
        return "ignored: not a release branch"
    if text(field(suite, "conclusion")) not in PASSING:
        return "ignored: the suite did not pass"
    numbers = tuple(
        integer(field(pull, "number"))
        for pull in (field(suite, "pull_requests") or [])
        if field(pull, "base", "ref") == default_branch(payload)
    )
    installation = field(payload, "installation", "id")
    return SuitePassed(text(field(suite, "head_sha")), numbers, installation if isinstance(installation, int) else None)


def check_suite(delivery: Delivery, services: Services) -> str:
    """check_suite.completed: a suite passed on a release branch; for each of its pull requests, read
    it as GitHub has it (gather), then decide whether it is ready for 🔀 Merge."""
    suite = read_suite(delivery.payload, services.settings.release_branch_prefixes)
    if isinstance(suite, str):
        return suite
    repo = delivery.repo
    if repo is None:
        return "ignored: no repository id"
    outcomes = []
    for number in suite.numbers:
        read_at = services.now()
        live = gather_pull(services, repo.name, number, suite.installation_id)
        checks = gather_checks(services, repo.name, live, suite.installation_id)
        is_release = is_release_pull(live, delivery.payload, services.settings)
        decide = partial(decide_ready, repo, suite.sha, live, is_release, suite.installation_id, checks=checks,
                         read_at=read_at)
        outcomes.append(f"#{number}: " + settle_release(services, repo, number, decide).outcome)
    return "; ".join(outcomes) or "ignored: no release pull request"


MERGEABLE_WAIT_SECONDS = 2.0


def gather_pull(services: Services, repository: str, number: int, installation_id: int | None, *,
                again_later: bool = True) -> Mapping[str, Any]:
    """The pull request as GitHub has it now. While GitHub computes whether it can be merged (`mergeable`
    null, `mergeable_state` unknown), which it starts on this very read: wait a moment and read once more;
    still computing, the step fails (500) so that the redelivery asks again, rather than leave a ready
    release without 🔀 Merge. `again_later` False (the sweep, which reads it again at its next run): the
    pull request is answered as GitHub has it, still computing."""
    pull = services.github.get_pull(repository, number, installation_id=installation_id)
    if computing(pull):
        services.sleep(MERGEABLE_WAIT_SECONDS)
        pull = services.github.get_pull(repository, number, installation_id=installation_id)
        if computing(pull) and again_later:
            raise GitHubUnavailable(f"get pull request #{number}: GitHub is still computing whether it is mergeable")
    return pull


def computing(pull: Mapping[str, Any]) -> bool:
    """Whether GitHub is still computing whether an open pull request can be merged."""
    if text(field(pull, "state")) != "open":
        return False
    return ("mergeable" in pull and pull["mergeable"] is None) or text(field(pull, "mergeable_state")) == "unknown"


def gather_checks(services: Services, repository: str, pull: Mapping[str, Any],
                  installation_id: int | None) -> list[dict[str, str]]:
    """When GitHub calls an open pull request unstable (mergeable; a check that is not required failed or is
    pending), its head's check runs that did not pass, as GitHub lists them ("List check runs for a Git
    reference", Checks: read): every required one passed, or GitHub would call it blocked, so each is one
    that is not required. No call in any other state. GitHub refusing to list them (an installation whose
    owner took Checks away) names none: the message then says only that GitHub calls it unstable."""
    if text(field(pull, "state")) != "open" or text(field(pull, "mergeable_state")) != "unstable":
        return []
    sha = text(field(pull, "head", "sha"))
    if not sha:
        return []
    try:
        runs = services.github.list_check_runs(repository, sha, installation_id=installation_id)
    except GitHubRefused as exc:
        logger.warning("check runs not shown", extra={"repository": repository, "status": exc.status, "reason": exc.reason})
        return []
    return not_passing(runs)


def not_passing(runs: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The check runs that did not pass, each once by name: those that ended otherwise than passing first, then
    those still running, in GitHub's order; each with its state (GitHub's conclusion, or its status while it
    runs) and its page."""
    ended: dict[str, dict[str, str]] = {}
    running: dict[str, dict[str, str]] = {}
    for run in runs:
        name = text(field(run, "name"))
        if not name or name in ended or name in running:
            continue
        status, conclusion = text(field(run, "status")), text(field(run, "conclusion"))
        if status == "completed" and conclusion in PASSING:
            continue
        check = {"name": name, "state": conclusion if status == "completed" else status or "pending",
                 "url": text(field(run, "html_url"))}
        (ended if status == "completed" else running)[name] = check
    return [*ended.values(), *running.values()]


def published(delivery: Delivery, services: Services) -> str:
    """release.published: add its tag to the message of the release pull request of its version; a
    tag without a version goes to the release pull request merged last."""
    release = delivery.payload.get("release")
    tag = text(field(release, "tag_name"))
    repo = delivery.repo
    if not tag or repo is None:
        return "ignored: no tag"
    url = text(field(release, "html_url"))
    versions = versions_of(tag, text(field(release, "name")))
    if versions:
        for version in versions:
            number = integer(services.store.load(version_key(repo.id, version)).data.get("number"))
            if number:
                return settle_release(services, repo, number, partial(decide_tag, repo, tag, url)).outcome
        # No release pull request of this version is known yet (its events failed, or come late).
        return settle(services, tag_key(repo.id, versions[0]), decide_waiting_tag(tag, url), ttl_seconds=TTL_SECONDS).outcome
    latest = services.store.load(latest_key(repo.id)).data
    if not latest.get("number"):
        return "ignored: no merged release pull request"
    published_at = order_of_time(field(release, "published_at"))
    if published_at and published_at < latest.get("at", ""):
        return "ignored: published before the last release merge"
    return settle_release(services, repo, latest["number"], partial(decide_tag, repo, tag, url)).outcome
