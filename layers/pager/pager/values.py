"""Reading values out of GitHub's JSON, and times in GitHub's form: one helper for each small thing.

All of it is pure. GitHub writes times as ISO 8601 in UTC (`2026-12-02T08:00:00Z`); pager keeps them
in the same form, to the second, so that two of them compare as strings in time order.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any


def field(payload: Any, *path: str) -> Any:
    """A nested field of a payload, None when any step of the way is missing or not an object."""
    current = payload
    for name in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(name)
    return current


def text(value: Any) -> str:
    """A string, or "" for anything else."""
    return value if isinstance(value, str) else ""


def integer(value: Any) -> int:
    """An integer (never a bool), or 0 for anything else."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def iso(epoch: float) -> str:
    """Epoch seconds as GitHub writes a time: UTC, to the second."""
    return datetime.fromtimestamp(epoch, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(value: Any) -> float | None:
    """Epoch seconds of an ISO 8601 time (a time without a zone is UTC); None when unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed.timestamp()


def order_of_time(value: Any) -> str:
    """An order key from an ISO 8601 time, comparable as a string; "" (before every real one) when unreadable."""
    epoch = parse_iso(value)
    return "" if epoch is None else iso(epoch)


def newest(*orders: Any) -> str:
    """The greatest of some order keys ("" when none is a string)."""
    return max((o for o in orders if isinstance(o, str)), default="")
