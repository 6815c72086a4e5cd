"""What a handler works with: the settings, the store, the two clients and the clock.

Built once per warm Lambda container by `pager.bootstrap`, or by tests and the simulator with fakes
and a virtual clock. Handlers receive it as an argument; nothing here does I/O on construction.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable

from .settings import Settings
from .store import Store

if TYPE_CHECKING:  # pragma: no cover
    from .github import GitHub
    from .telegram import Telegram


@dataclass
class Services:
    settings: Settings
    store: Store
    github: "GitHub"
    telegram: "Telegram"
    clock: Callable[[], float] = field(default=time.time)  # epoch seconds; the simulator passes a virtual one
    sleep: Callable[[float], None] = field(default=time.sleep)  # a short wait inside a step; tests pass a fake

    def now(self) -> float:
        return self.clock()
