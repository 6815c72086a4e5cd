"""No log line carries a secret, whichever logger writes it and at whatever level (pager.redact).

Closed loop: a real HTTP server on 127.0.0.1 plays Telegram and GitHub, and pager's own clients talk to
it through requests and urllib3, with urllib3, requests, botocore and the root logger set to DEBUG after
pager was imported (as an operator would). Every record any logger makes is captured: by a handler on
the root logger, by a handler with pager's own JSON formatter, by caplog; http.client's debug output
(print, not logging) by capsys. The server keeps what it received (the bot token in the path, the JWT
and the installation token in the Authorization header): none of it may be in what was captured, the
redaction's marker must be where it was, and the same exchange without the redaction shows them, so
that these tests cannot pass by capturing nothing.
"""

from __future__ import annotations

import contextlib
import http.client
import io
import json
import logging
import os
import secrets
import socket
import string
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from requests.adapters import HTTPAdapter
from support import TEST_ENV

from pager import redact
from pager.bootstrap import build_services
from pager.errors import GitHubRefused
from pager.observe import logger
from pager.settings import Settings
from pager.telegram import Telegram

MARK = redact.MARK
ROOT = Path(__file__).resolve().parents[1]
STANDARD = set(logging.makeLogRecord({}).__dict__) | {"message", "asctime"}
LOGGERS = ("", "urllib3", "requests", "botocore", "boto3", "pager", "caller")


def bot_token() -> str:
    """A token as BotFather makes them: the bot's id, a colon, 35 characters."""
    return f"{secrets.randbelow(9 * 10**9) + 10**9}:AA{secrets.token_urlsafe(33)[:33]}"


def installation_token() -> str:
    return "ghs_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))


# -- the state of logging, as it was before each test ------------------------------------------------------


@pytest.fixture(autouse=True)
def logging_state() -> Iterator[None]:
    """Levels, the root's handlers, the record factory, http.client's debug output and the registered
    secrets, put back after each test: the other tests (in this worker) see logging as they left it."""
    loggers = [logging.getLogger(name) for name in LOGGERS]
    levels = [each.level for each in loggers]
    handlers = list(logging.getLogger().handlers)
    factory = logging.getLogRecordFactory()
    debuglevel = http.client.HTTPConnection.debuglevel
    printer = http.client.__dict__.get("print")
    registered = (redact._registered.copy(), redact._forms)
    try:
        yield
    finally:
        for each, level in zip(loggers, levels, strict=True):
            each.setLevel(level)
        root = logging.getLogger()
        for handler in [h for h in root.handlers if h not in handlers]:
            root.removeHandler(handler)
        logging.setLogRecordFactory(factory)
        http.client.HTTPConnection.debuglevel = debuglevel
        if printer is None:
            http.client.__dict__.pop("print", None)
        else:
            http.client.print = printer  # type: ignore[attr-defined]
        redact._registered, redact._forms = registered


class Capture(logging.Handler):
    """Every record that reaches it: as logging's formatter writes it (its exception's traceback
    included), and every field it carries."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self.lines: list[str] = []
        self.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        fields = {key: value for key, value in record.__dict__.items() if key not in STANDARD}
        self.records.append(record)
        self.lines.append(self.format(record) + " " + json.dumps(fields, default=str))

    def text(self, name: str = "") -> str:
        return "\n".join(line for line, record in zip(self.lines, self.records, strict=True)
                         if record.name == name or record.name.startswith(name))


@dataclass
class Logs:
    root: Capture  # on the root logger: every logger's records, pager's propagated ones among them
    pager: io.StringIO  # pager's JSON lines, as Powertools writes them to CloudWatch

    def everything(self, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> str:
        out, err = capsys.readouterr()
        return "\n".join((self.root.text(), self.pager.getvalue(), caplog.text, out, err))


@pytest.fixture
def debug_logs() -> Iterator[Logs]:
    """Every logger at DEBUG, set after pager was imported (quiet_libraries ran then), and everything they
    write captured."""
    capture = Capture()
    root = logging.getLogger()
    root.addHandler(capture)
    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)
    buffer = io.StringIO()
    json_lines = logging.StreamHandler(buffer)
    json_lines.setFormatter(logger.registered_formatter)
    logger.addHandler(json_lines)
    try:
        yield Logs(capture, buffer)
    finally:
        logger.removeHandler(json_lines)


# -- Telegram and GitHub on this machine -----------------------------------------------------------------


@dataclass
class Received:
    method: str
    path: str
    authorization: str


@dataclass
class FakeServices:
    """Telegram's Bot API and GitHub's REST API, answering what pager asks; `received` keeps every
    request as it arrived."""

    installation_token: str = field(default_factory=installation_token)
    received: list[Received] = field(default_factory=list)
    url: str = ""

    def answer(self, method: str, path: str, authorization: str) -> tuple[int, dict[str, Any]]:
        self.received.append(Received(method, path, authorization))
        if path.startswith("/bot"):
            return 200, {"ok": True, "result": {"message_id": 7, "id": 1, "username": "pager_test_bot"}}
        if path.endswith("/installation"):
            return 200, {"id": 42}
        if path == "/app/installations/42/access_tokens":
            return 201, {"token": self.installation_token, "expires_at": "2099-01-01T00:00:00Z"}
        if path == "/repos/acme/widgets":
            return 200, {"id": 1, "full_name": "acme/widgets"}
        # A proxy in the way that quotes what it was sent: pager's error then holds the credential.
        return 422, {"message": f"Validation Failed: the request had Authorization: {authorization}"}


@pytest.fixture
def services_here() -> Iterator[FakeServices]:
    fake = FakeServices()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            status, answer = fake.answer(self.command, self.path, self.headers.get("Authorization") or "")
            body = json.dumps(answer).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = _answer

        def log_message(self, *args: Any) -> None:  # the server's own lines are not what is tested
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def a_session() -> requests.Session:
    session = requests.Session()
    session.trust_env = False  # no proxy of this machine's between pager and 127.0.0.1
    return session


@dataclass
class Secrets:
    bot_token: str = field(default_factory=bot_token)
    github_webhook_secret: str = field(default_factory=lambda: secrets.token_hex(20))
    telegram_webhook_secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))

    def env(self, url: str, private_key: str) -> dict[str, str]:
        return {**TEST_ENV, "GITHUB_API_URL": url, "TELEGRAM_API_URL": url, "GITHUB_PRIVATE_KEY": private_key,
                "TELEGRAM_BOT_TOKEN": self.bot_token, "GITHUB_WEBHOOK_SECRET": self.github_webhook_secret,
                "TELEGRAM_WEBHOOK_SECRET": self.telegram_webhook_secret}


def exchange(fake: FakeServices, given: Secrets, private_key: str) -> list[str]:
    """Through pager's composition root (its settings, its clients): a message sent, a repository read
    with the app's JWT and an installation token, a refusal that quotes the credential, logged by pager and
    by a caller with its exception. What must never be logged: all that went over the wire or was read."""
    services = build_services(given.env(fake.url, private_key), session=a_session())
    assert services.telegram.send_message(-1001, "hello") == 7
    assert services.github.get_repository("acme/widgets")["full_name"] == "acme/widgets"
    with pytest.raises(GitHubRefused) as refused:
        services.github.get_repository("acme/echo")
    logger.warning("github refused", extra={"error": str(refused.value)})
    logging.getLogger("caller").error("github refused", exc_info=refused.value)
    jwts = {r.authorization.split()[1] for r in fake.received if r.authorization and "ghs_" not in r.authorization}
    assert jwts and all(value.startswith("eyJ") for value in jwts)  # what the JWT rule is for, sent for real
    assert any(fake.installation_token in r.authorization for r in fake.received)
    assert any(given.bot_token in r.path for r in fake.received)
    secret_part = given.bot_token.split(":")[1]
    return [given.bot_token, secret_part, quote(given.bot_token, safe=""), fake.installation_token, *jwts,
            given.github_webhook_secret, given.telegram_webhook_secret, private_key.splitlines()[1]]


@contextlib.contextmanager
def without_redaction() -> Iterator[None]:
    """logging's record factory as it was before pager's, and http.client's own print."""
    factory = logging.getLogRecordFactory()
    wrapped = getattr(factory, "wrapped", None)
    assert wrapped is not None, "pager's record factory is not the one installed"
    logging.setLogRecordFactory(wrapped)
    printer = http.client.__dict__.pop("print", None)
    try:
        yield
    finally:
        logging.setLogRecordFactory(factory)
        if printer is not None:
            http.client.print = printer  # type: ignore[attr-defined]


# -- the closed loop ---------------------------------------------------------------------------------------


def test_every_logger_at_debug_writes_no_secret_of_a_real_exchange(debug_logs, services_here, private_key_pem,
                                                                   caplog, capsys):
    given = Secrets()
    never = exchange(services_here, given, private_key_pem)
    logs = debug_logs.everything(caplog, capsys)
    for value in never:
        assert value not in logs
    # What was logged, and where the secrets were: urllib3's request lines, redacted in place.
    urllib3 = debug_logs.root.text("urllib3")
    assert f'"POST /bot{MARK}/sendMessage HTTP/1.1" 200' in urllib3
    assert '"GET /repos/acme/widgets HTTP/1.1" 200' in urllib3
    # pager's line and the caller's exception, both quoting the credential GitHub's proxy echoed.
    lines = [json.loads(line) for line in debug_logs.pager.getvalue().splitlines()]
    refused = next(line for line in lines if line["message"] == "github refused")
    assert refused["error"].endswith(f"the request had Authorization: Bearer {MARK}")
    caller = debug_logs.root.text("caller")
    assert "GitHubRefused" in caller and f"Authorization: Bearer {MARK}" in caller
    assert any(record.name == "pager" for record in debug_logs.root.records)  # propagated: the root saw them


def test_without_the_redaction_the_same_exchange_leaks(debug_logs, services_here, private_key_pem, caplog, capsys):
    # The same setup and exchange with logging's factory as it was before pager's: the captures do see
    # the secrets, so the test above holds because of the redaction, not because nothing was captured.
    given = Secrets()
    with without_redaction():
        never = exchange(services_here, given, private_key_pem)
    logs = debug_logs.everything(caplog, capsys)
    assert f"/bot{given.bot_token}/sendMessage" in debug_logs.root.text("urllib3")
    assert services_here.installation_token in debug_logs.root.text("caller")
    assert services_here.installation_token in debug_logs.pager.getvalue()
    assert MARK not in logs
    assert never[0] in logs


def test_a_bot_token_never_registered_is_redacted_by_its_form(debug_logs, services_here, caplog, capsys):
    # A client built before any settings were read (or in a tool of its own): only the form tells.
    token = bot_token()
    telegram = Telegram(a_session(), token=token, api_url=services_here.url)
    assert telegram.get_me()["username"] == "pager_test_bot"
    assert telegram.send_message("-1001", "hello") == 7
    logs = debug_logs.everything(caplog, capsys)
    assert token not in logs and token.split(":")[1] not in logs
    urllib3 = debug_logs.root.text("urllib3")
    assert f"POST /bot{MARK}/getMe" in urllib3 and f"POST /bot{MARK}/sendMessage" in urllib3


def test_http_clients_debug_output_shows_no_credential(services_here, private_key_pem, capsys):
    # http.client prints what it sends (headers included) when its debuglevel is set: not logging, but
    # pager's clients make that print redact too.
    http.client.HTTPConnection.debuglevel = 1
    given = Secrets()
    never = exchange(services_here, given, private_key_pem)
    out = capsys.readouterr().out
    assert "send: b'" in out and f"Authorization: Bearer {MARK}" in out and f"POST /bot{MARK}/sendMessage" in out
    for value in never:
        assert value not in out
    with without_redaction():
        exchange(services_here, given, private_key_pem)
    assert f"Authorization: Bearer {services_here.installation_token}" in capsys.readouterr().out


def test_urllib3s_retry_warning_quotes_the_url_even_at_the_default_level_redacted(caplog):
    # urllib3 warns of each retry with the URL at WARNING, which quiet_libraries lets through; and
    # requests' exception quotes it too.
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]  # closed when the block ends: connections are refused
    token = bot_token()
    session = a_session()
    session.mount("http://", HTTPAdapter(max_retries=1))
    with caplog.at_level(logging.WARNING):
        try:
            session.post(f"http://127.0.0.1:{port}/bot{token}/sendMessage", json={}, timeout=2)
        except requests.ConnectionError:
            logging.getLogger("caller").exception("Telegram did not answer")
    retry = next(r for r in caplog.records if r.name.startswith("urllib3") and "Retrying" in r.getMessage())
    assert retry.getMessage().endswith(f"/bot{MARK}/sendMessage")
    assert "ConnectionError" in caplog.text and f"/bot{MARK}/sendMessage" in caplog.text
    assert token not in caplog.text and token.split(":")[1] not in caplog.text


# -- the forms, one by one ----------------------------------------------------------------------------------

JWT = "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJpYXQiOjE3MDAwMDAwMDAsImlzcyI6IjEyMzQ1In0.c2lnbmF0dXJlLW9mLXRoZS1hcHA"
TOKEN = "7312345678:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ"
HEX64 = "a3f1" * 16


@pytest.mark.parametrize(("text", "secret", "kept"), [
    (f"POST /bot{TOKEN}/sendMessage HTTP/1.1", TOKEN, f"POST /bot{MARK}/sendMessage HTTP/1.1"),
    ("https://api.telegram.org/bot123:ABC/getMe", "123:ABC", f"https://api.telegram.org/bot{MARK}/getMe"),
    (f"GET /go?next={quote('https://api.telegram.org/bot' + TOKEN + '/getMe', safe='')}", quote(TOKEN, safe=""),
     f"%2Fbot{MARK}%2FgetMe"),
    (f"GET /hook?bot_token={quote(TOKEN, safe='')}&x=1", quote(TOKEN, safe=""), "&x=1"),
    (f"the token is {TOKEN}.", TOKEN, f"the token is {MARK}."),
    (f"Authorization: Bearer {JWT}", JWT, f"Authorization: Bearer {MARK}"),
    ("{'Authorization': 'token ghs_16C7e42F292c6912E7710c838347Ae178B4a', 'Accept': '*/*'}",
     "ghs_16C7e42F292c6912E7710c838347Ae178B4a", f"'Authorization': 'token {MARK}', 'Accept': '*/*'"),
    ("send: b'GET / HTTP/1.1\\r\\nAuthorization: Bearer abcdefgh12345678\\r\\nAccept: */*'", "abcdefgh12345678",
     f"Authorization: Bearer {MARK}\\r\\nAccept: */*"),
    ("a ghp_abcdefghijklmnopqrstuvwxyz0123456789 b", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", f"a {MARK} b"),
    ("github_pat_11ABCDEFG0_abcdefghijklmnopqrstuvwxyz", "github_pat_11ABCDEFG0", MARK),
    ("gho_, ghu_ and ghr_ tokens: ghr_1234567890abcdefghij", "ghr_1234567890abcdefghij", f"ghr_ tokens: {MARK}"),
    (f"X-Hub-Signature-256: sha256={HEX64}", HEX64, f"X-Hub-Signature-256: sha256={MARK}"),
    (f"x-hub-signature: sha1={HEX64[:40]}", HEX64[:40], f"sha1={MARK}"),
    ("X-Telegram-Bot-Api-Secret-Token: s3", ": s3", f"X-Telegram-Bot-Api-Secret-Token: {MARK}"),
    ('{"url": "https://x/telegram", "secret_token": "abc-DEF_123"}', "abc-DEF_123", f'"secret_token": "{MARK}"'),
    ('b\'{"TELEGRAM_WEBHOOK_SECRET": "tg-secret-4711"}\'', "tg-secret-4711", f'"TELEGRAM_WEBHOOK_SECRET": "{MARK}"'),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY----- then", "MIIEowIBAAKCAQEA",
     f"{MARK} then"),
    ('{\\"GITHUB_PRIVATE_KEY\\": \\"-----BEGIN PRIVATE KEY-----\\\\nMIIEvQIBADANBg\\\\n', "MIIEvQIBADANBg",
     f'\\"GITHUB_PRIVATE_KEY\\": \\"{MARK}'),
])
def test_a_secret_is_redacted_by_its_form(text, secret, kept):
    clean = redact.redact(text)
    assert secret not in clean
    assert kept in clean


@pytest.mark.parametrize("text", [
    "settings: missing GITHUB_WEBHOOK_SECRET, TELEGRAM_BOT_TOKEN (GITHUB_WEBHOOK_SECRET, TELEGRAM_BOT_TOKEN: nor in "
    "the secret /pager/pager/secrets)",
    "TELEGRAM_BOT_TOKEN is not a bot token (digits:letters)",
    "github installation token: answer without a token",
    "the app's private key cannot sign a token: check GITHUB_PRIVATE_KEY (pager doctor)",
    "delivery 8f1c2d30-1a2b-11ef-9c6e-0242ac120002 handled at 2024-05-01T12:30:00Z: sent",
    "telegram sendMessage: Telegram refused (400): Bad Request: chat not found",
])
def test_ordinary_lines_are_left_as_they_are(text):
    assert redact.redact(text) == text


def test_a_jwt_in_an_exception_message_is_redacted_for_every_formatter(debug_logs):
    def fail() -> None:
        try:
            raise KeyError("the cache")
        except KeyError as exc:
            raise ValueError(f"GitHub refused the JWT {JWT}") from exc

    try:
        fail()
    except ValueError:
        logging.getLogger("caller").exception("signing in")
        logger.exception("signing in")
    caller = debug_logs.root.text("caller")
    assert JWT not in caller and f"ValueError: GitHub refused the JWT {MARK}" in caller
    assert "KeyError: 'the cache'" in caller and "in fail" in caller  # the chain and the frames, kept
    line = json.loads(debug_logs.pager.getvalue().splitlines()[-1])  # Powertools formats the exception itself
    assert line["exception_name"] == "ValueError" and JWT not in json.dumps(line)
    assert f"GitHub refused the JWT {MARK}" in line["exception"]


def test_a_secret_in_the_cause_of_an_exception_is_redacted(debug_logs):
    try:
        try:
            raise ConnectionError(f"no answer from /bot{TOKEN}/sendMessage")
        except ConnectionError as exc:
            raise RuntimeError("telegram sendMessage: no answer") from exc
    except RuntimeError:
        logging.getLogger("caller").exception("sending")
    caller = debug_logs.root.text("caller")
    assert TOKEN not in caller and f"ConnectionError: no answer from /bot{MARK}/sendMessage" in caller
    assert "RuntimeError: telegram sendMessage: no answer" in caller


def test_a_signature_in_an_extra_field_of_pagers_logger_is_redacted(debug_logs):
    logger.info("delivery refused", extra={"header": f"sha256={HEX64}", "headers": {
        "X-Hub-Signature-256": f"sha256={HEX64}", "X-Telegram-Bot-Api-Secret-Token": "short",
        "Authorization": f"Bearer {JWT}", "X-GitHub-Event": "issues"}, "count": 3})
    line = json.loads(debug_logs.pager.getvalue().splitlines()[-1])
    assert line["header"] == f"sha256={MARK}" and line["count"] == 3
    assert line["headers"] == {"X-Hub-Signature-256": MARK, "X-Telegram-Bot-Api-Secret-Token": MARK,
                               "Authorization": MARK, "X-GitHub-Event": "issues"}
    assert HEX64 not in debug_logs.root.text("pager")


def test_a_dict_message_and_arguments_are_redacted(debug_logs):
    logger.info({"event": "setWebhook", "secret_token": "s3cr3t-t0ken", "url": f"https://x/bot{TOKEN}/setWebhook"})
    logging.getLogger("caller").debug("POST %s with %r", f"/bot{TOKEN}/getMe", {"token": TOKEN})
    line = json.loads(debug_logs.pager.getvalue().splitlines()[-1])
    assert line["message"] == {"event": "setWebhook", "secret_token": MARK, "url": f"https://x/bot{MARK}/setWebhook"}
    assert debug_logs.root.lines[-1].startswith(f"DEBUG caller POST /bot{MARK}/getMe with {{'token': '{MARK}'}}")


def test_the_secrets_of_the_settings_are_redacted_once_read(debug_logs):
    # A webhook secret of no recognisable form: its value is what is redacted, once the settings are read.
    secret = "correct horse battery staple"
    caller = logging.getLogger("caller")
    caller.info("the secret is %s", secret)
    assert secret in debug_logs.root.lines[-1]  # nothing tells it apart before
    Settings.from_env({**TEST_ENV, "GITHUB_WEBHOOK_SECRET": secret, "GITHUB_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----"})
    caller.info("the secret is %s, %s and %s", secret, quote(secret, safe=""), json.dumps(secret))
    assert debug_logs.root.lines[-1].startswith(f'INFO caller the secret is {MARK}, {MARK} and "{MARK}"')


def test_a_secret_pager_setup_learns_is_redacted(debug_logs):
    from pager.admin.console import Console

    Console(io.StringIO()).hide("client-secret-of-the-manifest")
    logging.getLogger("caller").warning("GitHub answered client-secret-of-the-manifest")
    assert debug_logs.root.lines[-1].startswith(f"WARNING caller GitHub answered {MARK}")


def test_a_short_value_is_not_registered():
    redact.register("0", "abc", "", None)
    assert redact.redact("0 abc") == "0 abc"


def test_the_factory_wraps_the_one_before_and_is_installed_once():
    made: list[str] = []
    before = logging.getLogRecordFactory()

    def another(*args: Any, **kwargs: Any) -> logging.LogRecord:
        made.append("another")
        return before(*args, **kwargs)

    logging.setLogRecordFactory(another)
    redact.install()
    redact.install()
    assert redact.installed() and logging.getLogRecordFactory().wrapped is another  # type: ignore[attr-defined]
    record = logging.getLogger("caller").makeRecord("caller", logging.INFO, "f", 1, f"/bot{TOKEN}/", (), None)
    assert made == ["another"] and record.getMessage() == f"/bot{MARK}/"


def test_the_functions_the_command_line_and_make_serve_install_it_first():
    # Each in a fresh interpreter: importing its entry point installs the redaction.
    entry = {
        "webhook": "import sys; sys.path.insert(0, 'functions/webhook'); import app",
        "sweep": "import sys; sys.path.insert(0, 'functions/sweep'); import app",
        "cli": "import pager.cli\ntry:\n    pager.cli.main(['--version'])\nexcept SystemExit:\n    pass",
        "serve": "import pager_local.serve",
    }
    for name, code in entry.items():
        check = code + "\nimport pager.redact; print(pager.redact.installed())"
        done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "sim")})
        assert done.stdout.strip().splitlines()[-1:] == ["True"], (name, done.stderr[-2000:])
