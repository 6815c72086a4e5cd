"""Property test: an evening, a night and a morning, minute by minute, with quiet hours and the phone's rest.

Simulated (docs/attention.md "Every moment", the phone's rest, quiet hours): QUIET_HOURS 22:00-07:00 in
Europe/Berlin and BUZZ_GAP_MINUTES 0, 30, 60 or 75, from 90 minutes before the night to two hours after it.
Each minute, what happens in it happens at a second of its own (GitHub's time is the world's): outsiders open
issues, comment on them (before or after a closing: GitHub lets them) and a closing ends an issue; two
workflows fail or pass on new commits; Telegram answers 502 for a minute (sendMessage alone, or every call).
Then the every-minute check runs, GitHub carries out the redeliveries asked for, and every 15 minutes the
sweep runs. After those hours nothing new happens and the minutes go on (four hours at most) until every
delivery was answered 200 and the phone's longest rest since the last answer is over.

Invariants, each exactly what docs/attention.md (and, for 4, docs/sweep.md) promises:
 1. nothing buzzes inside quiet hours;
 2. a contact kept for a summary (the night's 🌅 or the rest's 📬) is named by a summary sent after it, unless
    its thread was closed after it on GitHub;
 3. one summary per period at most (one 🌅 for the night, one 📬 per rest); no summary names a thread
    pager knew closed after every contribution it had heard of in it, nor says the repository is still red
    when the newest run pager had heard of of each workflow passed (and was handled);
 4. every delivery answered 200 once Telegram is back, or, its three attempts spent in outages (exhausted),
    named by pager's own health ("all attempts failed", with ↻); no claim left behind.

    make test-deep     ten times the examples, searched anew (the suite runs the same 5, about 0.25 s each)
    FUZZ_TIMEZONE=America/New_York FUZZ_QUIET_HOURS=22:00-07:00 FUZZ_NIGHT=2027-11-06
                                    another night: TIMEZONE, QUIET_HOURS (a daytime window too, 09:00-17:00)
                                    and the local date the quiet hours start on (here the night DST ends)
    FUZZ_EVENTS=120                 busier evenings (40 things at most by default)
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from zoneinfo import ZoneInfo

import hypothesis
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from support import examples

from pager.attention import QuietHours
from pager.sweep.run import check as minute_check
from pager.values import iso
from pager_world.cases import issue_closed, issue_comment_by, issue_opened
from pager_world.cases import run as run_payload
from pager_world.world import REPO

EXAMPLES = examples(5)
TIMEZONE = os.environ.get("FUZZ_TIMEZONE", "Europe/Berlin")
QUIET_HOURS = os.environ.get("FUZZ_QUIET_HOURS", "22:00-07:00")
NIGHT = date.fromisoformat(os.environ.get("FUZZ_NIGHT", "2027-01-15"))  # the local day the quiet hours start on

ZONE = ZoneInfo(TIMEZONE)
QUIET = QuietHours.parse(QUIET_HOURS, ZONE)
assert QUIET is not None
NIGHT_START, NIGHT_END = QUIET.period(datetime.combine(NIGHT, QUIET.start, tzinfo=ZONE).timestamp())
T0 = NIGHT_START - 90 * 60  # the evening: the simulation's minute 0
SPAN = int(NIGHT_END + 120 * 60 - T0) // 60  # minutes, to two hours after the night
EDGES = ((NIGHT_START - T0) // 60, (NIGHT_END - T0) // 60)  # the minutes quiet hours start and end
AFTER = 240  # minutes at most, once the night is over, for the sweep to bring back what failed
SWEEP_EVERY = 15  # minutes

ISSUES = (1, 5, 6, 7)
LOGINS = ("alice", "bob", "carol")
WORKFLOWS = {11: "build", 12: "lint"}
OUTAGES = {"send": "sendMessage", "all": None}  # a minute of Telegram answering 502: sendMessage alone, or every call
GAPS = (75, 60, 30, 0)  # BUZZ_GAP_MINUTES (0: the phone never rests)
MOST = int(os.environ.get("FUZZ_EVENTS", "40"))  # things that happen in an evening, at most
PER_MINUTE = 20  # events in one minute at most: each at a second of its own, before the check's


@dataclass(frozen=True)
class Act:
    """One thing that happens in a minute (its repr is what a shrunk example prints)."""

    minute: int
    kind: str  # open, comment, close (an issue); fail, pass (a workflow's run on a new commit); outage
    thing: int | str  # the issue's number, the workflow's id, or the outage's kind (OUTAGES)
    who: str = ""

    def __repr__(self) -> str:
        return f"<{clock(T0 + self.minute * 60)} {self.kind} {self.thing}{' ' + self.who if self.who else ''}>"


def clock(t: float) -> str:
    return datetime.fromtimestamp(t, ZONE).strftime("%H:%M:%S")


def _realistic(acts: list[Act]) -> list[Act]:
    """In minute order, as GitHub would have them: an issue is opened only as the first thing that happens to
    it (else it was opened before the evening, by an outsider), closed once; comments may come after."""
    acts = sorted(acts, key=lambda a: a.minute)
    seen: set[int | str] = set()
    closed: set[int | str] = set()
    per_minute: dict[int, int] = defaultdict(int)
    kept = []
    for a in acts:
        if per_minute[a.minute] >= PER_MINUTE:
            continue
        if a.kind in ("open", "comment", "close"):
            if (a.kind == "open" and a.thing in seen) or (a.kind == "close" and a.thing in closed):
                continue
            seen.add(a.thing)
            if a.kind == "close":
                closed.add(a.thing)
        per_minute[a.minute] += 1
        kept.append(a)
    return kept


def _minutes():
    near = [st.integers(max(edge - 10, 0), min(edge + 10, SPAN)) for edge in EDGES]
    return st.one_of(st.integers(0, SPAN), *near)  # anywhere, and often at the night's edges


def _act(minute: int, kind: str, thing: int | str, who: str) -> Act:
    return Act(minute, kind, thing, who if kind in ("open", "comment") else "")


issue_acts = st.builds(_act, _minutes(), st.sampled_from(["open", "comment", "comment", "close"]), st.sampled_from(ISSUES),
                 st.sampled_from(LOGINS))
run_acts = st.builds(_act, _minutes(), st.sampled_from(["fail", "pass"]), st.sampled_from(sorted(WORKFLOWS)), st.just(""))
outage_acts = st.builds(_act, _minutes(), st.just("outage"), st.sampled_from(sorted(OUTAGES)), st.just(""))
evenings = st.lists(st.one_of(issue_acts, issue_acts, run_acts, outage_acts), max_size=MOST).map(_realistic)


# -- GitHub's payloads --------------------------------------------------------------------------------------


def issue_url(n: int) -> str:
    return f"https://github.com/{REPO}/issues/{n}"


@dataclass
class GitHubSide:
    """What GitHub knows as the evening goes: who opened each issue (an outsider; alice for one opened before
    the evening), which are closed, each workflow's newest commit."""

    authors: dict[int, str] = field(default_factory=dict)
    closed: set[int] = field(default_factory=set)
    commits: dict[int, int] = field(default_factory=lambda: dict.fromkeys(WORKFLOWS, 0))

    def issue(self, n: int, at: float) -> dict:
        """The issue as a payload carries it at `at`."""
        return {"issue.number": n, "issue.id": 9000 + n, "issue.html_url": issue_url(n),
                "issue.state": "closed" if n in self.closed else "open", "issue.user.login": self.authors.get(n, "alice"),
                "issue.author_association": "NONE", "issue.updated_at": iso(at)}

    def event(self, act: Act, at: float) -> tuple[str, dict]:
        """The webhook event GitHub sends for what happened at `at`."""
        if act.kind in ("open", "comment", "close"):
            n = int(act.thing)
            if act.kind == "open":
                self.authors[n] = act.who
                return "issues", issue_opened(**{**self.issue(n, at), "issue.created_at": iso(at), "sender.login": act.who})
            if act.kind == "comment":
                return "issue_comment", issue_comment_by(act.who, comment_id=int(at), number=n, **{
                    **self.issue(n, at), "comment.created_at": iso(at), "comment.updated_at": iso(at)})
            self.closed.add(n)
            return "issues", issue_closed(**{**self.issue(n, at), "issue.closed_at": iso(at),
                                             "sender.login": self.authors.get(n, "alice")})
        workflow = int(act.thing)
        self.commits[workflow] += 1
        number = self.commits[workflow]
        return "workflow_run", run_payload("failure" if act.kind == "fail" else "success", workflow_id=workflow,
                                           number=number, name=WORKFLOWS[workflow], **{
                                               "workflow_run.head_sha": f"{workflow:02d}{number:038x}",
                                               "workflow_run.id": workflow * 100_000 + number,
                                               "workflow_run.created_at": iso(at - 120),
                                               "workflow_run.run_started_at": iso(at - 120),
                                               "workflow_run.updated_at": iso(at)})


# -- the evening, minute by minute --------------------------------------------------------------------------


@dataclass
class Sent:
    """An event GitHub sent: what it was, its time on GitHub, and every answer the webhook gave it."""

    act: Act
    at: float  # GitHub's time (the world's clock when it happened)
    answers: list[tuple[float, int, str]] = field(default_factory=list)  # (when, status, outcome)

    def __repr__(self) -> str:
        return repr(self.act)

    def handled_by(self, t: float) -> bool:
        """Answered 200 before `t`."""
        return any(when < t and status == 200 for when, status, _ in self.answers)

    def tried_by(self, t: float) -> bool:
        return any(when < t for when, _, _ in self.answers)


@dataclass
class Evening:
    sent: dict[str, Sent] = field(default_factory=dict)  # guid -> the event
    log: list[str] = field(default_factory=list)


def to(world, t: float) -> None:
    """The world's clock to `t`, never back (Telegram's flood control may have moved it on)."""
    world.now = max(world.now, t)


def minute_passes(world, minute: int) -> None:
    """The every-minute check, GitHub carrying out the redeliveries it was asked for, and the sweep's run."""
    minute_check(world.services, now=world.now, run_id=f"check-{minute}", seconds=60)
    world.hub.deliver_pending()
    if minute % SWEEP_EVERY == 0:
        world.sweep(run_id=f"sweep-{minute}")


class Outage:
    """Telegram answering 502 for the next 60 seconds (an outage begun meanwhile lasts 60 seconds from its own start)."""

    def __init__(self, world) -> None:
        self.world = world
        self.until: float | None = None

    def begin(self, kind: str) -> None:
        self.world.faults.heal()
        self.world.chat.fail(OUTAGES[kind], 502, count=10_000)
        self.until = self.world.now + 60

    def heal_when_over(self) -> None:
        if self.until is not None and self.world.now >= self.until:
            self.world.faults.heal()
            self.until = None


def live_evening(world, acts: list[Act], gap: int) -> Evening:
    evening = Evening()
    endpoint = world.hub.endpoint

    def answering(guid, event, payload, redelivery):  # every answer, the sweep's redeliveries' too
        answer = endpoint(guid, event, payload, redelivery)  # its status, and the body GitHub keeps
        status = answer[0] if isinstance(answer, tuple) else answer
        if guid in evening.sent:
            outcome = str(world.answers.get(guid, {}).get("outcome"))
            evening.sent[guid].answers.append((world.now, status, outcome))
            evening.log.append(f"{clock(world.now)} {evening.sent[guid].act!r}{' again' if redelivery else ''}"
                               f" -> {status} {outcome}")
        return answer

    world.hub.endpoint = answering
    by_minute: dict[int, list[Act]] = defaultdict(list)
    for a in acts:
        by_minute[a.minute].append(a)
    github = GitHubSide()
    outage = Outage(world)
    minute = 0
    while minute <= SPAN + AFTER:
        for i, a in enumerate(by_minute.get(minute, [])):
            to(world, T0 + minute * 60 + 1 + i)
            outage.heal_when_over()
            if a.kind == "outage":
                outage.begin(str(a.thing))
                evening.log.append(f"{clock(world.now)} Telegram answers 502 ({a.thing}) for a minute")
                continue
            guid = f"g-{minute}-{i}"
            event, body = github.event(a, world.now)
            evening.sent[guid] = Sent(a, world.now)
            world.deliver(event, body, guid=guid)
        to(world, T0 + minute * 60 + 30)
        outage.heal_when_over()
        minute_passes(world, minute)
        minute += 1
        if minute > SPAN and settled(world, evening, gap):
            break
    return evening


def settled(world, evening: Evening, gap: int) -> bool:
    """The night is over: every delivery answered 200 at last, and the phone's longest rest since the last
    answer is over (its call, or a late contact's, has come)."""
    if any(not s.answers or s.answers[-1][1] != 200 for s in evening.sent.values()):
        return False
    last = max((when for s in evening.sent.values() for when, _, _ in s.answers), default=T0)
    return world.now >= max(last, NIGHT_END) + (gap + 5) * 60


# -- what the chat shows ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Summary:
    at: float
    text: str

    own: bool = False  # a thing's own message: the one thing a call held, or a contact that called (no period said)
    anew: bool = False  # ... posted anew by a call (not the contact's own first sending)

    @property
    def period(self) -> str | None:
        """Its second line, when it was kept: "Kept without a sound in quiet hours, 22:00–07:00" or "Kept
        without a sound since 10:02, while the phone rested" (None for a call by a thing's own message).
        Within the simulation's day no two periods start in the same minute (no rest starts inside quiet
        hours, where a fall-back repeats an hour)."""
        return None if self.own else (self.text.split("\n") + [""])[1]

    @property
    def named(self) -> set[int]:
        """The issues its 💬 lines link (a thread's own message posted anew: its own first line)."""
        lines = [line for line in self.text.splitlines() if line.startswith("💬 ")]
        return {int(n) for line in lines[:1 if self.own else None] for n in re.findall(r"Hello-World#(\d+)</a>", line)}

    @property
    def says_red(self) -> bool:
        """It counts the repository red: a 🚨 line of a call, or the alarm's own message posted anew (pager's
        own health is "⚙️")."""
        return any(line.startswith("🚨 ") and "Hello-World" in line for line in self.text.splitlines()[:1 if self.own else None])

    def __repr__(self) -> str:
        return f"{clock(self.at)} {self.text!r}"


def summaries(world) -> list[Summary]:
    """The calls: each message that says what a period kept, and each thing's own message sent with a sound
    (a call that held it alone, or its first contact: either way the phone called about it) or posted anew
    within a minute or two of a buzz (what a rest kept, following the alarm that ended it)."""
    rang = [at for _, at, _ in world.chat.buzzes]
    sent = {mid: at for what, mid, at, _ in world.chat.history if what == "send"}
    deleted = {(first, at) for what, _, at, first in world.chat.history if what == "delete"}
    anew = {mid for what, mid, at, first in world.chat.history if what == "send" and (first, at) in deleted}
    loud = {mid for mid, _, _ in world.chat.buzzes}
    followed = {mid for mid in anew if any(0 <= sent[mid] - t <= 150 for t in rang)}

    def summary(m) -> Summary | None:
        if m.text.startswith(("📬 ", "🌅 ")):
            return Summary(m.sent_at, m.text)
        if (m.message_id in loud or m.message_id in followed) and m.text.startswith(("💬", "🚨")):
            return Summary(m.sent_at, m.text, own=True, anew=m.message_id in anew)
        return None

    return [s for m in world.chat.chat() if m.author is None and (s := summary(m)) is not None]


def contributions(evening: Evening, n: int) -> list[Sent]:
    return [s for s in evening.sent.values() if s.act.thing == n and s.act.kind in ("open", "comment")]


def closings(evening: Evening, n: int) -> list[Sent]:
    return [s for s in evening.sent.values() if s.act.thing == n and s.act.kind == "close"]


# -- the checks ---------------------------------------------------------------------------------------------


def no_buzz_in_quiet_hours(world) -> list[str]:
    return [f"the phone buzzed inside quiet hours, at {clock(at)}: {first}"
            for _, at, first in world.chat.buzzes if QUIET.period(at) is not None]


def kept_contacts_are_called(evening: Evening, said: list[Summary]) -> list[str]:
    """A contact kept for a summary is named by one sent after it, unless its thread was closed after it."""
    problems = []
    for s in evening.sent.values():
        if s.act.kind not in ("open", "comment"):
            continue
        n = int(s.act.thing)
        for when, status, outcome in s.answers:
            if status != 200 or "kept for the summary" not in outcome:
                continue
            if any(c.at > s.at for c in closings(evening, n)):
                continue  # closed after it: nothing left to do
            if not any(summary.at >= when and n in summary.named for summary in said):
                problems.append(f"{s.act!r} was kept for the summary at {clock(when)}, and no summary after it names #{n}")
    return problems


def one_summary_per_period(said: list[Summary]) -> list[str]:
    periods = [summary.period for summary in said if summary.period is not None]
    return [f"two summaries of one period: {period}" for period in sorted(set(periods)) if periods.count(period) > 1]


def summaries_name_only_what_needs_you(evening: Evening, said: list[Summary]) -> list[str]:
    """No summary names a thread that pager knew was closed after every contribution it had heard of in it
    (a closing answered 200 before the summary, newer on GitHub than each contribution delivered before it),
    nor says the repository is still red when, of each workflow, the newest run pager had heard of passed and
    was answered 200."""
    problems = []
    for summary in said:
        for n in sorted(summary.named if not summary.own or summary.anew else ()):
            heard = [c.at for c in contributions(evening, n) if c.tried_by(summary.at)]
            closed = [c.at for c in closings(evening, n) if c.handled_by(summary.at)]
            if closed and heard and max(closed) > max(heard):
                problems.append(f"the summary at {clock(summary.at)} names #{n}, closed at {clock(max(closed))}"
                                f" after its last contribution ({clock(max(heard))})")
        newest: dict[int, Sent] = {}
        for s in evening.sent.values():
            if s.act.kind in ("fail", "pass") and s.tried_by(summary.at):
                w = int(s.act.thing)
                newest[w] = max(newest.get(w, s), s, key=lambda r: r.at)
        green = bool(newest) and all(s.act.kind == "pass" and s.handled_by(summary.at) for s in newest.values())
        if green and summary.says_red:
            problems.append(f"the summary at {clock(summary.at)} says {REPO} is still red; every workflow's newest run"
                            f" passed: {sorted(newest.values(), key=lambda s: s.at)}")
    return problems


def nothing_left_failing(world, evening: Evening) -> list[str]:
    """Every delivery answered 200 at last, or, its three attempts spent (docs/sweep.md: exhausted), named by
    pager's own health (an open entry `delivery:<guid>` of ⚙️ pager: "all attempts failed", with ↻)."""
    named = {key.split("[entry:delivery:", 1)[1].rstrip("]") for key, data in world.store.dump().items()
             if "[entry:delivery:" in key and isinstance(data, dict) and data.get("state") == "open"}
    problems = [f"a delivery still failing once Telegram is back, and not named by ⚙️ pager: {s.act!r} last answered "
                f"{s.answers[-1][1] if s.answers else 'nothing'}"
                for guid, s in evening.sent.items() if (not s.answers or s.answers[-1][1] != 200) and guid not in named]
    if world.pending_claims():
        problems.append(f"claims left behind: {world.pending_claims()}")
    return problems


def verify(world, evening: Evening) -> None:
    said = summaries(world)
    problems = (no_buzz_in_quiet_hours(world) + kept_contacts_are_called(evening, said) + one_summary_per_period(said)
                + summaries_name_only_what_needs_you(evening, said) + nothing_left_failing(world, evening))
    trace = ("\n--- what happened:\n" + "\n".join(evening.log) + "\n--- summaries:\n" + "\n".join(map(repr, said))
             + "\n--- buzzes: " + repr([(clock(at), first) for _, at, first in world.chat.buzzes]))
    assert not problems, "\n".join(problems) + trace


def _settings(n: int = EXAMPLES):
    return hypothesis_settings(max_examples=n, deadline=None, print_blob=True,
                               suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                                      HealthCheck.data_too_large])


@_settings()
@given(evening=evenings, gap=st.sampled_from(GAPS))
def test_an_evening_night_and_morning_loses_nothing_and_wakes_no_one(make_world, evening, gap):
    world = make_world(quiet_hours=QUIET_HOURS, timezone=TIMEZONE, buzz_gap_minutes=gap, start=T0)
    lived = live_evening(world, evening, gap)
    said = summaries(world)
    hypothesis.event(f"🌅 summaries: {len([s for s in said if s.text.startswith('🌅')])}")
    hypothesis.event(f"📬 calls: {min(len([s for s in said if s.text.startswith('📬')]), 3)}")
    hypothesis.event(f"kept for a summary: {any('kept for the summary' in o for s in lived.sent.values() for _, _, o in s.answers)}")
    verify(world, lived)
