"""What a handler works with: the settings, the store, the two clients, the clock and the wait.

Built once per warm Lambda container by `pager.bootstrap`, or by tests and the simulator with fakes
and a virtual clock. Handlers receive it as an argument; nothing here does I/O on construction.

The store and the clients may be handed in built, or as `Lazy` factories that build them on first
use: a delivery the pager ignores (most of a busy fleet's traffic) then never builds a client, nor
imports `requests`, `jwt`, `cryptography` or `boto3`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

from .chat import Chat
from .settings import Settings
from .store import working_on

if TYPE_CHECKING:  # pragma: no cover
    from .github import GitHub
    from .store import Store
    from .telegram import Telegram

T = TypeVar("T")


class Lazy(Generic[T]):
    """A part built by `factory` on first use."""

    def __init__(self, factory: Callable[[], T]) -> None:
        self.factory = factory


class _Part:
    """A descriptor holding a part, or the `Lazy` that builds it on first use."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = getattr(obj, self.slot)
        if isinstance(value, Lazy):
            value = value.factory()
            setattr(obj, self.slot, value)
        return value

    def __set__(self, obj: Any, value: Any) -> None:
        setattr(obj, self.slot, value)


class _Table(_Part):
    """The store: the table itself, or, while a delivery's work on it is under way (`pager.store.Pending`), that
    work, through which it reads and writes."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        table = super().__get__(obj, owner)
        return table if obj is None else working_on(table) or table


class Services:
    store: Store = _Table()  # type: ignore[assignment]
    github: GitHub = _Part()  # type: ignore[assignment]
    telegram: Telegram = _Part()  # type: ignore[assignment]

    def __init__(
        self,
        settings: Settings,
        store: Store | Lazy[Store],
        github: GitHub | Lazy[GitHub],
        telegram: Telegram | Lazy[Telegram],
        clock: Callable[[], float] = time.time,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.settings = settings
        # A Lazy part stands in for its target (it builds it on first use): typed as the target.
        self.store = cast("Store", store)
        self.github = cast("GitHub", github)
        self.telegram = cast("Telegram", telegram)
        # where messages go (a group Telegram moved: its supergroup, given the chat's menu with this client)
        self.chat = Chat(settings.telegram_chat_id, lambda: self.telegram)
        self.clock = clock  # epoch seconds; the simulator passes a virtual one
        self.sleep = sleep  # a short wait inside a step; tests pass a fake

    def now(self) -> float:
        return self.clock()

    def built(self, part: str) -> bool:
        """Whether a part (store, github, telegram) was built already."""
        return not isinstance(getattr(self, "_" + part), Lazy)

    @property
    def calls(self) -> int:
        """HTTP calls of the clients built so far (the sweep's budget counts them)."""
        return sum(int(getattr(getattr(self, part), "calls", 0)) for part in ("github", "telegram") if self.built(part))
