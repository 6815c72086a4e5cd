"""What a delivery leaves behind when GitHub or Telegram refused what its signal needed.

A refusal no retry fixes (a bot removed from the chat, a permission the app lacks, an installation gone)
is no reason to drop the page: the webhook answers `ANSWER` (424 Failed Dependency), so that GitHub
lists the delivery among its failures and keeps it there for three days, never delivered again by
itself (a 4xx), and writes one item under `KEY` naming what refused and why. pager's own health
(pager.sweep.health) counts them in ⚙️ pager; once the service that refused takes
such a call again, the entry offers ↻, which delivers the refused deliveries again from GitHub's list:
their handlers then do what is left, and the pages reach the chat.

    item `<time>#<guid>` = {at, guid, event, repository, reason, status, said: the reason in words,
                            thing: what the event was about (words.thing_of),
                            service: the services that refused, "telegram", "github" or both}
"""

from __future__ import annotations

from typing import Any

from .errors import Conflict, Permanent, StoreUnavailable, TelegramRefused
from .observe import logger
from .store import Record
from .values import iso

ANSWER = 424  # the webhook's answer to a delivery whose signal GitHub or Telegram refused
KEY = "refusals"
TTL_SECONDS = 3 * 24 * 3600  # as long as GitHub keeps the delivery, and so can deliver it again


def service_of(refusal: Permanent) -> str:
    """Which service refused: telegram or github."""
    return "telegram" if isinstance(refusal, TelegramRefused) else "github"


def said(refusal: Permanent) -> str:
    """A refusal in the maintainer's words: who refused, and their own reason (the status stays in the log)."""
    if isinstance(refusal, TelegramRefused):
        return f"Telegram refused: {refusal.description or 'no reason given'}"[:200]
    reason = getattr(refusal, "reason", "") or "no reason given"
    return f"GitHub refused: {reason}"[:200]


def item(*, guid: str, event: str, repository: str, refusal: Permanent, now: float,
         thing: str = "") -> tuple[str, dict[str, Any]]:
    """The item a refusal is written as: its name (time first, so that a sweep run reads only the new ones)
    and its data."""
    status = getattr(refusal, "status", None)
    data = {"at": now, "guid": guid, "event": event, "repository": repository, "reason": str(refusal)[:300],
            "said": said(refusal), "thing": thing[:300], "service": service_of(refusal),
            "status": status if isinstance(status, int) else 0}
    return f"{iso(now)}#{guid or 'no-guid'}"[:200], data


def record(store: Any, *, guid: str, event: str, repository: str, refusals: list[Permanent], now: float,
           thing: str = "") -> None:
    """Write one item for a delivery's refusals (the last names the reason; `service` every service that
    refused). A failed write is only logged: the delivery's error line still tells, and GitHub still
    lists the delivery among its failures."""
    name, data = item(guid=guid, event=event, repository=repository, refusal=refusals[-1], now=now, thing=thing)
    data["service"] = " ".join(sorted({service_of(r) for r in refusals}))
    try:
        store.save(Record(KEY, item=name), data, expires_at=int(now + TTL_SECONDS))
    except (Conflict, StoreUnavailable) as failure:
        logger.warning("refusal not recorded", extra={"guid": guid, "error": type(failure).__name__})
