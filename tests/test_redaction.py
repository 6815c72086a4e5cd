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
import warnings
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
from pager_world.events import github_event
from pager_world.payloads import example

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
    """logging's record factory and `Logger.makeRecord` as they were before pager's, and http.client's own
    print."""
    factory = logging.getLogRecordFactory()
    wrapped = getattr(factory, "wrapped", None)
    assert wrapped is not None, "pager's record factory is not the one installed"
    make_record = logging.Logger.makeRecord
    assert make_record is redact._make_record, "pager's makeRecord is not the one installed"
    logging.setLogRecordFactory(wrapped)
    logging.Logger.makeRecord = redact._wrapped_make_record  # type: ignore[method-assign]
    printer = http.client.__dict__.pop("print", None)
    try:
        yield
    finally:
        logging.setLogRecordFactory(factory)
        logging.Logger.makeRecord = make_record  # type: ignore[method-assign]
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
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # the form of a secret access key (AWS's example)
SESSION_TOKEN = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLWVhc3QtMSJHMEUCIQD6m+EXAMPLE/session=="
AWS_SIGNATURE = "5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
SIGV4 = (f"AWS4-HMAC-SHA256 Credential=ASIAEXAMPLEEXAMPLE12/20240501/us-east-1/ssm/aws4_request, "
         f"SignedHeaders=host;x-amz-date;x-amz-security-token, Signature={AWS_SIGNATURE}")


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
    # A header dump with bytes values, as botocore's "Sending http request" line prints a request's headers.
    (f"headers={{'X-Amz-Date': b'20240501T123000Z', 'X-Amz-Security-Token': b'{SESSION_TOKEN}', 'A': b'1'}}",
     SESSION_TOKEN, f"'X-Amz-Security-Token': b'{MARK}', 'A': b'1'"),
    ("{'X-Telegram-Bot-Api-Secret-Token': b'abc-DEF_123', 'Accept': b'*/*'}", "abc-DEF_123",
     f"'X-Telegram-Bot-Api-Secret-Token': b'{MARK}', 'Accept': b'*/*'"),
    (f"{{'Authorization': b'{SIGV4}', 'amz-sdk-request': b'attempt=1'}}", AWS_SIGNATURE,
     f"'Authorization': b'{MARK}', 'amz-sdk-request': b'attempt=1'"),
    (f"{{'Authorization': b'Bearer {JWT}'}}", JWT, f"'Authorization': b'Bearer {MARK}'"),
    ('headers={"Authorization": b"token ghs_16C7e42F292c6912E7710c838347Ae178B4a"}',
     "ghs_16C7e42F292c6912E7710c838347Ae178B4a", f'"Authorization": b"token {MARK}"'),
    (f"secret_token=b'{HEX64[:20]}'", HEX64[:20], f"secret_token=b'{MARK}'"),
    # AWS's credentials: a secret access key as a setting, an environment variable, a field; STS's answer.
    (f"aws_secret_access_key = {AWS_SECRET}", AWS_SECRET, f"aws_secret_access_key = {MARK}"),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET} AWS_SESSION_TOKEN={SESSION_TOKEN}", AWS_SECRET,
     f"AWS_SECRET_ACCESS_KEY={MARK} AWS_SESSION_TOKEN={MARK}"),
    (f"AWS_SESSION_TOKEN={SESSION_TOKEN}", SESSION_TOKEN, f"AWS_SESSION_TOKEN={MARK}"),
    (f'{{"AccessKeyId": "ASIAEXAMPLE", "SecretAccessKey": "{AWS_SECRET}", "Token": "{SESSION_TOKEN}"}}', AWS_SECRET,
     f'"SecretAccessKey": "{MARK}", "Token": "{MARK}"'),
    (f"<Credentials><SessionToken>{SESSION_TOKEN}</SessionToken><SecretAccessKey>{AWS_SECRET}</SecretAccessKey>",
     SESSION_TOKEN, f"<SessionToken>{MARK}</SessionToken><SecretAccessKey>{MARK}</SecretAccessKey>"),
    (f"<SecretAccessKey>{AWS_SECRET}</SecretAccessKey>", AWS_SECRET, f"<SecretAccessKey>{MARK}</SecretAccessKey>"),
    # AWS's request signature: the Authorization header's value where the header's name is not on the line, a
    # presigned URL, botocore's own line.
    (SIGV4, AWS_SIGNATURE, f"Credential={MARK}, SignedHeaders=host;x-amz-date;x-amz-security-token, Signature={MARK}"),
    (SIGV4, "ASIAEXAMPLEEXAMPLE12/20240501", "SignedHeaders=host;x-amz-date;x-amz-security-token"),
    (f"Authorization: {SIGV4}", AWS_SIGNATURE, f"Authorization: {MARK}"),
    (f"https://b.s3.amazonaws.com/k?X-Amz-Credential=ASIA%2F20240501%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-"
     f"Security-Token={quote(SESSION_TOKEN, safe='')}&X-Amz-Signature={AWS_SIGNATURE}", AWS_SIGNATURE,
     f"X-Amz-Credential={MARK}&X-Amz-Security-Token={MARK}&X-Amz-Signature={MARK}"),
    (f"Signature:\n{AWS_SIGNATURE}", AWS_SIGNATURE, f"Signature:\n{MARK}"),
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
    "signature: invalid, the signature does not match; credentials: none found in the environment",
    "Found credentials in environment variables.",
    "b'{\"Name\": \"/pager/pager/secrets\", \"WithDecryption\": true}'",
    "{'X-Amz-Target': b'AmazonSSM.GetParameter', 'Content-Type': b'application/x-amz-json-1.1'}",
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


def test_a_secret_in_an_exception_group_or_deep_in_a_chain_is_redacted(debug_logs):
    try:
        raise ExceptionGroup("several sends failed", [ConnectionError(f"no answer from /bot{TOKEN}/sendMessage"),
                                                      ValueError("nothing secret")])
    except ExceptionGroup:
        logging.getLogger("caller").exception("sending")
    group = debug_logs.root.text("caller")
    assert TOKEN not in group and f"ConnectionError: no answer from /bot{MARK}/sendMessage" in group
    assert "ExceptionGroup: several sends failed (2 sub-exceptions)" in group and "ValueError: nothing secret" in group

    def chain(n: int) -> None:
        try:
            if n == 0:
                raise ConnectionError(f"no answer from /bot{TOKEN}/sendMessage")
            chain(n - 1)
        except Exception as exc:
            if n == 0:
                raise
            raise RuntimeError(f"level {n}") from exc

    try:
        chain(redact.DEPTH + 2)  # the token deeper than the causes looked at
    except RuntimeError:
        logging.getLogger("deep").exception("sending")
    deep = debug_logs.root.text("deep")
    assert TOKEN not in deep and f"{MARK} (an exception {redact.DEPTH} causes deep is not shown)" in deep
    assert f"RuntimeError: level {redact.DEPTH + 2}" in deep


def test_a_secret_in_a_key_of_a_field_is_redacted(debug_logs):
    logger.info("calls", extra={"calls": {f"https://api.telegram.org/bot{TOKEN}/sendMessage": 1, "plain": 2}})
    line = json.loads(debug_logs.pager.getvalue().splitlines()[-1])
    assert line["calls"] == {f"https://api.telegram.org/bot{MARK}/sendMessage": 1, "plain": 2}


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


@pytest.mark.parametrize("kind", ["ghp", "ghs", "gho", "ghu", "ghr"])
def test_a_github_token_of_each_kind_is_redacted_by_its_form_alone(kind):
    token = f"{kind}_16C7e42F292c6912E7710c838347Ae178B4a"  # on a line with no other word a form is known by
    assert redact.redact(f"cloning o/r with {token} now") == f"cloning o/r with {redact.MARK} now"


def test_a_short_value_is_not_registered():
    redact.register("0", "abc", "", None)
    assert redact.redact("0 abc") == "0 abc"


def test_a_value_of_the_shortest_length_redacted_is_registered():
    secret = "k3y-9a7Q"  # MIN_SECRET characters: redacted by value
    assert len(secret) == redact.MIN_SECRET
    redact.register(secret)
    assert redact.redact(f"the key {secret} leaked") == f"the key {redact.MARK} leaked"


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
    assert logging.Logger.makeRecord is redact._make_record and redact._wrapped_make_record.__module__ == "logging"
    record = logging.getLogger("caller").makeRecord("caller", logging.INFO, "f", 1, f"/bot{TOKEN}/", (), None)
    assert made == ["another"] and record.getMessage() == f"/bot{MARK}/"


def test_the_functions_the_command_line_make_serve_and_each_client_alone_install_it_first():
    # Each in a fresh interpreter: importing its entry point installs the redaction (a client imported on its
    # own, in a script of the maintainer's, too: its requests are what urllib3 logs at DEBUG).
    entry = {
        "telegram client": "import pager.telegram",
        "github client": "import pager.github",
        "webhook": "import sys; sys.path.insert(0, 'functions/webhook'); import app",
        "sweep": "import sys; sys.path.insert(0, 'functions/sweep'); import app",
        "cli": "import pager.cli\ntry:\n    pager.cli.main(['--version'])\nexcept SystemExit:\n    pass",
        "serve": "import pager_local.serve",
    }
    for name, code in entry.items():
        check = code + ("\nimport logging, warnings, pager.redact; print(pager.redact.installed() and "
                        "logging.Logger.makeRecord is pager.redact._make_record and warnings.showwarning.redacts)")
        done = subprocess.run([sys.executable, "-c", check], cwd=ROOT, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "PYTHONPATH": str(ROOT / "sim")})
        assert done.stdout.strip().splitlines()[-1:] == ["True"], (name, done.stderr[-2000:])


# -- the fields of a record, and what each look costs ----------------------------------------------------


def test_fields_are_redacted_whichever_makerecord_made_the_record(debug_logs):
    # pager's makeRecord redacts `extra=` before logging's writes it; a logger class with a makeRecord of its
    # own (which writes the fields itself) gets a record whose fields are redacted as they are written.
    class OwnMakeRecord(logging.Logger):
        def makeRecord(self, name, level, fn, lno, msg, args, exc_info, func=None, extra=None, sinfo=None):
            record = logging.getLogRecordFactory()(name, level, fn, lno, msg, args, exc_info, func, sinfo)
            for key, value in (extra or {}).items():
                record.__dict__[key] = value
            return record

    own = OwnMakeRecord("caller.own")
    own.addHandler(debug_logs.root)
    fields = {"header": f"sha256={HEX64}", "secret_token": "short", "url": f"/bot{TOKEN}/getMe", "status": 200,
              "guid": "72d3162e-cc78-11e3-81ab-4c9367dc0958", "nested": {"token": "x", "n": 1}}
    for each, kind in ((logging.getLogger("caller"), dict), (own, redact._Fields)):
        each.warning("delivery", extra=fields)
        record = debug_logs.root.records[-1]
        assert type(record.__dict__) is kind  # pager's makeRecord's records are left a plain dict
        assert (record.header, record.secret_token, record.url) == (f"sha256={MARK}", MARK, f"/bot{MARK}/getMe")
        assert record.status == 200 and record.guid == fields["guid"] and record.nested == {"token": MARK, "n": 1}
        assert HEX64 not in debug_logs.root.lines[-1] and TOKEN not in debug_logs.root.lines[-1]
    assert fields["url"] == f"/bot{TOKEN}/getMe"  # the caller's own dict is left as it was
    with pytest.raises(KeyError):  # what logging refuses, it still refuses
        logging.getLogger("caller").warning("delivery", extra={"msg": "x"})


def test_a_text_found_clean_is_looked_at_again_once_a_secret_is_registered(debug_logs):
    # What redact remembers as holding nothing was found so against the registered values of that moment.
    secret = "hunter2-and-hunter3"  # letters, digits and hyphens: no form, only its value tells
    caller = logging.getLogger("caller")
    caller.info("the secret is", extra={"value": secret})
    assert debug_logs.root.records[-1].value == secret and redact.redact(secret) == secret
    redact.register(secret)
    caller.info(secret, extra={"value": secret})
    assert debug_logs.root.records[-1].getMessage() == MARK and debug_logs.root.records[-1].value == MARK


@pytest.mark.parametrize("text", [
    "authorization-Bearer-abcdefgh12345678", "X-Amz-Security-Token-IQoJb3JpZ2luX2VjEJr0123456789abcdef",
    "token-0123456789abcdef", "secret-0123456789abcdefghij", "7312345678-AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ",
    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9-eyJpYXQiOjE3MDAwMDAwMDAsImlzcyI6IjEyMzQ1In0", "ghs-16C7e42F292c6912E7710c8",
    "sha256-" + HEX64, "BEGIN-RSA-PRIVATE-KEY-MIIEowIBAAKCAQEA", "bot7312345678-AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsawQ",
    "X-Amz-Signature-" + AWS_SIGNATURE, "Credential-ASIAEXAMPLEEXAMPLE12-20240501", "SecretAccessKey" + AWS_SECRET[:8],
])
def test_no_form_is_made_of_letters_digits_and_hyphens_alone(text):
    # What lets redact pass over such a text (a delivery's id) without looking for each form's words: no
    # rule, applied by itself, finds anything in it, whatever words it holds.
    for rule in redact._RULES:
        assert rule.sub(text) == text, rule.source


# -- AWS's requests, for real ------------------------------------------------------------------------------


@pytest.fixture
def moto_server() -> Iterator[str]:
    """moto's server on 127.0.0.1 (a port of its own): AWS over real HTTP, as botocore talks to it."""
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


def test_botocore_at_debug_shows_no_credential_nor_secret_of_a_real_parameter_read(
        debug_logs, moto_server, private_key_pem, monkeypatch, caplog, capsys):
    # The settings read their secrets from a SecureString as deployed (GetParameter through Powertools and
    # boto3), with temporary credentials (a session token, as Lambda's role gives them), botocore and urllib3
    # at DEBUG: botocore logs the signed request's headers (bytes values), its signature and the answer
    # whole, before pager knows the values to redact, and webhook secrets an operator chose may have no form
    # redaction could tell (a passphrase; a short word): those lines are withheld.
    import boto3
    from aws_lambda_powertools.utilities import parameters

    session_token = "IQoJb3JpZ2luX2Vj" + secrets.token_urlsafe(300)
    secret_key = secrets.token_urlsafe(30)[:40]
    given = Secrets(github_webhook_secret="correct horse battery staple",
                    telegram_webhook_secret="pagerwebhookkey")
    stored = {"GITHUB_PRIVATE_KEY": private_key_pem, "GITHUB_WEBHOOK_SECRET": given.github_webhook_secret,
              "TELEGRAM_BOT_TOKEN": given.bot_token, "TELEGRAM_WEBHOOK_SECRET": given.telegram_webhook_secret}
    for name, value in {"AWS_ACCESS_KEY_ID": "ASIA" + secrets.token_hex(8).upper(), "AWS_SESSION_TOKEN": session_token,
                        "AWS_SECRET_ACCESS_KEY": secret_key, "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_ENDPOINT_URL_SSM": moto_server}.items():
        monkeypatch.setenv(name, value)
    boto3.client("ssm").put_parameter(Name="/pager/pager/secrets", Type="SecureString", Value=json.dumps(stored))
    debug_logs.root.records.clear()
    debug_logs.root.lines.clear()
    caplog.clear()  # (what the test itself wrote)
    env = {**{k: v for k, v in TEST_ENV.items() if k not in stored}, "PAGER_SECRET_ID": "/pager/pager/secrets"}
    parameters.clear_caches()  # a client of its own, on this server and these credentials
    try:
        settings = Settings.from_env(env)
    finally:
        parameters.clear_caches()
    assert (settings.telegram_bot_token, settings.github_webhook_secret) == (given.bot_token, given.github_webhook_secret)
    logs = debug_logs.everything(caplog, capsys)
    botocore = debug_logs.root.text("botocore")
    assert botocore.count(redact.WITHHELD) > 3 and "Response body" not in botocore  # the lines were made, withheld
    assert ("Sending http request", "Response body") == _logged_after_reading(debug_logs)
    never = [session_token, secret_key, *stored.values(), given.bot_token.split(":")[1],
             *private_key_pem.splitlines()[1:-1], json.dumps(private_key_pem)[1:60]]
    for value in never:
        assert value not in logs



def _logged_after_reading(debug_logs) -> tuple[str, ...]:
    """Once the secrets are read, botocore's DEBUG lines are written again (a call of another service)."""
    import boto3

    debug_logs.root.records.clear()
    debug_logs.root.lines.clear()
    boto3.client("ssm").describe_parameters()
    botocore = debug_logs.root.text("botocore")
    return tuple(words for words in ("Sending http request", "Response body") if words in botocore)


# -- what is not a log record -----------------------------------------------------------------------------


def test_a_warning_is_a_line_of_loggings_and_redacted(debug_logs, capsys):
    with warnings.catch_warnings():  # pytest records warnings itself: the warnings module as pager leaves it
        warnings.simplefilter("always")
        redact.cover_warnings()
        warnings.warn(f"GitHub did not answer POST /bot{TOKEN}/sendMessage", UserWarning, stacklevel=1)
        shown = io.StringIO()
        warnings.showwarning("to a file of its own: " + TOKEN, UserWarning, "f.py", 1, shown)
    record = debug_logs.root.records[-1]
    assert (record.name, record.levelname) == ("py.warnings", "WARNING")
    assert f"UserWarning: GitHub did not answer POST /bot{MARK}/sendMessage" in record.getMessage()
    assert TOKEN not in capsys.readouterr().err and shown.getvalue().endswith(f"UserWarning: to a file of its own: {MARK}\n")


WARNINGS_IN_LAMBDA = """
import io, json, logging, sys, warnings
sys.path[:0] = {paths!r}
# Lambda's runtime: a handler on the root logger, set before the function's module is imported.
lines = io.StringIO()
runtime = logging.StreamHandler(lines)
runtime.setFormatter(logging.Formatter("%(levelname)s %(name)s %(message)s"))
logging.getLogger().addHandler(runtime)
logging.getLogger().setLevel(logging.INFO)
import app

class Context:
    function_name, memory_limit_in_mb, aws_request_id = "pager-webhook", 512, "warnings-1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:pager-webhook"

    def get_remaining_time_in_millis(self):
        return 15000

event = json.loads(sys.stdin.read())
answers = [app.lambda_handler(event, Context())["statusCode"] for _ in range(2)]
normal = lines.getvalue()
warnings.warn("Telegram did not answer /bot{token}/sendMessage")
print(json.dumps({{"answers": answers, "normal": normal, "warned": lines.getvalue()[len(normal):]}}))
"""


def test_in_lambda_a_warning_is_a_redacted_log_line_and_a_normal_run_adds_none(private_key_pem):
    # A fresh interpreter as Lambda runs the webhook function (its runtime's handler on the root logger):
    # two ignored deliveries (Powertools' "No application metrics to publish", filtered, among what they
    # would show), then a warning that quotes a bot token.
    token = bot_token()
    apigw = github_event("star", example("star", "created"), secret=TEST_ENV["GITHUB_WEBHOOK_SECRET"])
    paths = [str(ROOT / "functions" / "webhook"), str(ROOT / "layers" / "pager"), str(ROOT / "sim")]
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", **TEST_ENV, "GITHUB_PRIVATE_KEY": private_key_pem,
           "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_METRICS_NAMESPACE": "PagerTest"}
    done = subprocess.run([sys.executable, "-I", "-c", WARNINGS_IN_LAMBDA.format(paths=paths, token=token)],
                          input=json.dumps(apigw), capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["answers"] == [200, 200]
    assert "py.warnings" not in out["normal"] and "No application metrics" not in done.stdout + out["normal"]
    assert out["warned"].startswith("WARNING py.warnings ") and f"/bot{MARK}/sendMessage" in out["warned"]
    assert done.stderr == "" and token not in done.stdout + out["warned"]


def test_make_serves_failed_sweep_line_is_redacted(monkeypatch, capsys):
    from pager_local import serve

    def sweep(event: Any, context: Any) -> Any:
        raise ConnectionError(f"no answer from https://api.telegram.org/bot{TOKEN}/sendMessage")

    class Once(threading.Event):  # one wait that times out (a run is due), then stop
        def __init__(self) -> None:
            super().__init__()
            self.waits = 0

        def wait(self, timeout: float | None = None) -> bool:
            self.waits += 1
            return self.waits > 1

    monkeypatch.setattr(serve, "load_handler", lambda name: sweep)
    serve.sweep_forever(Once(), every=0)
    out = capsys.readouterr().out
    assert out == f"sweep failed: ConnectionError: no answer from https://api.telegram.org/bot{MARK}/sendMessage\n"


DEV_MODE_IN_LAMBDA = """
import io, json, sys
sys.path[:0] = {paths!r}
import app

class Context:
    function_name, memory_limit_in_mb, aws_request_id = "pager-webhook", 512, "dev-1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:pager-webhook"

    def get_remaining_time_in_millis(self):
        return 15000

print(json.dumps([app.lambda_handler(event, Context())["statusCode"] for event in json.loads(sys.stdin.read())]))
"""


def test_powertools_dev_mode_prints_no_request_and_so_no_signature_nor_secret_token(private_key_pem):
    # POWERTOOLS_DEV=true puts Powertools' event handler in debug mode, which print()s every raw request past
    # logging (and so past the redaction) unless the resolver is made with debug=False.
    from pager_world.events import telegram_event

    ping = github_event("ping", {"zen": "Keep it logically awesome."}, secret=TEST_ENV["GITHUB_WEBHOOK_SECRET"])
    update = telegram_event({"update_id": 1}, secret=TEST_ENV["TELEGRAM_WEBHOOK_SECRET"])
    paths = [str(ROOT / "functions" / "webhook"), str(ROOT / "layers" / "pager"), str(ROOT / "sim")]
    env = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", **TEST_ENV, "GITHUB_PRIVATE_KEY": private_key_pem,
           "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_METRICS_NAMESPACE": "PagerTest", "POWERTOOLS_DEV": "true"}
    done = subprocess.run([sys.executable, "-I", "-c", DEV_MODE_IN_LAMBDA.format(paths=paths)],
                          input=json.dumps([ping, update]), capture_output=True, text=True, env=env, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [200, 200]
    said = done.stdout + done.stderr
    assert ping["headers"]["x-hub-signature-256"].split("=")[1] not in said
    assert TEST_ENV["TELEGRAM_WEBHOOK_SECRET"] not in said and '"rawPath"' not in said


def test_the_code_of_an_app_manifest_is_redacted_from_the_conversions_url(debug_logs, services_here, private_key_pem,
                                                                           caplog, capsys):
    # `pager setup` converts the manifest flow's code (valid for an hour, it yields the app's private key and
    # webhook secret) with POST /app-manifests/{code}/conversions: urllib3 at DEBUG logs the request line.
    from pager.admin.clients import AppGitHub
    from pager.errors import GitHubRefused

    code = secrets.token_hex(20)
    github = AppGitHub(a_session(), app_id="0", private_key=private_key_pem, api_url=services_here.url)
    with pytest.raises(GitHubRefused):  # the fake answers 422
        github.convert_manifest(code)
    assert any(code in r.path for r in services_here.received)  # it went over the wire
    logs = debug_logs.everything(caplog, capsys)
    assert f"/app-manifests/{MARK}/conversions" in logs and code not in logs


@pytest.mark.parametrize("name, redacted", [
    ("PAGER_" + "X" * 50 + "_SECRET", True),  # a long name, its rest within the bound
    ("webhook_secret_" + "x" * (redact.NAME_REST - 1), True),  # the rest of the name ("_x…") at the bound
    ("webhook_secret_" + "x" * redact.NAME_REST, False),  # past it: not a name any service writes
])
def test_a_secret_fields_name_is_read_up_to_a_bound(name, redacted):
    # The bound keeps a long run of names (a header anyone may send: "token_token_…") from costing quadratic
    # time: each word that says secret scans at most NAME_REST characters on.
    value = "s3cr3t-value-here"
    assert (value not in redact.redact(f"{name}={value}")) is redacted
