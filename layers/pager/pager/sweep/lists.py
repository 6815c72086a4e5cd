"""GitHub's lists of the app's deliveries, and how far pager has read them.

GitHub lists every attempt of the app's webhook for three days, newest first, a page of at most 100 at a
time, each page linking the next (`Link: rel="next"`; GitHub's cursor names the delivery the next page
starts below, so a link read in one run still works in the next). Two lists (docs.github.com, "List
deliveries for an app webhook"): every outcome, and `status=failure` (status codes 400 to 599; an
attempt that got no answer in time is in neither filter, only in the first).

pager reads the every-outcome list whole, each delivery once: a `Scan` is a cursor through it kept
across runs. A pass begins at the list's head and reads down to where the pass before began (`top`);
when one run cannot read it all, the next run goes on at GitHub's link to the page after the last one
read, so a busy hour is read over two runs, never skipped. A first pass reads back to where it is told
(`stop_at`); the failure list is read once the same way, back to GitHub's three days, for what failed
before pager's first pass (`pager.sweep.deliveries`).

Here: the attempt as the list shows it, what its status code means, and the pure step of a scan over one
page (`Scan.step`). Reading the pages is the run's (`pager.sweep.run`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..values import parse_iso

PASSED = "passed"
REFUSED = "refused"
FAILED = "failed"
NO_ANSWER = "no answer"

TOO_MANY_REQUESTS = 429  # API Gateway's throttling answers it before pager runs: a failure a later attempt fixes
PER_PAGE = 100  # GitHub's largest page
GITHUB_RETENTION = 3 * 24 * 3600  # GitHub lists deliveries for three days
# A delivery that got no answer is listed once GitHub gave up waiting (its 10 s), so its id may lie below
# a newer one listed before it: a pass reads this far past where the pass before began.
OVERLAP_SECONDS = 30
_NAME_MAX = 40  # event and action names are cut to this, to bound the state's size


def outcome_of(status_code: int) -> str:
    """How an attempt ended, from its status code. A 2xx passed. A 4xx is pager's refusal, which it would
    repeat, except 429: too many requests (API Gateway's throttle or any other) failed, like a 5xx. A 3xx failed
    too: a redirect on the way (a domain moved, http to https), which GitHub does not follow, so pager never
    ran (GitHub's list files it with the successes, 200..399: the sweep reads every outcome). Anything else
    (0: "timed out") got no answer."""
    if 200 <= status_code <= 299:
        return PASSED
    if 400 <= status_code <= 499 and status_code != TOO_MANY_REQUESTS:
        return REFUSED
    if 300 <= status_code <= 599:
        return FAILED
    return NO_ANSWER


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class Attempt:
    """One delivery attempt as the list shows it; all attempts of an event share its `guid`."""

    id: int
    guid: str
    at: float
    redelivery: bool
    status_code: int
    event: str
    action: str | None = None
    repository_id: int | None = None

    @property
    def outcome(self) -> str:
        return outcome_of(self.status_code)

    @property
    def answered(self) -> bool:
        """Whether pager answered it (passed or refused): its endpoint works."""
        return self.outcome in (PASSED, REFUSED)

    @classmethod
    def from_github(cls, item: Mapping[str, Any]) -> Attempt | None:
        """The attempt of one list item; None for an item without id, guid or time."""
        ident, at = _int(item.get("id")), parse_iso(item.get("delivered_at"))
        guid = item.get("guid")
        if ident is None or at is None or not isinstance(guid, str) or not guid:
            return None
        action = item.get("action")
        return cls(id=ident, guid=guid, at=float(int(at)), redelivery=bool(item.get("redelivery")),
                   status_code=_int(item.get("status_code")) or 0, event=str(item.get("event") or "")[:_NAME_MAX],
                   action=action[:_NAME_MAX] if isinstance(action, str) else None,
                   repository_id=_int(item.get("repository_id")))


def attempts_of(items: Iterable[Any]) -> list[Attempt]:
    """The attempts of a page's items; an item that is no object (GitHub's answer malformed) is none."""
    return [a for a in (Attempt.from_github(item) for item in items if isinstance(item, Mapping)) if a is not None]


# -- how far a list has been read -------------------------------------------------------------------------

MET, WINDOW, END, PAGES = "met", "window", "end", "pages"  # how a pass ended: see `Scan.step`


@dataclass(frozen=True)
class Scan:
    """How far pager has read one list, kept across runs.

    `top`: the newest delivery of the last pass that ended (0: none yet); everything from there down was
    read. `head`: the pass under way, begun at that delivery (0: none under way), goes on at `next_url`;
    `low` is the oldest delivery it read so far. `recent`: the ids read within OVERLAP_SECONDS of `top`,
    which the next pass reads again (a delivery GitHub listed late is read; one read already is skipped);
    `head_recent` the same near `head`, for when the pass under way ends."""

    top: int = 0
    top_at: float = 0.0
    head: int = 0
    head_at: float = 0.0
    next_url: str | None = None
    low: int = 0
    low_at: float = 0.0
    recent: tuple[int, ...] = ()
    head_recent: tuple[int, ...] = ()

    @property
    def under_way(self) -> bool:
        return bool(self.head)

    def fresh(self, items: Iterable[Attempt], stop_at: float) -> list[Attempt]:
        """Of a page, the attempts this scan has not read yet: newer than `top`, or listed late within the
        overlap, and not older than `stop_at`."""
        seen = set(self.recent)
        return [a for a in items if a.at >= stop_at and a.id not in seen
                and (a.id > self.top or a.at >= self.top_at - OVERLAP_SECONDS)]

    def step(self, items: list[Attempt], next_url: str | None, stop_at: float) -> tuple[list[Attempt], Scan, str]:
        """One page read (the first of a pass when none is under way): its fresh attempts, the scan after
        it, and how the pass stands: MET (it reached the pass before), WINDOW (it reached `stop_at`), END
        (the list ended: GitHub keeps nothing older) or PAGES (it goes on at the next page)."""
        scan = self if self.under_way or not items else self._begun(items)
        fresh = scan.fresh(items, stop_at)
        oldest = min(items, key=lambda a: a.id, default=None)
        if oldest is not None and (not scan.low or oldest.id < scan.low):
            scan = replace(scan, low=oldest.id, low_at=oldest.at)
        near = tuple(a.id for a in items if a.at >= scan.head_at - OVERLAP_SECONDS)
        scan = replace(scan, head_recent=tuple(sorted({*scan.head_recent, *near})))
        if any(a.at < stop_at for a in items):
            return fresh, scan.ended(), WINDOW
        if self.top and any(a.id <= self.top and a.at < self.top_at - OVERLAP_SECONDS for a in items):
            return fresh, scan.ended(), MET
        if not next_url:
            return fresh, scan.ended(), END
        return fresh, replace(scan, next_url=next_url), PAGES

    def _begun(self, items: list[Attempt]) -> Scan:
        newest = max(items, key=lambda a: a.id)
        return replace(self, head=newest.id, head_at=newest.at, next_url=None, low=0, low_at=0.0, head_recent=())

    def ended(self) -> Scan:
        """The pass under way done: what it began with is the new `top`."""
        if not self.under_way:
            return self
        return Scan(top=self.head, top_at=self.head_at, recent=self.head_recent, low=self.low, low_at=self.low_at)

    def restarted(self) -> Scan:
        """The pass under way given up (GitHub no longer takes its link): the next run begins a new one."""
        return replace(self, head=0, head_at=0.0, next_url=None, head_recent=())

    @property
    def newest(self) -> int:
        """The newest delivery this scan has read."""
        return max(self.head, self.top)

    def to_data(self) -> dict[str, Any]:
        data = {"top": self.top, "top_at": int(self.top_at), "low": self.low, "low_at": int(self.low_at),
                "recent": list(self.recent)}
        if self.under_way:
            data.update(head=self.head, head_at=int(self.head_at), next_url=self.next_url, head_recent=list(self.head_recent))
        return data

    @classmethod
    def from_data(cls, data: Any) -> Scan:
        if not isinstance(data, Mapping):
            return cls()
        return cls(top=int(data.get("top") or 0), top_at=float(data.get("top_at") or 0),
                   head=int(data.get("head") or 0), head_at=float(data.get("head_at") or 0),
                   next_url=data.get("next_url") or None, low=int(data.get("low") or 0),
                   low_at=float(data.get("low_at") or 0), recent=tuple(int(i) for i in data.get("recent") or ()),
                   head_recent=tuple(int(i) for i in data.get("head_recent") or ()))


@dataclass(frozen=True)
class Read:
    """What one run read of a list: the fresh attempts, the scan after them, the pages, and how the pass
    stands (`Scan.step`'s MET, WINDOW, END or PAGES; "" when nothing was read)."""

    attempts: tuple[Attempt, ...] = ()
    scan: Scan = Scan()
    pages: int = 0
    ended: str = ""

    @property
    def under_way(self) -> bool:
        """The pass did not end in this run: the next run goes on where it stopped."""
        return self.ended == PAGES
