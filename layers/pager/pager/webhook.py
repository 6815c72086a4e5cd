"""The two HTTP endpoints: GitHub's webhook and Telegram's, from a verified request to an answer.

What an answer means to the sweep (docs/sweep.md, "The decision per event"): a 4xx is never delivered
again, a 500 is. So a request the pager refuses (bad signature, no GitHub headers, not JSON) gets its 4xx
with a reason; a step that failed but can succeed later (Transient: Telegram, GitHub or DynamoDB
unavailable, the deadline passed) answers 500 naming the step; a refusal that no retry can fix
(Permanent) is logged as an error, recorded (pager.refusals) and answered 424, so that GitHub keeps the
delivery among its failures for ↻ once the cause is fixed; an unexpected error answers 500 with its
traceback in the log, never a silent 200.
"""

from __future__ import annotations

import functools
import hmac
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from . import deadline
from . import refusals as refused
from .errors import BadRequest, Permanent, Transient
from .observe import count, logger
from .routing import Delivery, Request, json_object
from .services import Services
from .signals import handlers
from .store import at_work
from .waiting import note_failure
from .words import thing_of

# GitHub waits 10 s for an answer; keep a margin for the answer itself.
DEADLINE_SECONDS = 8.0

Answer = tuple[int, dict[str, Any]]


Handle = TypeVar("Handle", bound=Callable[..., Any])


def _its_own(handle: Handle) -> Handle:
    """A request's work on the table is its own (`pager.store.Pending`), whatever runs it: never another one's
    under way in the same thread (a simulated delivery that arrives during another one's call)."""

    @functools.wraps(handle)
    def own(*args: Any, **kwargs: Any) -> Any:
        with at_work(None):
            return handle(*args, **kwargs)

    return own  # type: ignore[return-value]


@_its_own
def handle_github(
    event: Mapping[str, Any] | Request,
    services: Services,
    *,
    seconds: float = DEADLINE_SECONDS,
    monotonic: Callable[[], float] = time.monotonic,
) -> Answer:
    started = monotonic()
    line: dict[str, Any] = {"guid": "", "event": ""}
    try:
        request = event if isinstance(event, Request) else Request.from_apigw(event)
        line.update(guid=request.headers.get("x-github-delivery", ""), event=request.headers.get("x-github-event", ""))
        delivery = Delivery.from_request(request, secret=services.settings.github_webhook_secret)
    except BadRequest as exc:
        return _answer(exc.status, {"error": str(exc)}, line, "refused", started, monotonic, reason=str(exc))
    logger.set_correlation_id(delivery.guid or None)

    line.update(action=delivery.action, repository=delivery.repository)
    if delivery.event == "ping":
        return _answer(200, {"outcome": "pong"}, line, "pong", started, monotonic)
    acting = handlers(delivery.event, delivery.action)
    if not acting:
        return _answer(200, {"outcome": "ignored"}, line, "ignored", started, monotonic)
    outcomes: list[str] = []
    refusals: list[Permanent] = []
    try:
        with deadline.within(seconds, monotonic):
            for handler in acting:
                deadline.check(handler.__module__.rsplit(".", 1)[-1] + "." + handler.__name__)
                try:
                    outcomes.append(handler(delivery, services))
                except Permanent as exc:  # refused for good: the other handlers of the event still act
                    refusals.append(exc)
    except Transient as exc:
        # the recovery check sweeps as soon as the service answers again; should GitHub forget this delivery
        # before then (its three days), pager names it
        thing = thing_of(delivery.event, delivery.payload, delivery.repository)
        note_failure(services, exc, first={"guid": delivery.guid, "event": delivery.event, "thing": thing.label,
                                           "url": thing.url or ""})
        return _answer(500, {"error": str(exc)}, line, "failed", started, monotonic, reason=str(exc), error=type(exc).__name__)
    except Exception as exc:  # a bug: answer 500 so the event is not lost, and show the traceback
        logger.exception("handler crashed", extra={"guid": line["guid"]})
        return _answer(500, {"error": f"internal error: {type(exc).__name__}"}, line, "crashed", started, monotonic, error=type(exc).__name__)
    if refusals:
        # A refusal that no retry can fix now: another delivery would be refused the same way (a bot
        # removed from the chat, a permission the app lacks refuse every signal alike). Logged as an
        # error, counted, recorded for the alarm (pager's own health), and answered 424: GitHub keeps the
        # delivery among its failures, never delivered again by itself, for ↻ once the cause is fixed.
        count("DeliveriesRefusedUpstream")
        reason = "; ".join(str(exc) for exc in refusals)
        kind = f"{delivery.event}.{delivery.action}" if delivery.action else delivery.event
        refused.record(services.store, guid=delivery.guid, event=kind, repository=delivery.repository,
                       refusals=refusals, now=services.now(),
                       thing=thing_of(delivery.event, delivery.payload, delivery.repository).label)
        body = {"outcome": "refused", "reason": reason, **({"done": "; ".join(outcomes)} if outcomes else {})}
        return _answer(refused.ANSWER, body, line, "refused upstream", started, monotonic, level="error", reason=reason,
                       error=type(refusals[0]).__name__)
    outcome = "; ".join(outcomes)
    return _answer(200, {"outcome": outcome}, line, outcome, started, monotonic)


@_its_own
def handle_telegram(event: Mapping[str, Any] | Request, services: Services, *, monotonic: Callable[[], float] = time.monotonic) -> Answer:
    """Telegram's webhook: check the secret token, then hand the update to the buttons."""
    try:
        request = event if isinstance(event, Request) else Request.from_apigw(event)
    except BadRequest as exc:
        logger.warning("telegram update refused", extra={"outcome": "refused", "reason": str(exc)})
        return exc.status, {"error": str(exc)}
    token = request.headers.get("x-telegram-bot-api-secret-token", "")
    expected = services.settings.telegram_webhook_secret
    if not token or not hmac.compare_digest(token.encode(), expected.encode()):
        logger.warning("telegram update refused", extra={"outcome": "refused", "reason": "secret token missing or wrong"})
        return 401, {"error": "secret token missing or wrong"}
    try:
        update = json_object(request.body)
    except BadRequest as exc:
        logger.warning("telegram update refused", extra={"outcome": "refused", "reason": str(exc)})
        return exc.status, {"error": str(exc)}
    update_id = update.get("update_id")
    from .buttons import handle_update

    try:
        with deadline.within(DEADLINE_SECONDS, monotonic):
            outcome = handle_update(update, services)
    except Transient as exc:
        # Telegram retries a non-2xx answer; a retried update acts once.
        logger.warning("telegram update failed", extra={"update_id": update_id, "outcome": "failed", "reason": str(exc)})
        return 500, {"error": str(exc)}
    except Permanent as exc:  # refused for good (a token Telegram no longer takes): no retry would help
        outcome = f"refused: {exc}"
    except Exception as exc:  # a bug: answer 500 (Telegram sends the update again) and show the traceback
        logger.exception("telegram update crashed", extra={"update_id": update_id})
        return 500, {"error": f"internal error: {type(exc).__name__}"}
    # A refusal no retry can fix is an error (it reached the chat, where Telegram let it); the rest is news.
    log = logger.error if outcome.startswith("refused") else logger.info
    log("telegram update", extra={"update_id": update_id, "outcome": outcome})
    return 200, {"outcome": outcome}


def _answer(
    status: int,
    body: dict[str, Any],
    line: dict[str, Any],
    outcome: str,
    started: float,
    monotonic: Callable[[], float],
    level: str | None = None,
    **extra: Any,
) -> Answer:
    duration_ms = round((monotonic() - started) * 1000, 1)
    fields = {**line, "status": status, "outcome": outcome, "duration_ms": duration_ms, **extra}
    if status >= 500 or level == "error":
        logger.error("delivery", extra=fields)
    elif status >= 400:
        logger.warning("delivery", extra=fields)
    else:
        logger.info("delivery", extra=fields)
    return status, body
