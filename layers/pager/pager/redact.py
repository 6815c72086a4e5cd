"""No log record carries a secret, whichever logger made it and whichever handler writes it.

`install()` (called when `pager.observe` is imported, which every entry point does first) wraps
logging's record factory. Every `LogRecord` of every logger, pager's, urllib3's, botocore's, requests'
or the root's, is made by that factory (`logging.Logger.makeRecord` calls it), before any filter or
handler sees it; handlers added later (Lambda's runtime, Powertools, a test's, a user's) can only
read records made there. A filter would not do: a logger's filters do not see what its children
propagate, and a handler's filters only cover the handlers known when they are added. What the
factory does to a record:

- the message is formatted (`msg % args`) and redacted; a dict message (Powertools' structured
  logs) is redacted key by key;
- an exception whose text (its message, its notes, its causes') holds a secret is replaced by a
  stand-in of the same name and traceback whose message is redacted, so that every formatter
  (logging's, Powertools', Lambda's JSON one) prints the redacted text; a stack is redacted too;
- the `extra=` fields, which `makeRecord` writes into the record's `__dict__` after the factory
  returned it, are redacted as they are written: the record's `__dict__` is a dict that redacts what
  is stored into it.

What is redacted (`redact`): the secrets registered with `register` (pager's settings, by
`pager.settings`; what `pager setup` and `pager doctor` learn, by their console), as they are and
URL- or JSON-escaped; and by their form: a Telegram bot token (in a URL `/bot<token>/`, also
URL-encoded, with any length; elsewhere `<digits>:<30 or more of A-Za-z0-9_->`), JWTs, GitHub's
tokens (`ghs_`, `ghp_`, `gho_`, `ghu_`, `ghr_`, `github_pat_`), the value of an `Authorization`
header and a Bearer credential, webhook signatures (`sha256=`, `sha1=`), Telegram's secret token
(its header `X-Telegram-Bot-Api-Secret-Token`, setWebhook's `secret_token`), the value of a
setting or field whose name says secret, token, password or key, and private keys in PEM form. Each
becomes `[redacted]`, the rest of the line left as it was (`POST /bot[redacted]/sendMessage`).

`http.client` prints its debug output (`HTTPConnection.debuglevel`, the request's headers with the
`Authorization` among them) with `print`, outside logging: once it is imported by pager's clients,
its `print` is one that redacts the same way (`cover_http_client`).

The cost: a message with nothing to redact is scanned once by one compiled expression and for each
registered value; most of pager's lines are short and hold none.
"""

from __future__ import annotations

import builtins
import json
import logging
import re
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

__all__ = ["MARK", "SECRET_NAMES", "register", "redact", "redact_value", "install", "installed", "cover_http_client"]

MARK = "[redacted]"
MIN_SECRET = 8  # shorter registered values are not redacted by value: they would hide ordinary words
KEEP_SECRETS = 32  # registered values kept, the newest: a warm container's settings and their rotations
DEPTH = 8  # how deep nested fields are redacted

_VALUE = r"""[^\s"'\\,;&<>()\[\]{}]"""  # a character of a field's value, up to the field's end
_SEPARATOR = r"""["'\\]*\s*[:=]\s*["'\\]*"""  # between a name and its value: `: `, `=`, `": "`, `\\": \\"`


class _Rule:
    """A form of secret: the words a text must hold for it to be looked for (lowercased), the expression
    (compiled on first use: most never are in a container's life) and its replacement."""

    __slots__ = ("words", "source", "replacement", "flags", "_pattern")

    def __init__(self, words: tuple[str, ...], source: str, replacement: str = MARK, flags: int = 0) -> None:
        self.words, self.source, self.replacement, self.flags = words, source, replacement, flags
        self._pattern: re.Pattern[str] | None = None

    def sub(self, text: str) -> str:
        if self._pattern is None:
            self._pattern = re.compile(self.source, self.flags)
        return self._pattern.sub(self.replacement, text)


KEEP = r"\1" + MARK  # the name or the scheme kept, the value redacted

# Applied in this order. A rule's words are looked for first (a substring search is far cheaper than a
# scan by an expression): most lines hold none of them, and only the rules whose words a line holds scan
# it. A leading lookahead of the first letters lets an expression skip to where it can start (one wholly
# case-insensitive would try every position).
_RULES: tuple[_Rule, ...] = (
    # a private key in PEM form, to its end (to the end of the text when it was cut)
    _Rule(("-----begin",), r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY-----|\Z)",
          flags=re.DOTALL),
    # an Authorization header's value after its scheme, to the end of the line or the quote
    _Rule(("authoriz",), r"(\b(?=[aApP])(?i:(?:proxy-)?authorization)" + _SEPARATOR
          + r"(?:(?i:bearer|token|basic|digest)\s+)?)[^\"'\\\r\n]+", KEEP),
    _Rule(("bearer",), r"(\b(?=[bB])(?i:bearer)\s+)[A-Za-z0-9._~+/-]{8,}=*", KEEP),
    # Telegram's secret token, in its header and in setWebhook's parameter, whatever its length
    _Rule(("secret",), r"(\b(?=[xXsS])(?i:x-telegram-bot-api-secret-token|secret_token)" + _SEPARATOR
          + r")[A-Za-z0-9_-]+", KEEP),
    # a field whose name says what it holds (TELEGRAM_WEBHOOK_SECRET=…, "token": "…", x-amz-security-token: …):
    # a value with a digit and 8 characters, or of 16 (not a word such as "missing")
    _Rule(("secret", "token", "passw", "private", "api_key", "apikey", "api-key"),
          r"((?=[sStTpPaA])(?i:secret|token|passw(?:or)?d|private_?key|api_?key)[A-Za-z0-9_-]*" + _SEPARATOR
          + r")(?:(?=" + _VALUE + r"*[0-9])" + _VALUE + r"{8,}|" + _VALUE + r"{16,})", KEEP),
    # a Telegram bot token in a Bot API URL (/bot<token>/method, also URL-encoded), whatever its length
    _Rule(("/bot", "%2fbot"), r"(?:(?<=/bot)|(?<=%2[Ff]bot))[0-9]+(?::|%3[Aa])[A-Za-z0-9_-]+"),
    # a bot token anywhere else: BotFather's are the bot's id, a colon and 35 characters
    _Rule((":", "%3a"), r"(?<![A-Za-z0-9_-])[0-9]{3,}(?::|%3[Aa])[A-Za-z0-9_-]{30,}"),
    _Rule(("eyj",), r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # a JWT (the app's)
    _Rule(("ghp_", "ghs_", "gho_", "ghu_", "ghr_", "github_pat_"),  # GitHub's tokens
          r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,})"),
    _Rule(("sha1=", "sha256="), r"(\b(?=[sS])(?i:sha(?:1|256))=)[0-9a-fA-F]{40,64}\b", KEEP),  # X-Hub-Signature(-256)
)
# The names of fields whose whole value is a secret (in a dict message or an `extra=` field): headers
# such as X-Hub-Signature-256 and X-Telegram-Bot-Api-Secret-Token, settings, bodies' fields.
SECRET_NAMES = ("authoriz", "secret", "token", "passw", "signature", "private_key", "privatekey", "api_key", "apikey",
                "cookie")
_secret_name: dict[str, bool] = {}  # a field's name -> whether it is one of those (names are few)

_lock = threading.Lock()
_registered: OrderedDict[str, tuple[str, ...]] = OrderedDict()  # a value -> the forms it is redacted in
_forms: tuple[str, ...] = ()  # all of them, the longest first


def register(*values: str | None) -> None:
    """Redact these values wherever they appear (pager's secrets, once read); each as it is, URL-encoded
    and JSON-escaped. Values shorter than `MIN_SECRET` are left out."""
    global _forms
    with _lock:
        changed = False
        for value in values:
            if not isinstance(value, str) or len(value.strip()) < MIN_SECRET:
                continue
            if value in _registered:
                _registered.move_to_end(value)
                continue
            _registered[value] = tuple({value, quote(value, safe=""), json.dumps(value)[1:-1]})
            changed = True
            while len(_registered) > KEEP_SECRETS:
                _registered.popitem(last=False)
        if changed:
            _forms = tuple(sorted({form for forms in _registered.values() for form in forms}, key=len, reverse=True))


def redact(text: str) -> str:
    """`text` with every secret replaced by `MARK`."""
    if len(text) < MIN_SECRET:
        return text
    lowered = text.lower()  # what a replacement takes out only makes a later rule look in vain
    for rule in _RULES:
        for word in rule.words:
            if word in lowered:
                text = rule.sub(text)
                break
    # The registered values after the forms: a value that is part of a form (a key's first line, say) would
    # otherwise take away what the form is known by, and leave the rest of it.
    for form in _forms:
        if form in text:
            text = text.replace(form, MARK)
    return text


def _is_secret_name(name: str) -> bool:
    known = _secret_name.get(name)
    if known is None:
        lowered = name.lower()
        known = any(word in lowered for word in SECRET_NAMES)
        if len(_secret_name) < 1000:
            _secret_name[name] = known
    return known


def redact_value(value: Any, name: str = "", depth: int = 0) -> Any:
    """A field's value with its secrets redacted: text redacted, a container redacted item by item (the
    whole value of a key named as a secret), anything else whose text holds a secret replaced by that
    text redacted. The value itself when nothing was redacted."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, str):
        if name and value and _is_secret_name(name):
            return MARK
        return redact(value)
    if depth < DEPTH and isinstance(value, (Mapping, list, tuple)):
        return _redact_items(value, name, depth)
    try:
        text = str(value)
    except Exception:
        return value
    clean = redact(text)
    return value if clean == text else clean


def _redact_items(value: Mapping[Any, Any] | list[Any] | tuple[Any, ...], name: str, depth: int) -> Any:
    """A dict, list or tuple redacted item by item (a new one only when an item changed)."""
    if isinstance(value, Mapping):
        items = {key: redact_value(item, str(key), depth + 1) for key, item in value.items()}
        return value if all(items[key] is item for key, item in value.items()) else items
    redacted = [redact_value(item, name, depth + 1) for item in value]
    if all(new is old for new, old in zip(redacted, value, strict=True)):
        return value
    return redacted if isinstance(value, list) else tuple(redacted)


# -- the record factory --------------------------------------------------------------------------------


class _Fields(dict):  # type: ignore[type-arg]
    """A record's `__dict__`: `Logger.makeRecord` writes each `extra=` field into it by subscript, after
    the factory made the record; each is redacted as it is written."""

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, redact_value(value, key))


_stand_ins: dict[type, type[Exception]] = {}


def _stand_in_class(cls: type) -> type[Exception]:
    """An exception class named as `cls` (its module and qualified name), whose text is its message."""
    made = _stand_ins.get(cls)
    if made is None:
        made = type(cls.__name__, (Exception,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
                                                 "__doc__": "an exception whose text was redacted (pager.redact)"})
        _stand_ins[cls] = made
    return made


def _text_of(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:
        return "<exception str() failed>"


def _notes_of(exc: BaseException) -> list[str]:
    notes = getattr(exc, "__notes__", None)
    return [str(note) for note in notes] if isinstance(notes, list) else []


def _clean_exception(exc: BaseException, depth: int = 0) -> BaseException | None:
    """A stand-in for `exc` whose text and chain are redacted; None when they hold nothing to redact."""
    if depth >= DEPTH:
        return None
    cause = exc.__cause__
    context = exc.__context__
    clean_cause = _clean_exception(cause, depth + 1) if cause is not None else None
    clean_context = clean_cause if context is cause else (
        _clean_exception(context, depth + 1) if context is not None else None)
    text, notes = _text_of(exc), _notes_of(exc)
    clean_text, clean_notes = redact(text), [redact(note) for note in notes]
    if clean_text == text and clean_notes == notes and clean_cause is None and clean_context is None:
        return None
    stand_in = _stand_in_class(type(exc))(clean_text)
    stand_in.__traceback__ = exc.__traceback__
    stand_in.__cause__ = clean_cause or cause
    stand_in.__context__ = clean_context or context
    stand_in.__suppress_context__ = exc.__suppress_context__
    if clean_notes:
        stand_in.__notes__ = clean_notes  # type: ignore[attr-defined]
    return stand_in


def _redact_message(record: logging.LogRecord) -> None:
    if isinstance(record.msg, Mapping) and not record.args:  # Powertools' structured message
        record.msg = redact_value(record.msg)
        return
    try:
        text = record.getMessage()
    except Exception:  # arguments that do not fit: the handler reports them, redacted
        record.msg, record.args = redact_value(record.msg), redact_value(record.args)
        return
    clean = redact(text)
    if clean != text:
        record.msg, record.args = clean, ()


def _redact_record(record: logging.LogRecord) -> None:
    record.__dict__ = _Fields(record.__dict__)  # first: the fields are redacted whatever happens below
    try:
        _redact_message(record)
        if record.exc_info and isinstance(record.exc_info, tuple) and record.exc_info[1] is not None:
            stand_in = _clean_exception(record.exc_info[1])
            if stand_in is not None:
                record.exc_info, record.exc_text = (type(stand_in), stand_in, stand_in.__traceback__), None
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
    except Exception as exc:  # a line that could not be redacted is not written as it was
        record.msg, record.args = f"{MARK} (this line's redaction failed: {type(exc).__name__})", ()
        record.exc_info = record.exc_text = record.stack_info = None


class _Factory:
    """logging's record factory: the one before it (`wrapped`), then the redaction."""

    redacts = True

    def __init__(self, wrapped: Callable[..., logging.LogRecord]) -> None:
        self.wrapped = wrapped

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record = self.wrapped(*args, **kwargs)
        _redact_record(record)
        return record


def installed() -> bool:
    """Whether logging's record factory, or one it wraps, is pager's."""
    factory: Any = logging.getLogRecordFactory()
    while factory is not None:
        if getattr(factory, "redacts", False) is True:
            return True
        factory = getattr(factory, "wrapped", None) or getattr(factory, "__wrapped__", None)
    return False


def install() -> None:
    """Redact every log record from now on (once; a factory set before is wrapped, not replaced)."""
    if not installed():
        logging.setLogRecordFactory(_Factory(logging.getLogRecordFactory()))
    if "http.client" in sys.modules:
        cover_http_client()


# -- http.client's debug output ------------------------------------------------------------------------


class _Print:
    """`print` for `http.client`'s debug output (`send: b'…Authorization: Bearer …'`), redacted."""

    redacts = True

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        builtins.print(*(redact(str(arg)) for arg in args), **kwargs)


def cover_http_client() -> None:
    """Make `http.client`'s debug output redacted (pager's clients call this when they import requests)."""
    import http.client

    if not getattr(getattr(http.client, "print", None), "redacts", False):
        setattr(http.client, "print", _Print())  # noqa: B010 (a module's global, shadowing the builtin)
