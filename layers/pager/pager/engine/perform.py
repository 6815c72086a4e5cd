"""Carrying out a decision's effect: where a `Step` meets Telegram, GitHub and the table.

The decisions (the signals, the presses, the commands, the sweep's units) say what to do as data; this is
the one place that turns an effect into calls of the clients, and a client's answer into the result the
step records.

    perform(services, effect)   carry it out; the result its step records (Posted, MergeResult, ...); raises
                                the clients' errors (pager.errors): a settle releases its claim, a handler
                                answers 500 or 424
    attempt(services, effect)   the same, never raising: what became of it (`Done`), for a unit that folds its
                                results (the sweep: TOOK, REFUSED, FAILED, LIMITED)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .. import attention_store
from ..errors import ChatMigrated, GitHubRefused, GitHubUnavailable, MessageNotEditable, PagerError, Permanent, WorkflowsRefused
from ..observe import logger
from ..services import Services
from ..store import redoable
from .effects import (
    WORKFLOWS,
    DeleteMessage,
    Dispatch,
    EditMessage,
    Effect,
    MergePull,
    MergeResult,
    Note,
    Posted,
    Redeliver,
    SendMessage,
)


def perform(services: Services, effect: Effect) -> Any:
    """Carry out one effect; the result is what the step's `then` records."""
    for kind, carry_out in _PERFORMERS:
        if isinstance(effect, kind):
            return carry_out(services, effect)
    raise TypeError(f"not an effect pager performs here: {type(effect).__name__}")


def _message(services: Services, effect: SendMessage) -> Posted:
    """A new message: an answer to a command in the chat the command came from, any other in the chat pager
    writes to."""
    if effect.to is not None:
        # An answer to a command, in the chat the command came from (never a page: no topic, no move).
        sent = services.telegram.send_message(effect.to, effect.text, buttons=effect.buttons, notify=effect.notify,
                                              reply_to=effect.reply_to)
        return Posted(effect.to, sent)
    # A reply goes under a message of the chat pager writes to now; one left in another is not replied to.
    same = effect.reply_to is not None and services.chat.is_current(effect.chat, services.store)
    posted = _send(services, effect.text, effect.buttons, effect.notify, effect.reply_to if same else None)
    if effect.notify and effect.rests:
        attention_store.called(services, services.now())
    return posted


def _edit(services: Services, effect: EditMessage) -> Posted:
    """A message's new text, in place; shown anew where it cannot be edited."""
    chat = effect.chat or services.chat.configured
    if not services.chat.is_current(chat, services.store):
        # In a chat pager no longer writes to: its id may be another message's here. Shown anew (an
        # edit's moment never buzzes).
        return _send(services, effect.text, effect.buttons, notify=False)
    try:
        services.telegram.edit_message(chat, effect.message_id, effect.text, buttons=effect.buttons)
        return Posted(chat, effect.message_id)
    except MessageNotEditable:
        # Deleted in the chat, too old, or no longer the bot's to edit: the text is still worth showing.
        return _send(services, effect.text, effect.buttons, notify=False)
    except ChatMigrated as moved:
        services.chat.moved(services.store, chat, moved.to_chat, services.now())
        return _send(services, effect.text, effect.buttons, notify=False)


def _note(services: Services, effect: Note) -> None:
    """Keep the note for its period's call; in a delivery's pending work its writes wait for the record's, and are
    made again should the period's summary begin meanwhile (`keep` then finds the note a later call)."""
    redoable(services.store, lambda: attention_store.keep(services, effect))


def _dispatch(services: Services, effect: Dispatch) -> None:
    services.github.dispatch(effect.repository, effect.event_type, effect.client_payload)


def _merge(services: Services, effect: MergePull) -> MergeResult:
    """Merge a pull request; GitHub's refusal is a result too (not merged, with its status and reason, and its
    cause when GitHub's answer names one pager knows)."""
    try:
        answer = services.github.merge_pull(
            effect.repository,
            effect.number,
            sha=effect.sha,
            method=effect.method,
            installation_id=effect.installation_id,
        )
    except WorkflowsRefused as exc:
        return MergeResult(merged=False, status=exc.status, reason=exc.reason, cause=WORKFLOWS, file=exc.file)
    except GitHubRefused as exc:
        merged = _merged_already(services, effect) if exc.status in (405, 409) else None
        if merged is not None:
            return merged
        return MergeResult(merged=False, status=exc.status, reason=exc.reason or f"refused ({exc.status})")
    return MergeResult(merged=True, sha=str(answer.get("sha") or ""))


def _merged_already(services: Services, effect: MergePull) -> MergeResult | None:
    """A merge GitHub refuses as "not mergeable" may be one made already: an earlier press whose record the
    table lost, or someone on GitHub. GitHub's pull request says; None when it is not merged, or GitHub
    refuses to show it (the refusal stands). GitHub not answering now raises (Transient): the press is
    answered so, and Merge stays offered, never taken away on a guess."""
    try:
        pull = services.github.get_pull(effect.repository, effect.number, installation_id=effect.installation_id)
    except GitHubRefused:
        return None
    if pull.get("merged") is not True:
        return None
    return MergeResult(merged=True, sha=str(pull.get("merge_commit_sha") or ""), before=True)


def _redeliver(services: Services, effect: Redeliver) -> None:
    services.github.redeliver(effect.delivery_id)
    if effect.why != "press":
        logger.info(f"{effect.why} asked", extra={"guid": effect.guid, "delivery_id": effect.delivery_id})


def _send(services: Services, text: str, buttons: Any, notify: bool = True, reply_to: int | None = None) -> Posted:
    """A new message in the chat pager writes to; when Telegram says the group became a supergroup, in
    that one, at once, and remembered for every later message (pager.chat)."""
    chat = services.chat.send_to
    send = services.telegram.send_message
    thread = services.settings.telegram_thread_id
    try:
        return Posted(chat, send(chat, text, thread_id=thread, buttons=buttons, notify=notify, reply_to=reply_to))
    except ChatMigrated as moved:
        services.chat.moved(services.store, chat, moved.to_chat, services.now())
        return Posted(moved.to_chat, send(moved.to_chat, text, thread_id=thread, buttons=buttons, notify=notify))


def _delete(services: Services, effect: DeleteMessage) -> None:
    """Take a reposted message off the chat; one Telegram no longer lets the bot delete (48 hours old) is
    edited to say where it went, and one it no longer has, or in a chat pager no longer writes to, is left."""
    chat = effect.chat or services.chat.configured
    if not services.chat.is_current(chat, services.store):
        return
    try:
        if services.telegram.delete_message(chat, effect.message_id):
            return
        services.telegram.edit_message(chat, effect.message_id, effect.moved)
    except MessageNotEditable:
        return
    except ChatMigrated as moved:
        services.chat.moved(services.store, chat, moved.to_chat, services.now())


# Each kind of effect pager performs here, and how.
_PERFORMERS: tuple[tuple[type, Callable[[Services, Any], Any]], ...] = (
    (SendMessage, _message),
    (EditMessage, _edit),
    (DeleteMessage, _delete),
    (Note, _note),
    (Dispatch, _dispatch),
    (MergePull, _merge),
    (Redeliver, _redeliver),
)


# -- what became of an effect, for a unit that folds it ------------------------------------------------

TOOK, REFUSED, FAILED, LIMITED = "took", "refused", "failed", "rate limited"


@dataclass(frozen=True)
class Done:
    """What became of one effect: TOOK, REFUSED (a 4xx: asking again changes nothing), FAILED (a 5xx, no
    answer, a busy table: a later run tries again) or LIMITED (GitHub's rate limit: nothing more this run;
    `retry_after` seconds, when GitHub said). `effect` may be a unit's own act (the sweep's alarm change)."""

    effect: Any
    fate: str
    reason: str = ""
    retry_after: float | None = None
    status: int = 0  # GitHub's answer, when it refused
    github: bool = False  # GitHub did not take it (a 5xx, no answer, its rate limit): what waits for GitHub


def attempt(services: Services, effect: Any, run_id: str, carry_out: Callable[[Services, Any], Any] | None = None) -> Done:
    """Carry out one effect (by `perform`, or by `carry_out` for a unit's own act); its failure is logged and
    returned, never raised."""
    try:
        (carry_out or perform)(services, effect)
    except GitHubUnavailable as exc:
        limited = exc.retry_after is not None or exc.status == 429
        done = Done(effect, LIMITED if limited else FAILED, f"{type(exc).__name__}: {exc}", exc.retry_after, github=True)
    except Permanent as exc:
        status = getattr(exc, "status", 0)
        done = Done(effect, REFUSED, f"{type(exc).__name__}: {exc}", status=status if isinstance(status, int) else 0)
    except PagerError as exc:
        done = Done(effect, FAILED, f"{type(exc).__name__}: {exc}")
    else:
        return Done(effect, TOOK)
    name = getattr(effect, "why", "") or getattr(effect, "name", "") or type(effect).__name__
    logger.warning(f"{name} not done", extra={"run_id": run_id, **_fields(effect), "fate": done.fate, "reason": done.reason})
    return done


def _fields(effect: Any) -> dict[str, Any]:
    """What a log line says of an effect (a unit's own act says it itself: `fields`)."""
    if isinstance(effect, Redeliver):
        return {"guid": effect.guid, "delivery_id": effect.delivery_id}
    fields = getattr(effect, "fields", None)
    return dict(fields()) if callable(fields) else {}
