"""Text for Telegram's HTML parse mode: user text escaped, links, and a cut that keeps the markup whole.

Telegram's HTML parse mode (core.telegram.org/bots/api#html-style) takes a few tags and the entities
`&lt;`, `&gt;`, `&amp;`, `&quot;`; a bare `<`, `>` or `&` anywhere else is refused with 400 "can't parse
entities". A message is at most 4096 characters once the entities are parsed. Pure: no I/O, no
dependency beyond the standard library, so the signals can format messages without the client.
"""

from __future__ import annotations

import html
import re

MAX_TEXT = 4096  # characters of a message after entity parsing
ELLIPSIS = "…"


def escape(text: str) -> str:
    """User text made safe for Telegram's HTML parse mode."""
    return html.escape(text, quote=False)


def link(url: str, label: str) -> str:
    """An HTML link with its label escaped and its URL safe inside the double-quoted href."""
    href = html.escape(url, quote=False).replace('"', "&quot;")
    return f'<a href="{href}">{escape(label)}</a>'


# A tag, an entity, or any single character (a stray "<" or "&" counts as text).
_TOKEN = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^<>]*>|&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);|.", re.S)


def _visible_length(text: str) -> int:
    """Length as Telegram counts it, in UTF-16 code units (the larger of the two readings)."""
    return len(text.encode("utf-16-le")) // 2


# The same tokens, with a run of plain text as one (what `visible_length` counts needs no finer cut).
_RUNS = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)\b[^<>]*>|&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z]+);|[^<&]+|.", re.S)


def visible_length(text: str) -> int:
    """How long Telegram counts HTML text: tags left out, entities as their character, in UTF-16 code units."""
    return sum(_visible_length(html.unescape(m.group(0))) for m in _RUNS.finditer(text) if m.group(2) is None)


def cut(text: str, limit: int = MAX_TEXT) -> str:
    """HTML text that Telegram accepts: at most `limit` characters once tags and entities are parsed.

    A longer text is cut between tags and entities (never inside one), ends with "…", and closes the
    tags still open at the cut, so that the result is well-formed HTML.
    """
    if visible_length(text) <= limit:
        return text
    tokens = [(m.group(0), m.group(1), m.group(2)) for m in _TOKEN.finditer(text)]
    kept: list[str] = []
    open_tags: list[str] = []
    used = 0
    room = limit - _visible_length(ELLIPSIS)
    for token, closing, name in tokens:
        if name is not None:
            if closing:
                if name.lower() in open_tags:
                    while open_tags and open_tags.pop() != name.lower():
                        pass
            else:
                open_tags.append(name.lower())
            kept.append(token)
            continue
        size = _visible_length(html.unescape(token))
        if used + size > room:
            break
        kept.append(token)
        used += size
    return "".join(kept) + ELLIPSIS + "".join(f"</{name}>" for name in reversed(open_tags))
