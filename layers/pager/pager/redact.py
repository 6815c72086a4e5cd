"""No log record carries a secret, whichever logger made it and whichever handler writes it.

`install()` (called when `pager.observe` is imported, which every entry point does first) wraps
logging's record factory. Every `LogRecord` of every logger, pager's, urllib3's, botocore's, requests'
or the root's, is made by that factory (`logging.Logger.makeRecord` calls it), before any filter or
handler sees it; handlers added later (Lambda's runtime, Powertools, a test's, a user's) can only
read records made there. A filter would not do: a logger's filters do not see what its children
propagate, and a handler's filters only cover the handlers known when they are added. What is done to
a record:

- the message is formatted (`msg % args`) and redacted; a dict message (Powertools' structured
  logs) is redacted key by key, its keys as well as its values;
- an exception whose text (its message, its notes, its causes', a group's sub-exceptions') holds a
  secret is replaced by a stand-in of the same name and traceback whose message is redacted, so that
  every formatter (logging's, Powertools', Lambda's JSON one) prints the redacted text; a chain is
  shown DEPTH causes deep, no deeper; a stack is redacted too;
- the `extra=` fields, which `makeRecord` writes into the record's `__dict__` after the factory
  returned it: `install()` also wraps `logging.Logger.makeRecord` (`_make_record`), which redacts them
  before the `makeRecord` it wraps writes them. A record made any other way (a logger class with a
  `makeRecord` of its own, the factory called directly) gets a `__dict__` that redacts what is stored
  into it (`_Fields`).

What is redacted (`redact`): the secrets registered with `register` (pager's settings, by
`pager.settings`; what `pager setup` and `pager doctor` learn, by their console), as they are and
URL- or JSON-escaped; and by their form: a Telegram bot token (in a URL `/bot<token>/`, also
URL-encoded, with any length; elsewhere `<digits>:<30 or more of A-Za-z0-9_->`), JWTs, GitHub's
tokens (`ghs_`, `ghp_`, `gho_`, `ghu_`, `ghr_`, `github_pat_`), the value of an `Authorization`
header and a Bearer credential, webhook signatures (`sha256=`, `sha1=`), Telegram's secret token
(its header `X-Telegram-Bot-Api-Secret-Token`, setWebhook's `secret_token`), the value of a
setting or field whose name says secret, token, password or key (AWS's `X-Amz-Security-Token`,
`aws_secret_access_key`, `AWS_SECRET_ACCESS_KEY`, `"SecretAccessKey"`, STS's `<SessionToken>` among
them), AWS's request signatures (`Credential=`, `Signature=`, a presigned URL's `X-Amz-Signature=`),
and private keys in PEM form. A field's value may be bytes (`'X-Amz-Security-Token': b'…'`, as
botocore prints a request's headers). Each becomes `[redacted]`, the rest of the line left as it
was (`POST /bot[redacted]/sendMessage`, `'Authorization': b'[redacted]'`).

Outside logging: `http.client` prints its debug output (`HTTPConnection.debuglevel`, the request's
headers with the `Authorization` among them) with `print`: once it is imported by pager's clients, its
`print` is one that redacts the same way (`cover_http_client`). `warnings` writes what it shows to
stderr: it is made a record of logging's instead (`cover_warnings`), redacted as every record.

The cost, on every line: an ignored delivery's line (its message and seven fields) adds a few
microseconds to the record logging makes. A text is looked at once: a short one found to hold nothing
is remembered (until a secret is registered), a text of letters, digits and hyphens alone (a
delivery's id) is only looked for the registered values, and any other is looked for the words of
every form at once before any expression scans it. Fields of known names whose values are numbers or
texts already seen are passed over after a look or two.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import logging
import re
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import quote

__all__ = ["MARK", "SECRET_NAMES", "register", "redact", "redact_value", "install", "installed", "cover_http_client",
           "cover_warnings"]

MARK = "[redacted]"
MIN_SECRET = 8  # shorter registered values are not redacted by value: they would hide ordinary words
KEEP_SECRETS = 32  # registered values kept, the newest: a warm container's settings and their rotations
DEPTH = 8  # how deep nested fields are redacted
NAME_REST = 64  # a field's name around the word that says it is secret (SECRET_ACCESS_KEY, x-amz-security-token)
_NAME_REST = r"[A-Za-z0-9_-]{0," + str(NAME_REST) + "}"

_VALUE = r"""[^\s"'\\,;&<>()\[\]{}]"""  # a character of a field's value, up to the field's end
# Between a name and its value: `: `, `=`, `": "`, `\\": \\"`, and a bytes value's prefix (`': b'`, as botocore
# prints a request's headers).
_SEPARATOR = r"""["'\\]*\s*[:=]\s*(?:b(?=["'\\]))?["'\\]*"""
# A value worth redacting: with a digit and 8 characters, or of 16 (not a word such as "missing" or "invalid").
_SECRET_VALUE = r"(?:(?=" + _VALUE + r"*[0-9])" + _VALUE + r"{8,}|" + _VALUE + r"{16,})"


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
    # a value with a digit and 8 characters, or of 16 (not a word such as "missing"). The rest of a name is
    # at most NAME_REST long: unbounded, a long run of "token_token_…" (a header anyone may send) took
    # quadratic time, each "token" in it scanning the whole run.
    _Rule(("secret", "token", "passw", "private", "api_key", "apikey", "api-key"),
          r"((?=[sStTpPaA])(?i:secret|token|passw(?:or)?d|private_?key|api_?key)" + _NAME_REST
          + _SEPARATOR + r")" + _SECRET_VALUE, KEEP),
    # the same in an XML element (AWS STS's answers: <SecretAccessKey>, <SessionToken>)
    _Rule(("secret", "token", "passw"),
          r"(<[A-Za-z0-9_:.-]{0," + str(NAME_REST) + r"}(?=[sStTpP])(?i:secret|token|passw(?:or)?d)[A-Za-z0-9_.-]{0,"
          + str(NAME_REST) + r"}>)" + _SECRET_VALUE, KEEP),
    # a Telegram bot token in a Bot API URL (/bot<token>/method, also URL-encoded), whatever its length
    _Rule(("/bot", "%2fbot"), r"(?:(?<=/bot)|(?<=%2[Ff]bot))[0-9]+(?::|%3[Aa])[A-Za-z0-9_-]+"),
    # a bot token anywhere else: BotFather's are the bot's id, a colon and 35 characters
    _Rule((":", "%3a"), r"(?<![A-Za-z0-9_-])[0-9]{3,}(?::|%3[Aa])[A-Za-z0-9_-]{30,}"),
    _Rule(("eyj",), r"eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),  # a JWT (the app's)
    _Rule(("ghp_", "ghs_", "gho_", "ghu_", "ghr_", "github_pat_"),  # GitHub's tokens
          r"\b(?:gh[pousr]_[A-Za-z0-9]{16,}|github_pat_[A-Za-z0-9_]{16,})"),
    _Rule(("sha1=", "sha256="), r"(\b(?=[sS])(?i:sha(?:1|256))=)[0-9a-fA-F]{40,64}\b", KEEP),  # X-Hub-Signature(-256)
    # AWS's request signatures: an Authorization header's `Credential=` and `Signature=` where the header's name
    # is not on the line, a presigned URL's `X-Amz-Credential=` and `X-Amz-Signature=`, botocore's `Signature:`
    # line (after the rule above: `X-Hub-Signature: sha1=[redacted]` is left as it is)
    _Rule(("signature", "credential"),
          r"(\b(?=[sScC])(?i:signature|credential)" + _SEPARATOR + r")" + _SECRET_VALUE, KEEP),
)
_WORDS = tuple(dict.fromkeys(word for rule in _RULES for word in rule.words))  # every rule's, once
# Each of those forms holds a character other than an ASCII letter, a digit or a hyphen (a separator, a
# slash, an underscore, a dot, a space, `<`): a text of those alone (a delivery's id, an event's name) holds
# none of them, whatever words it holds. Only the registered values are looked for in it.
_PLAIN_TEXT = re.compile(r"[A-Za-z0-9-]*")
# The names of fields whose whole value is a secret (in a dict message or an `extra=` field): headers
# such as X-Hub-Signature-256 and X-Telegram-Bot-Api-Secret-Token, settings, bodies' fields.
SECRET_NAMES = ("authoriz", "secret", "token", "passw", "signature", "private_key", "privatekey", "api_key", "apikey",
                "cookie")
_secret_name: dict[str, bool] = {}  # a field's name -> whether it is one of those (names are few)
_plain_names: set[str] = set()  # the names among them that are not

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


# Short texts found to hold nothing to redact, with the registered forms they were looked for (`_forms`, as a
# tuple is never changed but replaced): the fields of pager's lines repeat from one line to the next (the
# message, an event's name, an action, an outcome, a repository), so each is scanned once and then found
# here. A text that held a secret is never kept; new forms (`register`) start with none kept.
CLEAN_TEXT = 256  # the longest text kept
CLEAN_KEPT = 512  # how many: when full, all are forgotten
_clean: tuple[tuple[str, ...], dict[str, None]] = ((), {})


def redact(text: str) -> str:
    """`text` with every secret replaced by `MARK`."""
    global _clean
    if len(text) < MIN_SECRET:
        return text
    forms = _forms
    if len(text) > CLEAN_TEXT or type(text) is not str:
        return _redact(text, forms)
    checked, clean = _clean
    if checked is not forms:  # the forms changed since: what was found clean is looked at again
        clean = {}
        _clean = (forms, clean)
    elif text in clean:
        return text
    redacted = _redact(text, forms)
    if redacted != text:
        return redacted
    if len(clean) >= CLEAN_KEPT:
        clean.clear()
    clean[text] = None
    return text


def _by_form(text: str, lowered: str) -> str:
    """`text` with each rule whose words `lowered` holds applied, in order."""
    for rule in _RULES:
        for word in rule.words:
            if word in lowered:
                text = rule.sub(text)
                break
    return text


def _redact(text: str, forms: tuple[str, ...]) -> str:
    if _PLAIN_TEXT.fullmatch(text) is None:
        lowered = text.lower()  # what a replacement takes out only makes a later rule look in vain
        for word in _WORDS:  # most texts hold none: each word is looked for once, not once for each rule
            if word in lowered:
                text = _by_form(text, lowered)
                break
    # The registered values after the forms: a value that is part of a form (a key's first line, say) would
    # otherwise take away what the form is known by, and leave the rest of it.
    if forms and len(text) >= len(forms[-1]):
        for form in forms:
            if form in text:
                text = text.replace(form, MARK)
    return text


def _is_secret_name(name: str) -> bool:
    known = _secret_name.get(name)
    if known is None:
        lowered = str(name).lower()
        known = any(word in lowered for word in SECRET_NAMES)
        if len(_secret_name) < 1000:
            _secret_name[name] = known
            if not known:
                _plain_names.add(name)
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
    if isinstance(value, Mapping):  # a key may hold a secret too (a URL counted by its path)
        items = {redact(key) if isinstance(key, str) else key: redact_value(item, str(key), depth + 1)
                 for key, item in value.items()}
        same = len(items) == len(value) and all(items.get(key, _MISSING) is item for key, item in value.items())
        return value if same else items
    redacted = [redact_value(item, name, depth + 1) for item in value]
    if all(new is old for new, old in zip(redacted, value, strict=True)):
        return value
    return redacted if isinstance(value, list) else tuple(redacted)


# -- the record factory --------------------------------------------------------------------------------


_SCALARS = frozenset((int, float, bool, type(None)))  # values with nothing to redact (not their subclasses)


def _redact_fields(fields: Mapping[str, Any]) -> Mapping[str, Any]:
    """A record's `extra=` fields redacted as `redact_value` does each (`fields` itself when nothing was).
    Most lines' fields are numbers and texts `redact` has seen (an event's name, an action, a repository,
    an outcome) under names known not to be a secret's: each is passed over after a look or two."""
    checked, clean = _clean
    if checked is not _forms:
        clean = {}
    redacted: dict[str, Any] | None = None
    for name, value in fields.items():
        kind = value.__class__
        if kind is str:
            if name not in _plain_names:
                new = MARK if value and _is_secret_name(name) else redact(value)
            elif value in clean or len(value) < MIN_SECRET:
                continue
            else:
                new = redact(value)
        elif kind in _SCALARS:
            continue
        else:
            new = redact_value(value, name)
        if new is not value:
            if redacted is None:
                redacted = dict(fields)
            redacted[name] = new
    return fields if redacted is None else redacted


class _Fields(dict):  # type: ignore[type-arg]
    """A record's `__dict__` when its `extra=` fields were not redacted before they are written (a record
    made by a `makeRecord` other than `_make_record`'s): each is redacted as it is written."""

    def __setitem__(self, key: str, value: Any) -> None:
        super().__setitem__(key, redact_value(value, key))


_MISSING = object()
_stand_ins: dict[type, type[Exception]] = {}


def _stand_in_class(cls: type) -> type[Exception]:
    """An exception class named as `cls` (its module and qualified name), whose text is its message; for a
    group, an ExceptionGroup (its sub-exceptions are printed with it)."""
    made = _stand_ins.get(cls)
    if made is None:
        base = ExceptionGroup if issubclass(cls, BaseExceptionGroup) else Exception
        made = type(cls.__name__, (base,), {"__module__": cls.__module__, "__qualname__": cls.__qualname__,
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
    """A stand-in for `exc` whose text, chain and (for a group) sub-exceptions are redacted; None when they
    hold nothing to redact. Past DEPTH, an exception is not looked at: it is shown as not shown."""
    if depth >= DEPTH:
        kind = Exception if isinstance(exc, BaseExceptionGroup) else type(exc)
        return _stand_in_class(kind)(f"{MARK} (an exception {DEPTH} causes deep is not shown)")
    cause = exc.__cause__
    context = exc.__context__
    clean_cause = _clean_exception(cause, depth + 1) if cause is not None else None
    clean_context = clean_cause if context is cause else (
        _clean_exception(context, depth + 1) if context is not None else None)
    text, notes = _text_of(exc), _notes_of(exc)
    clean_text, clean_notes = redact(text), [redact(note) for note in notes]
    subs = _clean_subs(exc, depth)
    if clean_text == text and clean_notes == notes and clean_cause is None and clean_context is None and subs is None:
        return None
    stand_in = _stand_in(exc, clean_text, subs)
    stand_in.__traceback__ = exc.__traceback__
    stand_in.__cause__ = clean_cause or cause
    stand_in.__context__ = clean_context or context
    stand_in.__suppress_context__ = exc.__suppress_context__
    if clean_notes:
        stand_in.__notes__ = clean_notes  # type: ignore[attr-defined]
    return stand_in


def _clean_subs(exc: BaseException, depth: int) -> list[BaseException] | None:
    """A group's sub-exceptions, each redacted (as they are where nothing was); None when none needed it."""
    if not isinstance(exc, BaseExceptionGroup):
        return None
    cleaned = [_clean_exception(sub, depth + 1) for sub in exc.exceptions]
    if not any(cleaned):
        return None
    return [clean or sub for clean, sub in zip(cleaned, exc.exceptions, strict=True)]


def _stand_in(exc: BaseException, clean_text: str, subs: list[BaseException] | None) -> BaseException:
    """The stand-in: for a group, an ExceptionGroup of its (redacted) sub-exceptions, which it prints."""
    made = _stand_in_class(type(exc))
    if not isinstance(exc, BaseExceptionGroup):
        return made(clean_text)
    inner = [s if isinstance(s, Exception) else Exception(redact(str(s))) for s in (subs or exc.exceptions)]
    return made(redact(str(exc.message)), inner)  # (a group's text adds "(N sub-exceptions)" itself)


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
    """The record's message, exception and stack redacted (its fields are, by `_make_record` or `_Fields`)."""
    msg = record.msg
    if msg.__class__ is str and not record.args:  # most lines: the message is their text (`getMessage`)
        checked, seen = _clean
        if len(msg) >= MIN_SECRET and (checked is not _forms or msg not in seen):  # `redact`'s first look
            clean = redact(msg)
            if clean is not msg:
                record.msg = clean
    else:
        _redact_message(record)
    if record.exc_info and isinstance(record.exc_info, tuple) and record.exc_info[1] is not None:
        stand_in = _clean_exception(record.exc_info[1])
        if stand_in is not None:
            record.exc_info, record.exc_text = (type(stand_in), stand_in, stand_in.__traceback__), None
    if record.stack_info:
        record.stack_info = redact(record.stack_info)


_reading = threading.local()  # `withheld`'s mark, per thread
WITHHELD = f"{MARK} (a line below INFO, withheld while pager reads or writes its secrets)"


@contextlib.contextmanager
def withheld() -> Iterator[None]:
    """While pager reads or writes its secrets' store: every record this thread makes below INFO (botocore's
    DEBUG lines quote the parameter's request and answer whole) is withheld, since its values are known only
    once read, and a value redaction cannot tell by its form (a passphrase) would be written as it is."""
    _reading.on = True
    try:
        yield
    finally:
        _reading.on = False


class _Factory:
    """logging's record factory: the one before it (`wrapped`), then the redaction."""

    redacts = True

    def __init__(self, wrapped: Callable[..., logging.LogRecord]) -> None:
        self.wrapped = wrapped

    def __call__(self, name: str, level: int, fn: str, lno: int, msg: object, args: Any, exc_info: Any,
                 func: str | None = None, sinfo: str | None = None, **kwargs: Any) -> logging.LogRecord:
        if getattr(_reading, "on", False) and isinstance(level, int) and level < logging.INFO:
            msg, args, exc_info, sinfo = WITHHELD, (), None, None
        record = self.wrapped(name, level, fn, lno, msg, args, exc_info, func, sinfo, **kwargs)
        # Called by the `makeRecord` that `_make_record` wraps, as `_make_record` called it: the fields written
        # next are redacted already. Otherwise, first: the fields are redacted whatever happens below.
        caller = sys._getframe(1)
        outer = caller.f_back
        if caller.f_code is not _MAKE_RECORD_CODE or outer is None or outer.f_code is not _OWN_CODE:
            record.__dict__ = _Fields(record.__dict__)
        try:
            _redact_record(record)
        except Exception as exc:  # a line that could not be redacted is not written as it was
            record.msg, record.args = f"{MARK} (this line's redaction failed: {type(exc).__name__})", ()
            record.exc_info = record.exc_text = record.stack_info = None
        return record


# `Logger.makeRecord` writes a record's `extra=` fields into it after the factory returned it. Redacting them
# as they are written (`_Fields`) costs a call of Python for each field of each line, and a copy of each
# record's fields. So `install` also wraps `Logger.makeRecord` (`_make_record`): the fields are redacted
# before the one it wraps writes them, in one pass; the factory, called by that one as `_make_record` called
# it, knows they are, and any other record (a logger class's own `makeRecord`, a factory called directly)
# still gets a `__dict__` that redacts what is written into it.
_wrapped_make_record: Callable[..., logging.LogRecord] = logging.Logger.makeRecord


def _make_record(self: logging.Logger, name: str, level: int, fn: str, lno: int, msg: object, args: Any,
                 exc_info: Any, func: str | None = None, extra: Mapping[str, object] | None = None,
                 sinfo: str | None = None) -> logging.LogRecord:
    """`Logger.makeRecord`, with `extra` redacted before it is written into the record."""
    if extra:
        try:
            extra = _redact_fields(extra)
        except Exception:  # fields that could not be redacted are not written as they were
            extra = dict.fromkeys(extra, MARK)
    return _wrapped_make_record(self, name, level, fn, lno, msg, args, exc_info, func, extra, sinfo)


_OWN_CODE = _make_record.__code__
_NOT_A_FUNCTION = object()  # what no frame's code is: every record gets `_Fields`
_MAKE_RECORD_CODE: Any = None  # the code of the `makeRecord` `_make_record` wraps (None: none wrapped yet)


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
    global _wrapped_make_record, _MAKE_RECORD_CODE
    if not installed():
        logging.setLogRecordFactory(_Factory(logging.getLogRecordFactory()))
    # Once: a `makeRecord` set since, around this one or instead of it, is left as it is (wrapping it again
    # would make `_make_record` call itself through it); records made otherwise get `_Fields`. Only logging's
    # own is known to write nothing but `extra`: records made by another still get `_Fields` as well.
    if _MAKE_RECORD_CODE is None:
        _wrapped_make_record = logging.Logger.makeRecord
        own = getattr(_wrapped_make_record, "__module__", None) == "logging"
        _MAKE_RECORD_CODE = getattr(_wrapped_make_record, "__code__", _NOT_A_FUNCTION) if own else _NOT_A_FUNCTION
        logging.Logger.makeRecord = _make_record  # type: ignore[method-assign]
    cover_warnings()
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


# -- warnings ---------------------------------------------------------------------------------------------


class _ShowWarning:
    """`warnings.showwarning`: a warning as a line of logging's, as `logging.captureWarnings(True)` makes it
    (the `py.warnings` logger, at WARNING, its text as `warnings` formats it), so redacted as every record;
    not written to stderr as it was. Unlike `captureWarnings`, which gives `py.warnings` a handler that
    drops what reaches it, no handler is added: where logging has none (the command line), its last resort
    writes the line to stderr as `warnings` did; in Lambda the runtime's handler on the root logger writes
    it among the function's lines, with its level. A warning shown to a file of its own is written there,
    redacted."""

    redacts = True

    def __call__(self, message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
        text = warnings.formatwarning(message, category, filename, lineno, line)
        if file is None:
            logging.getLogger("py.warnings").warning(text.rstrip("\n"))
            return
        try:
            file.write(redact(text))
        except OSError:  # as warnings' own: a closed or invalid file is not an error of the caller's
            pass


def cover_warnings() -> None:
    """Make what `warnings` shows a line of logging's, and so redacted (once; `install` calls it)."""
    if not getattr(warnings.showwarning, "redacts", False):
        warnings.showwarning = _ShowWarning()
