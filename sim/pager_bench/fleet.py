"""A busy fleet's week as a trace: every webhook event GitHub would send, and the faults around them.

The trace is data, made from a seed: nothing here delivers or handles anything (the replay in
`pager_bench.simulate` does). It follows the week that the amended decision describes: ten repositories,
workflow runs in bursts of up to 431 in a quarter hour (24 quarter hours with 100 runs or more), each
run with its three `workflow_run` deliveries, its check suite, and per job its check run and its
`workflow_job` deliveries; besides them contributions from outside, members' comments, release pull
requests with their check suites, code scanning alerts and failing runs on the default branch.

Faults are windows on the virtual clock: a Telegram outage (the Bot API answers 502), a GitHub
burst of 5xx on the REST calls the handlers make, and periods in which a share of the deliveries
gets no answer in time (GitHub records status_code 0, "timed out").

Each event is about a thing (`thing(event)`): what pager keys its record by, so that "a newer event
about the same thing" is exact, as the handlers decide it (`order(event)` says which of two is newer).

Payloads are GitHub's example payloads (tests/fixtures/github-webhooks, read by `pager_world.payloads`)
with repository, branch, conclusion, ids and times changed; `render(event)` builds the body bytes on
demand, the same bytes every time, so a week of deliveries never has to be held in memory.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from pager.values import iso
from pager_world.payloads import example

DAY = 86_400.0
QUARTER = 900.0
WEEK_START = datetime(2026, 11, 9, tzinfo=UTC).timestamp()  # a Monday, 00:00 UTC
CONTROL_REPOSITORY = "fleet/pager"
OWNER = "fleet"
RELEASE_BRANCH = "release-please--branches--main"


# ------------------------------------------------------------------------------------------- the data


@dataclass(frozen=True)
class Repo:
    id: int
    name: str

    @property
    def full_name(self) -> str:
        return f"{OWNER}/{self.name}"


@dataclass(frozen=True)
class Event:
    """One webhook event: what GitHub sends first at `at`, and again (same guid) when asked."""

    seq: int
    at: float
    guid: str
    event: str
    action: str | None
    repo: int  # index into Trace.repos
    fields: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class Fault:
    """A window of trouble: `telegram` (Bot API 502), `github` (REST 5xx), `timeout` (no answer)."""

    kind: str
    start: float
    end: float
    rate: float = 1.0  # for `timeout`: the share of deliveries in the window that get no answer

    @property
    def label(self) -> str:
        minutes = round((self.end - self.start) / 60)
        what = {"telegram": "Telegram 502", "github": "GitHub 5xx", "timeout": f"no answer ({self.rate:.0%})"}[self.kind]
        return f"{what}, {iso(self.start)[5:16].replace('T', ' ')}, {minutes} min"


@dataclass
class Trace:
    seed: int
    start: float
    end: float
    repos: list[Repo]
    events: list[Event]
    faults: list[Fault]
    pulls: dict[tuple[str, int], dict[str, Any]]  # release pull requests as GET /pulls/{n} answers them
    background_timeout_rate: float = 0.0001
    runs_per_quarter: list[int] = field(default_factory=list)

    @property
    def days(self) -> float:
        return (self.end - self.start) / DAY

    def by_guid(self) -> dict[str, Event]:
        return {e.guid: e for e in self.events}

    def no_answer(self, guid: str, attempt: int, at: float) -> bool:
        """Whether this attempt of an event gets no answer in time (deterministic per guid and attempt)."""
        digest = hashlib.blake2b(f"{self.seed}:{guid}:{attempt}".encode(), digest_size=8).digest()
        draw = int.from_bytes(digest, "big") / 2**64
        rate = self.background_timeout_rate
        for fault in self.faults:
            if fault.kind == "timeout" and fault.start <= at < fault.end:
                rate = max(rate, fault.rate)
        return draw < rate

    def active(self, kind: str, at: float) -> bool:
        return any(f.kind == kind and f.start <= at < f.end for f in self.faults)


# ------------------------------------------------------------------------------------------ the things


COMMENTS = frozenset({"issue_comment", "discussion_comment", "pull_request_review", "pull_request_review_comment"})


def thing(event: Event) -> tuple[Any, ...]:
    """What an event is about: (kind, repository, what pager keys its record by), from the event's fields.

    workflow_run         the workflow and the branch (the alarm's `workflow:<id>` of the default branch)
    check_suite          the app and the branch (the alarm's `suite:<app>`); a release's suite: its head
                         sha, that is its release pull request (`release#<repository id>#<number>`)
    check_run            the check run's name and the branch (workflow_job the same: the job's name)
    code_scanning_alert  the alert's number
    issues, pull_request, discussion   the number (`contribution#<repository id>#<thing>#<number>`, `release#...`)
    comments and reviews the comment's or review's id: each one a thing of its own
    release              the tag

    Two events about one thing: the newer overtakes the older, and the older delivered again is stale.
    """
    f = event.fields
    kind = event.event
    about: tuple[Any, ...]
    if kind == "workflow_run":
        about = (f["workflow_id"], f["branch"])
    elif kind == "check_suite":
        about = ("release", f["sha"]) if f["branch"] == RELEASE_BRANCH else (f["app"], f["branch"])
    elif kind in ("check_run", "workflow_job"):
        about = (f["name"], f["branch"])
    elif kind in ("code_scanning_alert", "issues", "pull_request", "discussion"):
        about = (f["number"],)
    elif kind in COMMENTS:
        about = (f["comment_id"],)
    elif kind == "release":
        about = (f.get("tag"),)
    else:
        about = (event.guid,)  # a kind fleet does not know: a thing of its own
    return (kind, event.repo) + about


def order(event: Event) -> tuple[Any, ...]:
    """Which of two events about one thing is the newer, as pager's handler compares them: a workflow
    run's number (a run started later is the newer one, whenever it completes; every run of the trace
    is its first attempt), else the time GitHub sent it (the `updated_at` the payload carries)."""
    if event.event == "workflow_run":
        return (event.fields["run_number"], event.seq)
    return (event.seq,)


# -------------------------------------------------------------------------------------- the schedule

# Bursts of workflow runs (day, hour, minute, runs in each quarter hour): 24 quarter hours of 100 or
# more, the busiest 431, as in the week the decision's amendment describes.
BURSTS: list[tuple[int, int, int, list[int]]] = [
    (0, 9, 0, [180, 431, 260, 120]),
    (0, 14, 0, [110, 150]),
    (1, 10, 30, [140, 220, 105]),
    (2, 9, 15, [120, 300, 190, 100]),
    (3, 16, 0, [105, 130]),
    (4, 9, 0, [160, 240, 150, 110]),
    (5, 11, 0, [100, 125]),
    (6, 20, 0, [100, 115, 100]),
]

# Faults of the week (day, hour, minute, kind, minutes, rate): short and long Telegram outages, some
# in a burst, one of three hours; GitHub 5xx bursts; periods without an answer in time. None overlaps
# another (tests/test_bench.py checks it).
FAULTS: list[tuple[int, int, int, str, int, float]] = [
    (0, 9, 20, "telegram", 30, 1.0),
    (0, 11, 0, "timeout", 20, 0.02),
    (0, 15, 10, "github", 15, 1.0),
    (1, 2, 0, "telegram", 120, 1.0),
    (1, 10, 40, "timeout", 15, 0.05),
    (1, 16, 0, "github", 40, 1.0),
    (2, 9, 30, "telegram", 20, 1.0),
    (2, 13, 0, "github", 10, 1.0),
    (3, 1, 0, "telegram", 180, 1.0),  # a weekday night: longer than an event's three attempts 15 minutes apart
    (3, 11, 10, "telegram", 15, 1.0),
    (3, 16, 10, "timeout", 10, 0.1),
    (4, 9, 20, "github", 30, 1.0),
    (4, 14, 0, "telegram", 25, 1.0),
    (5, 11, 10, "telegram", 60, 1.0),
    (6, 3, 0, "github", 20, 1.0),
    (6, 20, 15, "timeout", 15, 0.03),
]


def base_runs(day: int, hour: int) -> float:
    """Mean workflow runs per quarter hour outside the bursts."""
    if day % 7 >= 5:
        return 2.0
    return 12.0 if 8 <= hour < 18 else 3.0


WORKFLOWS = [(9001, "CI"), (9002, "Lint"), (9003, "CodeQL")]
EXTERNAL_APP = "external-ci"
OUTSIDERS = [("alice-out", "NONE"), ("bob-contrib", "CONTRIBUTOR"), ("carol-first", "FIRST_TIME_CONTRIBUTOR"),
             ("dave-out", "NONE"), ("erin-contrib", "CONTRIBUTOR")]
MEMBERS = [("maintainer", "OWNER"), ("teammate", "MEMBER")]


class _Builder:
    def __init__(self, seed: int, start: float, days: float, repos: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.start = start
        self.end = start + days * DAY
        self.repos = [Repo(id=70_000 + i, name=f"service-{i}") for i in range(repos)]
        self.raw: list[tuple[float, str, str | None, int, dict[str, Any]]] = []
        self.run_ids = iter(range(5_000_000, 10**9))
        self.job_ids = iter(range(20_000_000, 10**9))
        self.suite_ids = iter(range(30_000_000, 10**9))
        self.numbers = {i: 100 for i in range(repos)}
        self.run_numbers: dict[tuple[int, int], int] = {}
        self.pulls: dict[tuple[str, int], dict[str, Any]] = {}
        self.shas = 0

    def sha(self) -> str:
        self.shas += 1
        return hashlib.sha1(f"{self.seed}:{self.shas}".encode()).hexdigest()

    def add(self, at: float, event: str, action: str | None, repo: int, **fields: Any) -> None:
        if at < self.end:
            self.raw.append((at, event, action, repo, fields))

    def number(self, repo: int) -> int:
        self.numbers[repo] += 1
        return self.numbers[repo]

    # -- CI

    def run(self, at: float, repo: int, *, branch: str, failure_rate: float, sha: str | None = None) -> None:
        rng = self.rng
        workflow_id, workflow = rng.choice(WORKFLOWS)
        run_id = next(self.run_ids)
        key = (repo, workflow_id)
        self.run_numbers[key] = self.run_numbers.get(key, 0) + 1
        sha = sha or self.sha()
        started = at + rng.uniform(5, 40)
        done = started + rng.uniform(90, 720)
        draw = rng.random()
        conclusion = "failure" if draw < failure_rate else ("timed_out" if draw < failure_rate * 1.1 else "success")
        common = dict(run_id=run_id, run_number=self.run_numbers[key], workflow_id=workflow_id, workflow=workflow,
                      branch=branch, sha=sha, created=at, suite_id=next(self.suite_ids))
        self.add(at, "workflow_run", "requested", repo, status="queued", conclusion=None, updated=at, **common)
        self.add(started, "workflow_run", "in_progress", repo, status="in_progress", conclusion=None, updated=started, **common)
        self.add(done, "workflow_run", "completed", repo, status="completed", conclusion=conclusion, updated=done, **common)
        self.add(done + 1, "check_suite", "completed", repo, suite_id=common["suite_id"], branch=branch, sha=sha,
                 conclusion=conclusion if conclusion != "timed_out" else "failure", app="github-actions", updated=done + 1)
        for j in range(rng.choice((1, 1, 2, 2, 3))):
            job_id = next(self.job_ids)
            name = f"{workflow.lower()}-{j + 1}"
            job = dict(job_id=job_id, run_id=run_id, name=name, branch=branch, sha=sha, workflow=workflow, suite_id=common["suite_id"])
            self.add(at + 1 + j, "workflow_job", "queued", repo, status="queued", conclusion=None, updated=at + 1 + j, **job)
            self.add(started + 2 + j, "workflow_job", "in_progress", repo, status="in_progress", conclusion=None, updated=started + 2 + j, **job)
            self.add(started + 3 + j, "check_run", "created", repo, status="in_progress", conclusion=None, updated=started + 3 + j, **job)
            self.add(done - 3 + j * 0.1, "workflow_job", "completed", repo, status="completed", conclusion=conclusion, updated=done - 3, **job)
            self.add(done - 2 + j * 0.1, "check_run", "completed", repo, status="completed", conclusion=conclusion, updated=done - 2, **job)

    def external_suite(self, at: float, repo: int) -> None:
        conclusion = "failure" if self.rng.random() < 0.08 else "success"
        self.add(at, "check_suite", "completed", repo, suite_id=next(self.suite_ids), branch="main", sha=self.sha(),
                 conclusion=conclusion, app=EXTERNAL_APP, updated=at)

    # -- people

    def contribution(self, at: float, repo: int) -> None:
        rng = self.rng
        login, association = rng.choice(OUTSIDERS) if rng.random() < 0.6 else rng.choice(MEMBERS)
        kind = rng.choices(["issue", "comment", "pull", "review", "discussion", "discussion_comment"], [4, 6, 2, 1, 1, 1])[0]
        number = self.number(repo)
        person = dict(login=login, association=association, number=number, title=f"{kind} {number} from {login}",
                      updated=at, comment_id=next(self.job_ids))
        if kind == "issue":
            self.add(at, "issues", "opened", repo, **person)
            if rng.random() < 0.3:
                self.add(at + rng.uniform(600, 6 * 3600), "issues", "closed", repo, **{**person, "updated": None})
        elif kind == "comment":
            self.add(at, "issue_comment", "created", repo, **person)
        elif kind == "pull":
            self.add(at, "pull_request", "opened", repo, head=f"{login}/fix-{number}", sha=self.sha(), **person)
        elif kind == "review":
            self.add(at, "pull_request_review", "submitted", repo, sha=self.sha(), **person)
        elif kind == "discussion":
            self.add(at, "discussion", "created", repo, **person)
        else:
            self.add(at, "discussion_comment", "created", repo, **person)

    def release(self, at: float, repo: int) -> None:
        number = self.number(repo)
        sha = self.sha()
        full = self.repos[repo].full_name
        self.pulls[(full, number)] = {"number": number, "state": "open", "merged": False, "mergeable": True,
                                      "mergeable_state": "clean", "head": {"sha": sha, "ref": RELEASE_BRANCH},
                                      "base": {"ref": "main"}, "html_url": f"https://github.com/{full}/pull/{number}"}
        person = dict(login="release-please[bot]", association="NONE", number=number,
                      title=f"chore(main): release {number // 10}.{number % 10}.0", head=RELEASE_BRANCH, sha=sha,
                      updated=at, bot=True)
        self.add(at, "pull_request", "opened", repo, **person)
        self.run(at + 2, repo, branch=RELEASE_BRANCH, failure_rate=0.0, sha=sha)

    def code_scanning(self, at: float, repo: int) -> None:
        number = self.number(repo)
        self.add(at, "code_scanning_alert", "created", repo, number=number, updated=at, sha=self.sha())
        if self.rng.random() < 0.7:
            fixed = at + self.rng.uniform(1800, DAY)
            self.add(fixed, "code_scanning_alert", "fixed", repo, number=number, updated=fixed, sha=self.sha())

    # -- the week

    def build(self) -> Trace:
        rng = self.rng
        bursts = {}
        for day, hour, minute, counts in BURSTS:
            for i, count in enumerate(counts):
                bursts[self.start + day * DAY + hour * 3600 + minute * 60 + i * QUARTER] = count
        quarters = int((self.end - self.start) // QUARTER)
        runs_per_quarter = []
        for q in range(quarters):
            t0 = self.start + q * QUARTER
            day, hour = int((t0 - self.start) // DAY), int((t0 - self.start) % DAY // 3600)
            burst = next((count for start, count in bursts.items() if start <= t0 < start + QUARTER), None)
            mean = base_runs(day, hour)
            runs = burst if burst is not None else _poisson(rng, mean)
            runs_per_quarter.append(runs)
            for _ in range(runs):
                at = t0 + rng.uniform(0, QUARTER)
                repo = rng.randrange(len(self.repos))
                if burst is not None:
                    # a wave of dependency updates: runs on their branches, a share of them red
                    self.run(at, repo, branch=f"renovate/dep-{rng.randrange(40)}", failure_rate=0.1)
                elif rng.random() < 0.5:
                    self.run(at, repo, branch="main", failure_rate=0.05)
                else:
                    self.run(at, repo, branch=f"feature-{rng.randrange(200)}", failure_rate=0.15)
            working = day % 7 < 5 and 8 <= hour < 20
            for _ in range(_poisson(rng, 1.2 if working else 0.25)):
                self.contribution(t0 + rng.uniform(0, QUARTER), rng.randrange(len(self.repos)))
            for _ in range(_poisson(rng, 0.25 if working else 0.05)):
                self.external_suite(t0 + rng.uniform(0, QUARTER), rng.randrange(len(self.repos)))
            if rng.random() < (0.04 if working else 0.005):
                self.release(t0 + rng.uniform(0, QUARTER), rng.randrange(len(self.repos)))
            if rng.random() < 0.01:
                self.code_scanning(t0 + rng.uniform(0, QUARTER), rng.randrange(len(self.repos)))
        faults = [Fault(kind, self.start + day * DAY + hour * 3600 + minute * 60,
                        self.start + day * DAY + hour * 3600 + minute * 60 + minutes * 60, rate)
                  for day, hour, minute, kind, minutes, rate in FAULTS]
        faults = [f for f in faults if f.start < self.end]
        self.raw.sort(key=lambda r: r[0])
        guid_rng = random.Random(self.seed * 7919 + 1)
        events = [Event(seq=i, at=at, guid=_uuid(guid_rng), event=event, action=action, repo=repo, fields=fields)
                  for i, (at, event, action, repo, fields) in enumerate(self.raw)]
        return Trace(seed=self.seed, start=self.start, end=self.end, repos=self.repos, events=events,
                     faults=faults, pulls=self.pulls, runs_per_quarter=runs_per_quarter)


def _poisson(rng: random.Random, mean: float) -> int:
    # Knuth's method: fine for the small means used here
    limit, k, p = pow(2.718281828459045, -mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def _uuid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:32]}"


def make_trace(*, seed: int = 1, days: float = 7.0, repos: int = 10, start: float = WEEK_START) -> Trace:
    """The fleet's trace over `days` from `start` (a Monday): events sorted by time, and the faults."""
    return _Builder(seed, start, days, repos).build()


def only(trace: Trace, kinds: Iterable[str]) -> Trace:
    """The same trace with only the events of these kinds (the same guids, times, faults and pull
    requests): what a deployment whose app subscribes to those events receives of the fleet's week."""
    keep = frozenset(kinds)
    return replace(trace, events=[e for e in trace.events if e.event in keep])


def tiny_trace(*, seed: int = 3, hours: float = 3.0, runs_per_quarter: int = 3, repos: int = 2,
               start: float = WEEK_START) -> Trace:
    """A small trace for tests: a few runs and contributions, one Telegram outage, one GitHub 5xx burst,
    one period without answers."""
    builder = _Builder(seed, start, hours / 24, repos)
    rng = builder.rng
    quarters = int(hours * 4)
    for q in range(quarters):
        t0 = start + q * QUARTER
        for _ in range(runs_per_quarter):
            builder.run(t0 + rng.uniform(0, QUARTER), rng.randrange(repos), branch="main", failure_rate=0.3)
        for _ in range(2):
            builder.contribution(t0 + rng.uniform(0, QUARTER), rng.randrange(repos))
        if q % 4 == 1:
            builder.release(t0 + rng.uniform(0, QUARTER), rng.randrange(repos))
    trace = builder.build()
    trace.faults = [
        Fault("telegram", start + 20 * 60, start + 45 * 60),
        Fault("github", start + 60 * 60, start + 75 * 60),
        Fault("timeout", start + 90 * 60, start + 100 * 60, 0.5),
    ]
    return trace


def outage_trace(*, hours: float, every_hours: float, seed: int = 1, start: float = WEEK_START) -> Trace:
    """One long Telegram outage (502 to every Bot API call from `start` for `hours`) and, while it lasts,
    someone from outside comments on an issue every `every_hours`, the first ten minutes in: each comment a
    page that must reach the chat once Telegram is back."""
    end = start + hours * 3600
    repos = [Repo(id=70_000, name="service-0")]
    guids = random.Random(seed * 7919 + 1)
    events, at = [], start + 600
    while at < end:
        n = len(events)
        fields = dict(login="alice-out", association="NONE", number=101 + n, title=f"issue {101 + n} from alice-out",
                      updated=at, comment_id=20_000_000 + n)
        events.append(Event(seq=n, at=at, guid=_uuid(guids), event="issue_comment", action="created", repo=0, fields=fields))
        at += every_hours * 3600
    return Trace(seed=seed, start=start, end=end, repos=repos, events=events, faults=[Fault("telegram", start, end)],
                 pulls={}, background_timeout_rate=0.0)


def red_trace(red_for: Iterable[float], *, every_hours: float = 1.0, seed: int = 1, start: float = WEEK_START) -> Trace:
    """One repository whose CI workflow fails on main and passes again `red_for` seconds later, once per value,
    `every_hours` apart (the first ten minutes in): each run's `workflow_run.completed` alone, no fault. What
    an alarm's grace is about: a failure that passes again within it is a flake a rerun cleared."""
    repos = [Repo(id=70_000, name="service-0")]
    guids = random.Random(seed * 7919 + 1)
    raw, at, number = [], start + 600, 0
    for red in red_for:
        for conclusion, done in (("failure", at), ("success", at + red)):
            number += 1
            raw.append((done, dict(run_id=5_000_000 + number, run_number=number, workflow_id=WORKFLOWS[0][0],
                                   workflow=WORKFLOWS[0][1], branch="main", suite_id=30_000_000 + number,
                                   sha=hashlib.sha1(f"{seed}:{number}".encode()).hexdigest(), created=done - 300,
                                   status="completed", conclusion=conclusion, updated=done)))
        at += every_hours * 3600
    raw.sort(key=lambda r: r[0])
    events = [Event(seq=n, at=done, guid=_uuid(guids), event="workflow_run", action="completed", repo=0, fields=fields)
              for n, (done, fields) in enumerate(raw)]
    return Trace(seed=seed, start=start, end=max(at, raw[-1][0] + 60 if raw else at), repos=repos, events=events,
                 faults=[], pulls={}, background_timeout_rate=0.0)


# ------------------------------------------------------------------------------------------ payloads


# GitHub's example for each (event, action) of the trace: (the example's action, its variant).
EXAMPLES: dict[tuple[str, str], tuple[str, str]] = {
    ("workflow_run", "requested"): ("requested", ""),
    ("workflow_run", "in_progress"): ("requested", ""),
    ("workflow_run", "completed"): ("completed", ""),
    ("workflow_job", "queued"): ("queued", ""),
    ("workflow_job", "in_progress"): ("in_progress", ""),
    ("workflow_job", "completed"): ("completed", "success.with-organization"),
    ("check_run", "created"): ("created", ""),
    ("check_run", "completed"): ("completed", ""),
    ("check_suite", "completed"): ("completed", ""),
    ("issues", "opened"): ("opened", ""),
    ("issues", "closed"): ("opened", ""),
    ("issue_comment", "created"): ("created", ""),
    ("pull_request", "opened"): ("opened", ""),
    ("pull_request_review", "submitted"): ("submitted", ""),
    ("discussion", "created"): ("created", ""),
    ("discussion_comment", "created"): ("created", ""),
    ("code_scanning_alert", "created"): ("created", ""),
    ("code_scanning_alert", "fixed"): ("fixed", ""),
}


@functools.cache
def _template(event: str, action: str) -> dict[str, Any]:
    """GitHub's example for an event of the trace, parsed once: `payload` copies what it changes, never
    changing the template itself."""
    example_action, variant = EXAMPLES[(event, action)]
    return example(event, example_action, variant)


def _repository(template: dict[str, Any], repo: Repo) -> dict[str, Any]:
    full = repo.full_name
    out = dict(template)
    out.update(id=repo.id, node_id=f"R_{repo.id}", name=repo.name, full_name=full, private=False,
               html_url=f"https://github.com/{full}", url=f"https://api.github.com/repos/{full}", default_branch="main")
    owner = dict(template.get("owner") or {})
    owner.update(login=OWNER, type="Organization", html_url=f"https://github.com/{OWNER}")
    out["owner"] = owner
    return out


def _user(template: dict[str, Any] | None, login: str, bot: bool = False) -> dict[str, Any]:
    out = dict(template or {})
    out.update(login=login, type="Bot" if bot else "User", html_url=f"https://github.com/{login.replace('[bot]', '')}")
    return out


def payload(event: Event, trace: Trace) -> dict[str, Any]:
    """GitHub's example payload for the event's kind and action, changed to this event."""
    template = _template(event.event, event.action or "")
    return _payload(event, trace, template, _repository(template["repository"], trace.repos[event.repo]))


def _payload(event: Event, trace: Trace, template: dict[str, Any], repository: Any) -> dict[str, Any]:
    """`payload`, with `repository` wherever the event's repository goes."""
    repo = trace.repos[event.repo]
    f = event.fields
    p = dict(template)
    p["action"] = event.action
    p["repository"] = repository
    p["installation"] = {"id": 1, "node_id": "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uMQ=="}
    full = repo.full_name
    kind = event.event
    if kind in ("workflow_run", "workflow_job", "check_run", "check_suite", "code_scanning_alert"):
        p["sender"] = _user(template.get("sender"), "github-actions[bot]", bot=True)
    if kind == "workflow_run":
        run = dict(template["workflow_run"])
        run.update(id=f["run_id"], name=f["workflow"], display_title=f"{f['workflow']} on {f['branch']}",
                   workflow_id=f["workflow_id"], run_number=f["run_number"], run_attempt=1, event="push",
                   head_branch=f["branch"], head_sha=f["sha"], status=f["status"], conclusion=f["conclusion"],
                   check_suite_id=f["suite_id"], created_at=iso(f["created"]), run_started_at=iso(f["created"]),
                   updated_at=iso(f["updated"]), html_url=f"https://github.com/{full}/actions/runs/{f['run_id']}",
                   repository=p["repository"], head_repository=p["repository"], pull_requests=[])
        p["workflow_run"] = run
        workflow = dict(template.get("workflow") or {})
        workflow.update(id=f["workflow_id"], name=f["workflow"], path=f".github/workflows/{f['workflow'].lower()}.yml")
        p["workflow"] = workflow
    elif kind == "workflow_job":
        job = dict(template["workflow_job"])
        job.update(id=f["job_id"], run_id=f["run_id"], run_attempt=1, head_sha=f["sha"], head_branch=f["branch"],
                   status=f["status"], conclusion=f["conclusion"], name=f["name"], workflow_name=f["workflow"],
                   html_url=f"https://github.com/{full}/actions/runs/{f['run_id']}/job/{f['job_id']}",
                   created_at=iso(f["updated"]), started_at=iso(f["updated"]))
        p["workflow_job"] = job
    elif kind == "check_run":
        check = dict(template["check_run"])
        suite = dict(check.get("check_suite") or {})
        suite.update(id=f["suite_id"], head_branch=f["branch"], head_sha=f["sha"])
        check.update(id=f["job_id"], head_sha=f["sha"], status=f["status"], conclusion=f["conclusion"], name=f["name"],
                     check_suite=suite, started_at=iso(f["updated"]), pull_requests=[],
                     html_url=f"https://github.com/{full}/runs/{f['job_id']}")
        check["app"] = {**(check.get("app") or {}), "slug": "github-actions", "name": "GitHub Actions"}
        p["check_run"] = check
    elif kind == "check_suite":
        suite = dict(template["check_suite"])
        suite.update(id=f["suite_id"], head_branch=f["branch"], head_sha=f["sha"], after=f["sha"], status="completed",
                     conclusion=f["conclusion"], updated_at=iso(f["updated"]), created_at=iso(f["updated"] - 60),
                     pull_requests=[])
        suite["app"] = {**(suite.get("app") or {}), "slug": f["app"],
                        "name": "GitHub Actions" if f["app"] == "github-actions" else "External CI"}
        p["check_suite"] = suite
    elif kind == "code_scanning_alert":
        alert = dict(template["alert"])
        alert.update(number=f["number"], html_url=f"https://github.com/{full}/security/code-scanning/{f['number']}",
                     state="open" if event.action == "created" else "fixed", created_at=iso(f["updated"]))
        p["alert"] = alert
        p["ref"] = "refs/heads/main"
        p["commit_oid"] = f["sha"]
    else:
        _people(p, template, event, f, full)
    return p


def _people(p: dict[str, Any], template: dict[str, Any], event: Event, f: dict[str, Any], full: str) -> None:
    kind = event.event
    user = _user(template.get("sender"), f["login"], bot=bool(f.get("bot")))
    p["sender"] = user
    association = f["association"]
    number = f["number"]
    stamp = iso(f["updated"] if f.get("updated") is not None else event.at)
    if kind == "issues" or kind == "issue_comment":
        issue = dict(template["issue"])
        issue.update(number=number, title=f["title"], user=user, author_association=association,
                     html_url=f"https://github.com/{full}/issues/{number}", body="Something is off.",
                     state="closed" if event.action == "closed" else "open", created_at=stamp, updated_at=iso(event.at))
        p["issue"] = issue
        if kind == "issue_comment":
            comment = dict(template["comment"])
            comment.update(id=f["comment_id"], user=user, author_association=association, body="Any news on this?",
                           html_url=f"https://github.com/{full}/issues/{number}#issuecomment-{f['comment_id']}",
                           created_at=stamp, updated_at=stamp)
            p["comment"] = comment
    elif kind in ("pull_request", "pull_request_review"):
        pull = dict(template["pull_request"])
        head = dict(pull.get("head") or {})
        head.update(ref=f.get("head", f"{f['login']}/change"), sha=f["sha"], repo=p["repository"])
        base = dict(pull.get("base") or {})
        base.update(ref="main", repo=p["repository"])
        pull.update(number=number, title=f["title"], user=user, author_association=association, head=head, base=base,
                    html_url=f"https://github.com/{full}/pull/{number}", body="This changes a thing.", state="open",
                    created_at=stamp, updated_at=stamp, merged=False)
        p["pull_request"] = pull
        p["number"] = number
        if kind == "pull_request_review":
            review = dict(template["review"])
            review.update(id=f["comment_id"], user=user, author_association=association, body="Please reconsider this.",
                          state="commented", commit_id=f["sha"], submitted_at=stamp,
                          html_url=f"https://github.com/{full}/pull/{number}#pullrequestreview-{f['comment_id']}")
            p["review"] = review
    elif kind in ("discussion", "discussion_comment"):
        discussion = dict(template["discussion"])
        discussion.update(number=number, title=f["title"], user=user, author_association=association,
                          html_url=f"https://github.com/{full}/discussions/{number}", body="How do I do this?",
                          created_at=stamp, updated_at=stamp)
        p["discussion"] = discussion
        if kind == "discussion_comment":
            comment = dict(template["comment"])
            comment.update(id=f["comment_id"], user=user, author_association=association, body="Same question here.",
                           html_url=f"https://github.com/{full}/discussions/{number}#discussioncomment-{f['comment_id']}",
                           created_at=stamp, updated_at=stamp)
            p["comment"] = comment


class _Repository:
    """Stands for the event's repository in the payload `render` encodes."""


_REPOSITORY = _Repository()
_MARK = "\ue000repository\ue000"  # what `render` encodes it as, a text no payload holds ...
_MARK_JSON = json.dumps(_MARK)  # ... written so, then replaced by the repository's own JSON


def _marked(value: Any) -> str:
    if value is _REPOSITORY:
        return _MARK
    raise TypeError(f"{type(value).__name__} is not JSON")


@functools.cache
def _repository_json(event: str, action: str, repo: Repo) -> str:
    return json.dumps(_repository(_template(event, action)["repository"], repo), separators=(",", ":"))


def render(event: Event, trace: Trace) -> bytes:
    """The body GitHub sends for the event: the same bytes on every attempt, `payload` as compact JSON. The
    repository, the largest part (a workflow run holds it three times), is encoded once per repository and
    kind and spliced in where it goes: compact JSON encodes a value alike wherever it sits."""
    template = _template(event.event, event.action or "")
    text = json.dumps(_payload(event, trace, template, _REPOSITORY), separators=(",", ":"), default=_marked)
    return text.replace(_MARK_JSON, _repository_json(event.event, event.action or "", trace.repos[event.repo])).encode()


def iter_kinds(trace: Trace) -> Iterator[tuple[str, int]]:
    """(event kind, count), most frequent first."""
    counts: dict[str, int] = {}
    for e in trace.events:
        counts[e.event] = counts.get(e.event, 0) + 1
    yield from sorted(counts.items(), key=lambda kv: -kv[1])
