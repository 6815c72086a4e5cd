"""The handler's deadline, carried in a context variable so that every client can honour it.

A webhook must answer well inside GitHub's 10 seconds. The handler sets a deadline for its invocation;
before each external step a client calls `check(step)`, which raises `DeadlineExceeded` once the
deadline has passed (the webhook then answers 500 and the redelivery does the rest), and bounds its
timeout with `timeout(default)` so that no single call outlives the deadline.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from .errors import DeadlineExceeded


@dataclass(frozen=True)
class Deadline:
    at: float
    clock: Callable[[], float] = time.monotonic

    def remaining(self) -> float:
        return self.at - self.clock()

    def check(self, step: str) -> None:
        if self.remaining() <= 0:
            raise DeadlineExceeded(f"deadline passed before {step}")

    def timeout(self, default: float) -> float:
        return max(0.1, min(default, self.remaining()))


_current: ContextVar[Deadline | None] = ContextVar("pager_deadline", default=None)


def check(step: str) -> None:
    """Raise DeadlineExceeded when the current invocation's deadline has passed."""
    deadline = _current.get()
    if deadline is not None:
        deadline.check(step)


def active() -> bool:
    """Whether the current invocation keeps a deadline."""
    return _current.get() is not None


def remaining() -> float | None:
    """Seconds left before the current invocation's deadline (None: it keeps none)."""
    deadline = _current.get()
    return None if deadline is None else deadline.remaining()


def timeout(default: float) -> float:
    """A call's timeout: `default`, shortened to what the current deadline leaves."""
    deadline = _current.get()
    return default if deadline is None else deadline.timeout(default)


@contextlib.contextmanager
def within(seconds: float, clock: Callable[[], float] = time.monotonic) -> Iterator[Deadline]:
    """Run a block under a deadline `seconds` from now."""
    deadline = Deadline(at=clock() + seconds, clock=clock)
    token = _current.set(deadline)
    try:
        yield deadline
    finally:
        _current.reset(token)
