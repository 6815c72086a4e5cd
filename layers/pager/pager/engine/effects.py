"""What a decision returns: a `Step`, with at most one external effect, each effect plain data.

A decision is a pure function `decide(data, now) -> Step` over its record's data (a signal's, a press's, a
call's), or a unit's plan (the sweep's); it never calls GitHub, Telegram or the table. The effects say what
to ask of the outside world, in one vocabulary for the webhook and the sweep, and `pager.engine.perform`
carries them out (the adapters' side).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Buttons = list[list[tuple[str, str]]]


@dataclass(frozen=True)
class SendMessage:
    """A new message: with a sound only when `notify` (pager.attention says when), and then a call after which
    the phone rests when `rests`; a reply to `reply_to` (a message of the same chat) when given, sent all the
    same if that message is gone."""

    text: str
    buttons: Buttons | None = None
    notify: bool = True
    reply_to: int | None = None
    chat: str | None = None  # the chat of `reply_to` (a reply goes nowhere else; None: the configured chat)
    to: str | None = None  # an answer in the chat a command or a press came from (None: a page, in pager's chat)
    rests: bool = False


@dataclass(frozen=True)
class EditMessage:
    """Edit a message; when Telegram no longer has it, or it is in a chat pager no longer writes to (a
    group Telegram moved to a supergroup), send the text as a new message."""

    message_id: int
    text: str
    buttons: Buttons | None = None
    chat: str | None = None  # the chat the message is in (None: a record older than this field: the configured chat)


@dataclass(frozen=True)
class DeleteMessage:
    """Take a message off the chat once it was posted anew below (a repost, so that a moment that must buzz
    notifies): one Telegram can no longer delete (48 hours old) is edited to say where it went."""

    message_id: int
    chat: str | None = None
    moved: str = "⤵️ moved below"


@dataclass(frozen=True)
class Note:
    """Keep for the summary at the end of a quiet period (`period`: its start and end) something that would
    have buzzed inside it: its kind, the thing it is about (one note per thing), how it reads and its link."""

    kind: str
    thing: str
    label: str
    url: str
    period: tuple[float, float]
    repository: str = ""
    at: float = 0.0  # when it would have buzzed (the summary lists them in this order)
    message: str = ""  # the key of the record whose message shows the thing: posted anew when it is all a call holds


@dataclass(frozen=True)
class Posted:
    """What a send or an edit results in: the message's chat and its id there (ids count per chat)."""

    chat: str
    message_id: int

    def fields(self) -> dict[str, Any]:
        """How a record keeps it (a contribution's, a release's)."""
        return {"message_id": self.message_id, "chat": self.chat}


@dataclass(frozen=True)
class Dispatch:
    repository: str
    event_type: str
    client_payload: dict[str, Any]


@dataclass(frozen=True)
class MergePull:
    repository: str
    number: int
    sha: str
    method: str
    installation_id: int | None = None


@dataclass(frozen=True)
class Redeliver:
    """Ask GitHub to deliver an event once more (`POST /app/hook/deliveries/{id}/attempts`), by one of its
    attempts: `guid`, the event (for the logs and the sweep's fold); `why`, who asks: "press" (↻), "redelivery"
    (the sweep's decision), "probe" (a hold asks whether GitHub takes redeliveries again), "refused" (↻ of
    deliveries refused with 401 or 424)."""

    delivery_id: int
    guid: str = ""
    why: str = "press"


@dataclass(frozen=True)
class Press:
    """Carry out a button's action (its callback data) for the person who pressed (`by`): the Telegram
    endpoint performs this one."""

    data: str
    by: str = ""


@dataclass(frozen=True)
class Command:
    """Carry out a command written in the chat and answer it there (a reply to it): the Telegram endpoint
    performs this one."""

    text: str
    chat: str
    message_id: int
    by: str = ""


Effect = SendMessage | EditMessage | DeleteMessage | Note | Dispatch | MergePull | Redeliver | Press | Command


WORKFLOWS = "workflows"  # a merge's cause of refusal: it changes .github/workflows/, the app lacks Workflows


@dataclass(frozen=True)
class MergeResult:
    merged: bool
    sha: str = ""
    status: int = 0
    reason: str = ""  # GitHub's own words for a refusal
    cause: str = ""  # a refusal's cause pager knows (WORKFLOWS), "" for any other
    file: str = ""  # the file GitHub named with it
    before: bool = False  # merged already when pager asked (by an earlier press whose record was lost, or on GitHub)


@dataclass(frozen=True)
class Step:
    """What `decide` wants next.

    Without an effect: `data` is the record's new data (None: write nothing) and `outcome` says why.
    With an effect: `then(result)` is the record's data once the effect happened; `outcome` (or
    `outcome(result)`) says what was done.
    """

    outcome: str | Callable[[Any], str]
    data: dict[str, Any] | None = None
    effect: Effect | None = None
    then: Callable[[Any], dict[str, Any]] | None = None

    def describe(self, result: Any = None) -> str:
        return self.outcome(result) if callable(self.outcome) else self.outcome


Decide = Callable[[dict[str, Any], float], Step]
