"""What the operator's commands print: lines, checks, and never a secret.

The commands never format a secret into a line; as a second guard, every secret they come to know is
registered with `hide`, and a line that holds one anyway is printed with it masked; `hide` registers it
with `pager.redact` too, so that no log line (a library's at DEBUG among them) shows it either.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TextIO

from pager import redact

MASK = "‹hidden›"
MIN_SECRET = 8  # shorter values (ids, "0") are never masked: they would mask ordinary text


class Console:
    def __init__(self, out: TextIO, ask: Callable[[str], str] | None = None) -> None:
        self._out = out
        self._ask = ask
        self._secrets: set[str] = set()

    def hide(self, *values: str | None) -> None:
        redact.register(*values)  # nor in any log line (pager.redact)
        for value in values:
            if value and len(value) >= MIN_SECRET:
                self._secrets.add(value)
                if "\n" in value:  # a PEM key: each of its lines too
                    self._secrets.update(line for line in value.splitlines() if len(line) >= MIN_SECRET)

    def clean(self, text: str) -> str:
        for value in sorted(self._secrets, key=len, reverse=True):
            text = text.replace(value, MASK)
        return text

    def line(self, text: str = "") -> None:
        self._out.write(self.clean(text) + "\n")
        self._out.flush()

    def done(self, text: str) -> None:
        self.line(f"✓ {text}")

    def doing(self, text: str) -> None:
        self.line(f"→ {text}")

    def failed(self, text: str, fix: str = "") -> None:
        self.line(f"✗ {text}")
        if fix:
            self.line(f"    fix: {fix}")

    def ask(self, question: str) -> str:
        if self._ask is None:
            return ""
        return self._ask(self.clean(question)).strip()
