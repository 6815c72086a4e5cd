"""Commands in the chat (SPEC §6, amended 2026-12-04): what an allowed user may ask pager by writing to it.

    /status                      what is red now and since when, releases waiting for 🔀 Merge, mutes,
                                 quiet hours, pager's own health
    /mute owner/name [duration]  its pages arrive without a sound for a while (default 8 h, at most 30 days)
    /unmute owner/name           they buzz again
    /help                        these lines

`BOT_COMMANDS` is what `pager setup` gives Telegram's setMyCommands (the menu a phone shows after "/").
"""

from __future__ import annotations

# (command, description): setMyCommands takes 1-32 characters of a-z, 0-9 and _ and a description of
# 1-256 characters (the Bot API's BotCommand).
BOT_COMMANDS: tuple[tuple[str, str], ...] = (
    ("status", "What is red now, releases waiting for Merge, mutes and pager's own health"),
    ("mute", "Silence a repository for a while: /mute owner/name 8h"),
    ("unmute", "Let a muted repository buzz again: /unmute owner/name"),
    ("help", "What pager can do here"),
)
