"""Commands in the chat (SPEC §6, amended 2026-12-04): what an allowed user may ask pager by writing to it.

    /status                      what is red now and since when, releases waiting for 🔀 Merge, mutes (each
                                 with 🔔 Unmute), quiet hours, pager's own health (its last sweep, what needs the
                                 maintainer)
    /mute owner/name [duration]  its pages arrive without a sound for a while: 30m, 8h, 2d, 1w, 1h30m (default 8 h,
                                 at most 30 days); never lost. Answered with 🔔 Unmute
    /unmute owner/name           they buzz again
    /help                        these lines

The mute buttons come here too (`mute_press`, `unmute_press`): 🔕 on a message mutes its repository for 8 h,
or, on a contribution, only its thread (its contributions arrive without a sound, the rest of the repository
buzzes as ever); the answer says what it muted, until when and by whom, in a message with 🔔 Unmute, and 🔔
lets it buzz again.

A command is a message that starts with "/" (in a group, also `/status@botname`: one addressed to another
bot is ignored). In a group, a bot in privacy mode (Telegram's default) is sent a command without
`@botname` only when it was the last bot to post there (Bot API, "Privacy mode"): `/help` says to write
`/status@botname` where other bots are. Only `TELEGRAM_ALLOWED_USERS`, in the configured chat (or the supergroup Telegram moved it
to), are answered with anything but "not allowed", which changes nothing. Every answer is a reply to the
command, without a sound (Moment.ANSWER). A repository is known when GitHub says pager's app is installed
on it ("Get a repository" with the app's installation): an unknown one is named as unknown.

A command never takes Telegram's room from a page (pager.room): its answer, or "not allowed", is sent only when
the chat's room for commands allows (a few a minute, one at a time, "not allowed" once a minute whoever asks),
and gives way to the pages when Telegram's flood limit says no (`gives_way`: never waited out and sent again).
A command without room, or whose answer met the flood limit, is dropped without a word: the endpoint answers
200 and the log line says why.

A command acts once, like a press: it is settled on `command#<chat>#<message id>`, whose record keeps the
answer its act gave (and its buttons) and, once sent, that it was sent, so an update Telegram delivers again
(after a 500) acts on nothing again: it sends the answer still to send, or nothing.

`BOT_COMMANDS` (pager.chat's: the chat's menu) is what `pager setup` gives Telegram's setMyCommands in the
chat's scope (the menu a phone shows after "/" there, and in no other chat).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from . import attention_store, room
from .attention_store import MUTE_DEFAULT_SECONDS, MUTE_MAX_SECONDS, Mute, Thread
from .chat import BOT_COMMANDS
from .engine.effects import Buttons, Command, Posted, SendMessage, Step
from .engine.perform import perform as perform_effect
from .engine.settle import settle
from .errors import GitHubRefused, PagerError, Permanent, TelegramUnavailable, Transient
from .html import escape, link
from .services import Services
from .settings import REPOSITORY
from .signals import alarm, contribution, release
from .signals.messages import buttons_json
from .values import field, integer, text
from .waiting import SWEEP_KEY
from .words import duration, failure, local_time, plural

USAGE = {
    "mute": "usage: /mute owner/name [30m|8h|2d|1w|1h30m] (at most 30 days)",
    "unmute": "usage: /unmute owner/name",
}
NOT_ALLOWED = "not allowed"
COMMAND_TTL_SECONDS = 24 * 3600
COMMAND = re.compile(r"/([A-Za-z0-9_]{1,32})(?:@([A-Za-z0-9_]{1,64}))?(?![A-Za-z0-9_@])")
GITHUB_URL = re.compile(r"(?:https?://)?(?:www\.)?github\.com/([A-Za-z0-9_-]{1,39})/([A-Za-z0-9._-]{1,100})(?:/.*)?",
                        re.IGNORECASE)
DURATION_PART = re.compile(r"([0-9]{1,9})\s*(min|m|h|d|w)", re.IGNORECASE)  # any length: past 30 days, capped
DURATION = re.compile(rf"(?:\s*{DURATION_PART.pattern})+\s*", re.IGNORECASE)  # 30m, 8h, 1h30m, 1d 12h
UNIT_SECONDS = {"m": 60, "min": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
LISTED = 10  # red alarms, releases ready and mutes /status names of each; the rest are counted
SWEEP_LATE_SECONDS = 45 * 60  # three runs of the 15-minute schedule missing
UNMUTE_PREFIX = "unmute:"  # 🔔 Unmute of a repository: unmute:<repository id>
UNMUTE_THREAD_PREFIX = "unmute:t:"  # 🔔 Unmute of a thread: unmute:t:<repository id>:<i|p|d><number>


@dataclass(frozen=True)
class Reply:
    """An answer in the chat (HTML) with its buttons, if any (🔔 Unmute); `said`: the same in a few plain words,
    for the answer to a button press (answerCallbackQuery, at most 200 characters)."""

    text: str
    buttons: Buttons | None = None
    said: str = ""


@dataclass(frozen=True)
class Written:
    """A message someone wrote in a chat the bot is in, as much of it as a command needs."""

    text: str
    chat: str
    message_id: int
    user: int | None
    by: str

    @classmethod
    def of(cls, message: Mapping[str, Any]) -> Written | None:
        chat, message_id = field(message, "chat", "id"), message.get("message_id")
        if not isinstance(chat, int) or not isinstance(message_id, int):
            return None
        user = field(message, "from", "id")
        by = text(field(message, "from", "username"))
        by = f"@{by}" if by else text(field(message, "from", "first_name"))
        return cls(text(message.get("text")).strip(), str(chat), message_id, user if isinstance(user, int) else None, by)


def parse(text_: str, bot: str | None) -> tuple[str, list[str]] | None:
    """The command and its words; None for a message that is no command of this bot's (`bot`: its username,
    None when it is not known: then a command addressed to any bot counts)."""
    found = COMMAND.match(text_)
    if found is None:
        return None
    addressed = found.group(2)
    if addressed and bot is not None and addressed.lower() != bot.lower():
        return None
    return found.group(1).lower(), text_[found.end():].split()


def handle_message(message: Mapping[str, Any], services: Services, *, in_chat: bool, allowed: bool) -> str:
    """A message sent to the bot: a command of an allowed user in pager's chat is carried out and answered
    once; anyone else's is answered "not allowed", in the chat it came from, at most once a minute in that chat
    whoever asks (a crowd of strangers never fills pager's chat or its flood limit). Either only when the chat's
    room for commands allows (pager.room); without it, dropped without a word. The outcome for the log."""
    written = Written.of(message)
    if written is None:
        return "ignored: not a command"
    ignored = _ignored(message, written, services)
    if ignored is not None:
        return ignored
    command = Command(written.text, written.chat, written.message_id, written.by)
    if not (in_chat and allowed):
        return refuse(services, command)
    no_room = room.take(services, written.chat, written.message_id)
    if no_room:
        return f"dropped: {no_room}"
    return _carry_out(services, command)


def _ignored(message: Mapping[str, Any], written: Written, services: Services) -> str | None:
    """Why a message written in a chat is no command of this bot's, as the log says it (None: it is one)."""
    if not written.text.startswith("/") or COMMAND.match(written.text) is None:
        return "ignored: not a command"
    if message.get("forward_origin") is not None or message.get("is_automatic_forward"):
        return "ignored: forwarded"  # someone else's words (the Bot API's Message.forward_origin), not a command
    addressed = COMMAND.match(written.text)
    bot = services.telegram.bot_username() if addressed and addressed.group(2) else None  # asked only then
    if parse(written.text, bot) is None:
        return "ignored: a command for another bot"
    return None


def _carry_out(services: Services, command: Command) -> str:
    """An allowed command, carried out and answered once (its record `command#<chat>#<message id>`)."""
    key = f"command#{command.chat}#{command.message_id}"
    try:
        return settle(services, key, decide_command(command), ttl_seconds=COMMAND_TTL_SECONDS, wait=False,
                      perform=_perform).outcome
    except TelegramUnavailable as exc:
        if exc.status != 429:
            raise  # Telegram failing: 500, and Telegram sends the command again, which sends the answer
        return f"dropped: the answer met Telegram's flood limit ({exc})"
    except Permanent as exc:  # refused for good (a transient failure answers 500: Telegram sends it again)
        try:
            _reply(services, command, f"⚠️ {escape(failure(exc))}")
        except (Permanent, TelegramUnavailable):
            pass  # Telegram refuses the answer too, or has no room for it: the log line says why
        return f"refused: {exc}"


def refuse(services: Services, command: Command) -> str:
    """"not allowed", in the chat the command came from, when the chat's room allows it (once a minute there,
    whoever asks); nothing else happens, and nothing fails: a stranger's command is never worth a retry."""
    try:
        no_room = room.take(services, command.chat, command.message_id, not_allowed=True)
        if no_room:
            return f"not allowed (not said: {no_room})"
        _reply(services, command, NOT_ALLOWED)
    except Permanent as exc:  # a chat where the bot may not write, a person who blocked it: nothing to do
        return f"not allowed (the answer was refused: {exc})"
    except Transient as exc:  # the table or Telegram cannot now (its flood limit among it): not said
        return f"not allowed (not said: {exc})"
    return NOT_ALLOWED


def decide_command(command: Command):
    """A command acts once: its record keeps what it did (`said`, the answer to give) before the answer is sent,
    and the answer once sent, so that an update delivered again after a failed answer only sends the answer
    the act gave (an /unmute acted on already still says it unmuted), and one answered only says so."""

    def decide(record: dict[str, Any], now: float) -> Step:
        if isinstance(record.get("answer"), str):
            return Step("already answered")
        parsed = parse(command.text, None)
        outcome = f"answered /{parsed[0] if parsed else '?'}"
        said = record.get("said")
        if isinstance(said, str):
            reply = SendMessage(said, buttons_of(record.get("buttons")), notify=False, reply_to=command.message_id,
                                to=command.chat)
            return Step(outcome, effect=reply, then=lambda _: {"said": said, "answer": said})
        return Step("", effect=command, then=kept)  # the answer's step tells the outcome

    return decide


def kept(reply: Reply) -> dict[str, Any]:
    """How a record keeps an answer still to send: its text, and its buttons (as JSON has them)."""
    return {"said": reply.text, **({"buttons": buttons_json(reply.buttons)} if reply.buttons else {})}


def buttons_of(kept: Any) -> Buttons | None:
    """The buttons a record keeps (`kept`), as a message takes them."""
    if not isinstance(kept, list):
        return None
    return [[(str(label), str(data)) for label, data in row] for row in kept if isinstance(row, list)] or None


def _perform(services: Services, effect: Any) -> Any:
    """Carry out a command (its answer, to send next) or send the answer."""
    if isinstance(effect, Command):
        return act(effect, services)
    if isinstance(effect, SendMessage) and effect.to is not None:
        return _answer(services, effect)
    return perform_effect(services, effect)


def _reply(services: Services, command: Command, answer: str) -> None:
    """The answer, a reply to the command in its chat, without a sound (Moment.ANSWER)."""
    _answer(services, SendMessage(answer, notify=False, reply_to=command.message_id, to=command.chat))


def _answer(services: Services, effect: SendMessage) -> Posted:
    """An answer, in the chat the command came from, that gives way to the pages: Telegram's flood limit is
    raised at once (TelegramUnavailable, 429), never waited out and the answer sent again."""
    assert effect.to is not None, "an answer goes to the chat its command came from"
    return Posted(effect.to, services.telegram.send_message(effect.to, effect.text, buttons=effect.buttons,
                                                            notify=effect.notify, reply_to=effect.reply_to,
                                                            gives_way=True))


def act(command: Command, services: Services) -> Reply:
    """What a command does, and the answer to show."""
    parsed = parse(command.text, None)
    name, words = parsed if parsed else ("", [])
    now = services.now()
    if name == "status":
        return status(services, now)
    if name in ("mute", "unmute"):
        return mute(services, name, words, command.by, now)
    if name in ("help", "start"):
        return Reply(help_text(services))
    return Reply(f"unknown command /{escape(name)}: " + ", ".join(f"/{c}" for c, _ in BOT_COMMANDS))


# -- /help ------------------------------------------------------------------------------------------------


def help_text(services: Services) -> str:
    settings = services.settings
    lines = ["ℹ️ pager pages this chat for the fleet's repositories. Commands:"]
    lines += [f"/{command}: {escape(description)}" for command, description in BOT_COMMANDS]
    grace = settings.alarm_grace_minutes
    lines.append(f"A red default branch rings once it is still red after {grace} min, whatever rang before (once an "
                 "hour per repository at most); 👀 on it says you are on it, and it rings again only when something "
                 "new fails there.")
    if settings.buzz_gap_minutes:
        lines.append(f"After a call the phone rests {settings.buzz_gap_minutes} min: outsiders' contacts and releases "
                     "ready to merge meanwhile arrive silently and are called once when it ends.")
    else:
        lines.append("Outsiders' first contacts and releases ready to merge ring at once.")
    if settings.quiet:
        lines.append(f"Quiet hours {escape(settings.quiet_hours)} ({escape(settings.timezone)}): nothing buzzes, "
                     "and one call comes when they end.")
    lines.append("🔕 on a message mutes its repository for 8 h, or, on a contribution, only its thread; its answer "
                 "and /status offer 🔔 Unmute.")
    try:
        lines.append(f"Where other bots are, write a command to pager as /status@{escape(services.telegram.bot_username())}.")
    except PagerError:  # Telegram did not say the bot's name now: said without it
        lines.append("Where other bots are, write a command to pager with the bot's username: /status@ and its name.")
    return "\n".join(lines)


# -- /mute, /unmute ---------------------------------------------------------------------------------------


def seconds_of(word: str) -> int | None:
    """A duration as the command takes it (30m, 8h, 2d, 1w, or parts together: 1h30m, 1d 12h), in seconds;
    None when it is not one."""
    if DURATION.fullmatch(word) is None:
        return None
    return sum(int(n) * UNIT_SECONDS[unit.lower()] for n, unit in DURATION_PART.findall(word))


def repository_named(word: str) -> str:
    """A repository as a person may paste it: owner/name (a trailing slash too), or its address on GitHub
    (https://github.com/owner/name, with a trailing slash, a path below it, or `.git`), as owner/name."""
    word = word.strip()
    found = GITHUB_URL.fullmatch(word)
    if found is None:
        return word[:-1] if word.endswith("/") and REPOSITORY.fullmatch(word[:-1]) else word
    return f"{found.group(1)}/{found.group(2).removesuffix('.git')}"


def mute(services: Services, name: str, words: Sequence[str], by: str, now: float) -> Reply:
    words = [repository_named(words[0]), *words[1:]] if words else []
    asked = _asked_for(name, words)
    if asked is None:
        return Reply(USAGE[name])
    seconds, capped = asked
    try:
        repository = services.github.get_repository(words[0])
    except GitHubRefused as exc:
        if exc.status == 404:
            return Reply(f"unknown repository {escape(words[0])}: pager's app is not installed there")
        raise
    repository_id, full_name = integer(repository.get("id")), text(repository.get("full_name")) or words[0]
    if not repository_id:
        return Reply(f"unknown repository {escape(words[0])}")
    if name == "unmute":
        return Reply(escape(unmute(services, repository_id, full_name, now)))
    muted = Mute(repository_id, full_name, now + seconds, by)
    attention_store.set_mute(services, repository_id, full_name, muted.until, by)
    return Reply(muted_text(muted, f"muted for {duration(seconds)}{capped}", services.settings.zone, now),
                 [unmute_button(muted, here=True)])


def _asked_for(name: str, words: Sequence[str]) -> tuple[int, str] | None:
    """How long /mute asks for (the default when it names no duration; /unmute names none), and what the
    answer adds when that was more than the most; None when the words are not the command's (its usage)."""
    if not words or not REPOSITORY.fullmatch(words[0]) or (name == "unmute" and len(words) > 1):
        return None
    if len(words) == 1:
        return MUTE_DEFAULT_SECONDS, ""
    given = seconds_of(" ".join(words[1:]))  # "2 h" and "1d 12h" as well
    if given is None or given <= 0:
        return None
    return min(given, MUTE_MAX_SECONDS), " (at most 30 days)" if given > MUTE_MAX_SECONDS else ""


def mute_press(services: Services, repository_id: int, repository: str, by: str,
               thread: Thread | None = None) -> str | Reply:
    """🔕 on a message: mute its repository, or only its `thread`, for the default time (a longer mute already set
    stays). The answer says what is muted and until when, and its message in the chat offers 🔔 Unmute."""
    now = services.now()
    if not repository:
        return f"this {'thread' if thread else 'repository'} is no longer known"
    zone = services.settings.zone
    what = mute_name(repository, thread)
    current = attention_store.mute_of(services, repository_id, now, thread)
    if current is not None and current.until >= now + MUTE_DEFAULT_SECONDS:
        return Reply(muted_text(current, "is muted already", zone, now), [unmute_button(current, here=True)],
                     said=f"🔕 {what} is muted already, until {local_time(current.until, zone, now)}")
    muted = Mute(repository_id, repository, now + MUTE_DEFAULT_SECONDS, by, thread)
    attention_store.set_mute(services, repository_id, repository, muted.until, by, thread)
    return Reply(muted_text(muted, "muted for 8 h", zone, now), [unmute_button(muted, here=True)],
                 said=f"🔕 {what} muted for 8 h, until {local_time(muted.until, zone, now)}")


def unmute_press(services: Services, repository_id: int, thread: Thread | None = None) -> str:
    """🔔 Unmute: the repository, or the thread, buzzes again; one not muted (undone already, or ended) says so."""
    repository = attention_store.muted_name(services, repository_id, thread)
    if not repository:
        return f"this {'thread' if thread else 'repository'} is not muted"
    return unmute(services, repository_id, repository, services.now(), thread)


def unmute(services: Services, repository_id: int, repository: str, now: float, thread: Thread | None = None) -> str:
    """Let a repository or a thread buzz again; what to say (plain words)."""
    what = mute_name(repository, thread)
    if attention_store.mute_of(services, repository_id, now, thread) is None:
        return f"{what} was not muted"
    attention_store.set_mute(services, repository_id, repository, now, thread=thread)
    return f"🔔 {what} buzzes again"


def mute_name(repository: str, thread: Thread | None) -> str:
    """What a mute is of, as GitHub names it: owner/name, or owner/name#12 for a thread."""
    return f"{repository}#{thread[1]}" if thread else repository


def muted_text(muted: Mute, state: str, zone: tzinfo, now: float) -> str:
    """A mute's answer in the chat (HTML): what it mutes (a thread linked), its `state` ("muted for 8 h", "is
    muted already"), until when, by whom, and what that means."""
    by = f" (by {escape(muted.by)})" if muted.by else ""
    if muted.thread is None:
        what, means = escape(muted.repository), "its pages arrive without a sound"
    else:
        what = _thread_link(muted)
        means = f"its contributions arrive without a sound; the rest of {escape(muted.repository)} still buzzes"
    return f"🔕 {what} {state}, until {local_time(muted.until, zone, now)}{by}: {means}"


def _thread_link(muted: Mute) -> str:
    assert muted.thread is not None
    return link(contribution.thread_url(muted.repository, *muted.thread), mute_name(muted.repository, muted.thread))


def unmute_button(muted: Mute, *, here: bool = False) -> list[tuple[str, str]]:
    """🔔 Unmute of a mute (`here`: on its answer, where a thread is "this thread"); its data by the repository's
    id, which any name's length leaves within Telegram's 64 bytes."""
    if muted.thread is None:
        return [(f"🔔 Unmute {muted.repository}", f"{UNMUTE_PREFIX}{muted.repository_id}")]
    thing, number = muted.thread
    label = "this thread" if here else mute_name(muted.repository, muted.thread)
    return [(f"🔔 Unmute {label}", f"{UNMUTE_THREAD_PREFIX}{muted.repository_id}:{contribution.THINGS[thing]}{number}")]


# -- /status ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Status:
    """What /status shows, gathered."""

    red: Sequence[tuple[attention_store.Red, Mapping[str, Mapping[str, Any]]]]  # each red alarm and its open entries
    ready: Sequence[Mapping[str, Any]]  # release pull requests offered 🔀 Merge
    mutes: Sequence[Mute]  # repositories and threads muted
    swept_at: float | None  # pager's last sweep run
    health: Mapping[str, Mapping[str, Any]]  # pager's own open entries
    rest: tuple[tuple[float, float], int] | None = None  # the phone's rest now, and how many wait for its call
    fixes: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)  # a red alarm's fix 🛠 started, by its ref
    actions: str = ""  # the control repository's Actions, where a fix runs
    seen: Mapping[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)  # who said they look at it (👀), by ref


def status(services: Services, now: float) -> Reply:
    index = attention_store.index(services)
    red = [(r, alarm.shown_entries(alarm.Alarm(r.ref, r.repository), alarm.entries_now(services, r.ref)))
           for r in index.red if r.ref != alarm.CONTROL][:LISTED]
    heads = {r.ref: services.store.load(alarm.alarm_key(r.ref)).data for r, _ in red}
    fixes = {r.ref: fix for r, entries in red if (fix := alarm.live_fix(heads[r.ref].get("fix"), entries, now))}
    seen = {r.ref: ack for r, entries in red if (ack := alarm.seen_of(heads[r.ref], entries))}
    ready = list(release.ready_to_merge(services).values())
    swept = services.store.load(SWEEP_KEY, "deliveries").data.get("ran_at")
    control = alarm.control_alarm(services)
    health = alarm.shown_entries(control, alarm.entries_now(services, control.ref))
    gathered = Status(red, ready, attention_store.mutes(services, now, threads=True),
                      float(swept) if isinstance(swept, (int, float)) else None,
                      health, attention_store.rest_now(services, now), fixes, alarm.actions_url(services), seen)
    rendered = render_status(gathered, services.settings, now, len([r for r in index.red if r.ref != alarm.CONTROL]))
    return Reply(rendered, [unmute_button(muted) for muted in gathered.mutes[:LISTED]] or None)


def render_status(s: Status, settings: Any, now: float, red_count: int) -> str:
    """/status: its first line, then pager's own health and quiet hours (short, and never cut), then the
    lists, each at most LISTED long with how many more, so that the answer fits one message."""
    zone: tzinfo = settings.zone
    lines = [f"📋 pager at {local_time(now, zone, now)}: " + (plural(red_count, "repository", "repositories") + " red"
                                                              if red_count else "nothing is red"),
             _health_line(s, zone, now)]
    quiet = _quiet_lines(settings, now)  # with none set, said last: the least a person needs to read
    lines += (quiet if settings.quiet else []) + _rest_lines(s, settings, now)
    lines += [_red_line(red, entries, zone, now) + _red_state(s, red.ref, zone, now)
              for red, entries in s.red[:LISTED]] + _more(red_count, "red")
    lines += [_ready_line(pull) for pull in s.ready[:LISTED]] + _more(len(s.ready), "ready to merge")
    lines += [_muted_line(muted, zone, now) for muted in s.mutes[:LISTED]] + _more(len(s.mutes), "muted")
    return "\n".join(lines + ([] if settings.quiet else quiet))


def _red_state(s: Status, ref: str, zone: tzinfo, now: float) -> str:
    """What is being done about a red alarm: a fix under way, someone looking at it (👀)."""
    said = ([alarm.fix_said(s.fixes[ref], zone, now, s.actions)] if ref in s.fixes else []) + (
        [alarm.seen_said(s.seen[ref], zone)] if ref in s.seen else [])
    return "".join(f" · {part}" for part in said)


def _health_line(s: Status, zone: tzinfo, now: float) -> str:
    """pager's own health: its last sweep (late when three runs of the 15-minute schedule are missing: a
    failing or disabled schedule redelivers nothing), and what needs the maintainer most (with how many more)."""
    swept = f"last sweep {local_time(s.swept_at, zone, now)}" if s.swept_at else "no sweep has run yet"
    if s.swept_at and now - s.swept_at > SWEEP_LATE_SECONDS:
        swept = f"⚠️ {swept}, {duration(now - s.swept_at)} ago: it runs every 15 min, and nothing failed comes back without it"
    if not s.health:
        return f"⚙️ pager: {swept}" + ("" if swept.startswith("⚠️") else "; all well")
    top = alarm.by_importance(s.health)[0]
    return (f"⚙️ pager: {swept}; needs you: {escape(str(s.health[top].get('title') or top)[:300])}"
            + (f", and {len(s.health) - 1} more" if len(s.health) > 1 else ""))


def _quiet_lines(settings: Any, now: float) -> list[str]:
    """Quiet hours: now until when, or when they next begin; or that there are none (and how to have some)."""
    quiet = settings.quiet
    if quiet is None:
        return ["🌙 no quiet hours: what needs you buzzes day and night (the QuietHours setting, such as 22:00-07:00, sets some)"]
    zone: tzinfo = settings.zone
    period = quiet.period(now)
    when = (f"now, until {local_time(period[1], zone, now)}" if period
            else f"next from {local_time(quiet.next_start(now), zone, now)}")
    return [f"🌙 quiet hours {escape(settings.quiet_hours)} ({escape(settings.timezone)}): {when}"]


def _rest_lines(s: Status, settings: Any, now: float) -> list[str]:
    """The phone's rest, when it rests: until when, and how many things wait for the call at its end."""
    if s.rest is None:
        return []
    (_, end), waiting = s.rest
    return [f"📵 the phone rests until {local_time(end, settings.zone, now)}: "
            + (f"{plural(waiting, 'thing')} kept for its call" if waiting else "nothing kept for a call")]


def _red_line(red: attention_store.Red, entries: Mapping[str, Mapping[str, Any]], zone: tzinfo, now: float) -> str:
    """A red alarm: its repository, linked to what fails most (`alarm.failing_url`), since when, and its most
    important open entry (with how many more)."""
    top = alarm.by_importance(entries)[0] if entries else ""
    what = f": {escape(str(entries[top].get('title') or top)[:200])}" if top else ""
    more = f", and {len(entries) - 1} more" if len(entries) > 1 else ""
    return (f"🚨 {link(alarm.failing_url(entries, red.repository), red.repository)} since "
            f"{local_time(red.since, zone, now)}{what}{more}")


def _ready_line(pull: Mapping[str, Any]) -> str:
    """A release pull request offered 🔀 Merge."""
    ref = f"{pull.get('repository')}#{pull.get('number')}"
    title = f": {escape(str(pull.get('title'))[:200])}" if pull.get("title") else ""
    return f"🔀 ready to merge: {link(str(pull.get('url') or ''), ref)}{title}"


def _muted_line(muted: Mute, zone: tzinfo, now: float) -> str:
    """A muted repository or thread: until when, by whom, and, for a repository, its command to undo it (each
    has its 🔔 below the answer too)."""
    what = escape(muted.repository) if muted.thread is None else _thread_link(muted)
    undo = f" · /unmute {escape(muted.repository)}" if muted.thread is None else ""
    return (f"🔕 {what} muted until {local_time(muted.until, zone, now)}"
            + (f" (by {escape(muted.by)})" if muted.by else "") + undo)


def _more(count: int, what: str) -> list[str]:
    return [f"… and {count - LISTED} more {what}"] if count > LISTED else []
