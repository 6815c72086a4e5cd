"""The fake world's virtual clock: epoch seconds that move only when told to."""

from __future__ import annotations


class Clock:
    """The one clock of a fake world: GitHub, Telegram, the services and the sweep all read it."""

    def __init__(self, now: float) -> None:
        self.now = float(now)

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += max(0.0, seconds)

    def set(self, t: float) -> None:
        """Move to `t`, never back."""
        self.now = max(self.now, float(t))

    def sleep(self, seconds: float) -> None:
        """A wait that costs no real time: the clock moves on."""
        self.advance(seconds)
