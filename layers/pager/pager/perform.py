"""Carrying out a decision's effect: where a `Step` meets Telegram, GitHub and the table.

The decisions (`pager.signals`) say what to do as data; this is the one place that turns an effect
into calls of the clients, and a client's answer into the result the step records.
"""

from __future__ import annotations

from typing import Any

from .errors import Conflict, GitHubRefused, MessageNotFound
from .services import Services
from .signals.steps import Dispatch, EditMessage, Effect, MergePull, MergeResult, Remember, SendMessage


def perform(services: Services, effect: Effect) -> Any:
    """Carry out one effect; the result is what the step's `then` records."""
    settings = services.settings
    if isinstance(effect, SendMessage):
        return services.telegram.send_message(
            settings.telegram_chat_id,
            effect.text,
            thread_id=settings.telegram_thread_id,
            buttons=effect.buttons,
            notify=effect.notify,
        )
    if isinstance(effect, EditMessage):
        try:
            services.telegram.edit_message(settings.telegram_chat_id, effect.message_id, effect.text, buttons=effect.buttons)
            return effect.message_id
        except MessageNotFound:
            # Deleted in the chat: the text is still worth showing (SPEC §5, Messages).
            return services.telegram.send_message(
                settings.telegram_chat_id, effect.text, thread_id=settings.telegram_thread_id, buttons=effect.buttons
            )
    if isinstance(effect, Dispatch):
        services.github.dispatch(effect.repository, effect.event_type, effect.client_payload)
        return None
    if isinstance(effect, MergePull):
        try:
            answer = services.github.merge_pull(
                effect.repository,
                effect.number,
                sha=effect.sha,
                method=effect.method,
                installation_id=effect.installation_id,
            )
        except GitHubRefused as exc:
            return MergeResult(merged=False, status=exc.status, reason=exc.reason or f"refused ({exc.status})")
        return MergeResult(merged=True, sha=str(answer.get("sha") or ""))
    if isinstance(effect, Remember):
        record = services.store.load(effect.key)
        if not record.exists:
            try:
                services.store.save(record, effect.data)
            except Conflict:
                pass  # written by another delivery at the same moment, with the same content
        return None
    raise TypeError(f"not an effect pager performs here: {type(effect).__name__}")
