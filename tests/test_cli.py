"""The command line `pager setup` and `pager doctor`, against the fake world (GitHub, Telegram) and moto (AWS).

The commands run as a person runs them, through `pager.cli.main` with a `Context`: the fake world's
session for GitHub and Telegram, moto's CloudFormation, Secrets Manager and DynamoDB, scripted answers
for `input`, and a browser that makes the requests a browser would (it GETs the form served on
127.0.0.1, posts the manifest to the fake github.com, and follows its redirect back). Pure parts (the
manifest's events and permissions, the plan of setup, the chats found in updates, the checks) are
tested on their own; the permission table of docs/deploy.md is compared with the code's.
"""

from __future__ import annotations

import ast
import html
import inspect
import io
import json
import re
import tomllib
import urllib.error
import urllib.request
from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import boto3
import pytest
import yaml
from moto import mock_aws

import pager.github
from pager.admin import manifest as app_manifest
from pager.admin.deployment import (
    PARAMETER_SETTINGS,
    SETTING_NAMES,
    SamConfig,
    Stack,
    Target,
    aws_region,
    format_overrides,
    parse_overrides,
    read_dotenv,
    write_dotenv,
)
from pager.admin.doctor import DeliveryCount, count_deliveries
from pager.admin.form import ManifestForm
from pager.admin.setup import STEPS, WORKFLOWS_QUESTION, Options, State, allowed_users, chats_in, machine_zone
from pager.cli import Context, main
from pager.commands import BOT_COMMANDS
from pager.dynamo import create_table
from pager.permissions import WORKFLOWS
from pager.signals import subscribed_events
from pager_world.faults import Fault
from pager_world.http import HttpRequest, HttpResponse, session_for
from pager_world.world import (
    BOT_TOKEN,
    CONTROL,
    GITHUB_API,
    REPO,
    TELEGRAM_API,
    WEBHOOK_SECRET,
)

ROOT = Path(__file__).resolve().parents[1]
REGION = "us-east-1"
STACK = "pager"
API_ID = "abc123"
API_ROOT = f"https://{API_ID}.execute-api.{REGION}.amazonaws.com"  # the stack's HTTP API: pager's endpoint
GITHUB_HOOK = f"{API_ROOT}/github"
TELEGRAM_HOOK = f"{API_ROOT}/telegram"
OLD_HOST = "https://old.example"  # a web server that once stood in front of a pager, and serves no /github now
TABLE = "pager-Table-1"
STACK_SECRET = "s" * 20 + "SetupGeneratedToken" + "x" * 25  # the secret token setup generates (Context.token here)
SECRET_NAME = f"/pager/{STACK}/secrets"  # the stack's SecureString parameter (its output SecretName)
CHAT = {"id": -1001234, "type": "supergroup", "title": "Fleet", "is_forum": True}
MAINTAINER = {"id": 42, "is_bot": False, "first_name": "Maintainer", "username": "maint"}
MENU = [{"command": command, "description": description} for command, description in BOT_COMMANDS]  # as Telegram keeps it

FIRST_PARAMETERS = {  # a first `make deploy` before the app exists: placeholders where setup fills in
    "GitHubAppId": "pending", "GitHubAppSlug": "pending", "GitHubAppOwner": "", "ControlRepository": CONTROL,
    "TelegramChatId": "@pending", "TelegramThreadId": "", "TelegramAllowedUsers": "",
    "ReleaseBranchPrefixes": "release-please--,changeset-release/", "ReleaseMergeMethod": "squash",
    "GitHubApiUrl": GITHUB_API, "TelegramApiUrl": TELEGRAM_API,
}
QUIET = {"QuietHours": "22:00-07:00", "TimeZone": "Europe/Berlin"}  # as setup keeps them, for the next deploy


# -- the AWS side: moto, and a stack shaped like template.yaml's ----------------------------------------------


class Recorder:
    """A boto3 client that keeps the name of every call made through it."""

    def __init__(self, client: Any, calls: list[str]) -> None:
        self._client, self._calls = client, calls

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._client, name)
        if not callable(attribute) or name.startswith("_"):
            return attribute

        def call(*args: Any, **kwargs: Any) -> Any:
            self._calls.append(name)
            return attribute(*args, **kwargs)

        return call


_clients: dict[str, Any] = {}


def client(service: str) -> Any:
    """A moto client (one per service for the module: building one costs tens of milliseconds)."""
    if service not in _clients:
        _clients[service] = boto3.client(service, region_name=REGION)
    return _clients[service]


@pytest.fixture(scope="module")
def moto():
    mock = mock_aws()
    mock.start()  # moto's fake credentials, for the module
    try:
        yield mock
    finally:
        mock.stop()
        _clients.clear()


@pytest.fixture
def aws(moto):
    """AWS as moto plays it, empty for each test; a factory of clients that records the calls made through them."""
    moto.reset()
    calls: list[str] = []
    def factory(service: str, region: str) -> Any:
        return Recorder(client(service), calls)

    factory.calls = calls  # type: ignore[attr-defined]
    return factory


def deploy(parameters: dict[str, str], *, secret: dict[str, str] | None = None) -> str:
    """The stack as `make deploy` leaves it: its table (with TTL), its outputs, and, when given, the secrets'
    parameter as setup writes it (the stack creates none: CloudFormation cannot make a SecureString); its name."""
    if secret is not None:
        store_secret(SECRET_NAME, secret)
    create_table(client("dynamodb"), TABLE)
    template = {
        "Parameters": {name: {"Type": "String"} for name in parameters},
        "Resources": {"WebhookLogGroup": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/aws/lambda/pager-webhook"}}},
        "Outputs": {"GitHubWebhookUrl": {"Value": GITHUB_HOOK}, "TelegramWebhookUrl": {"Value": TELEGRAM_HOOK},
                    "TableName": {"Value": TABLE}, "SecretName": {"Value": SECRET_NAME}},
    }
    client("cloudformation").create_stack(
        StackName=STACK, TemplateBody=json.dumps(template),
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()])
    return SECRET_NAME


def redeploy(parameters: dict[str, str]) -> None:
    """`make deploy` again, with the parameters of samconfig.local.toml (template.yaml has every one of them: the
    stand-in template gets those the first deploy left to their defaults)."""
    cloudformation = client("cloudformation")
    template = cloudformation.get_template(StackName=STACK)["TemplateBody"]
    template = json.loads(template) if isinstance(template, str) else template
    template["Parameters"].update({name: {"Type": "String"} for name in parameters if name not in template["Parameters"]})
    cloudformation.update_stack(StackName=STACK, TemplateBody=json.dumps(template),
                                Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()])


def guided_samconfig(folder: Path, parameters: dict[str, str]) -> Path:
    """samconfig.local.toml as `sam deploy --guided` writes it."""
    path = folder / "samconfig.local.toml"
    path.write_text(
        "version = 0.1\n[default.deploy.parameters]\n"
        f'stack_name = "{STACK}"\nresolve_s3 = true\ns3_prefix = "pager"\nregion = "{REGION}"\n'
        'confirm_changeset = true\ncapabilities = "CAPABILITY_IAM"\n'
        f"parameter_overrides = {json.dumps(format_overrides(parameters))}\nimage_repositories = []\n")
    return path


def stored_secret(name: str) -> dict[str, str]:
    try:
        return json.loads(client("ssm").get_parameter(Name=name, WithDecryption=True)["Parameter"]["Value"])
    except client("ssm").exceptions.ParameterNotFound:
        return {}


def store_secret(name: str, values: dict[str, str]) -> None:
    client("ssm").put_parameter(Name=name, Value=json.dumps(values), Type="SecureString", Overwrite=True)


# -- the person at the terminal and in the browser -------------------------------------------------------------


class Person:
    """Answers `input` from a script (and fails the test if asked more), and browses like a browser."""

    def __init__(self, world: Any, answers: list[str] = (), secrets: list[str] = ()) -> None:
        self.world, self.answers, self.secrets = world, list(answers), list(secrets)
        self.asked: list[str] = []
        self.visited: list[str] = []

    def input(self, prompt: str) -> str:
        self.asked.append(prompt)
        assert self.answers, f"asked more than the script says: {prompt!r}"
        return self._given(self.answers.pop(0))

    def secret(self, prompt: str) -> str:
        self.asked.append(prompt)
        assert self.secrets, f"asked for a secret the script does not have: {prompt!r}"
        return self._given(self.secrets.pop(0))

    @staticmethod
    def _given(answer: Any) -> str:
        if answer is EOFError:  # the input closed: what `input` and `getpass` raise then
            raise EOFError
        return answer() if callable(answer) else answer  # a callable: what the person does, then answers

    def browse(self, url: str) -> None:
        """GET the form; post its manifest to github.com (the fake's web side); follow the redirect back."""
        self.visited.append(url)
        page = fetch(url)[1]
        action = html.unescape(re.search(r'<form action="([^"]+)"', page).group(1))
        manifest = html.unescape(re.search(r'name="manifest" value="([^"]*)"', page).group(1))
        body = urlencode({"manifest": manifest}).encode()
        answer = self.world.hub.web(HttpRequest("POST", action, {"Content-Type": "application/x-www-form-urlencoded"}, body))
        assert answer.status == 302, answer.body
        status, text = fetch(answer.headers["Location"])
        assert status == 200, text


def fetch(url: str) -> tuple[int, str]:
    """A browser's GET on loopback (urllib: no proxy, nothing mocked)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def run(argv: list[str], world: Any, folder: Path, aws: Any, person: Person | None = None,
        environ: dict[str, str] | None = None) -> tuple[int, str]:
    out = io.StringIO()
    person = person or Person(world)
    context = Context(environ=dict(environ or {}), cwd=folder, stdout=out, input=person.input,
                      secret_input=person.secret, open_browser=person.browse, now=world.clock,
                      sleep=world.clock.sleep, session=session_for({GITHUB_API: world.hub, TELEGRAM_API: world.chat,
                                                                    API_ROOT: world.pager_endpoint, OLD_HOST: not_found}),
                      aws=aws, token=lambda n: STACK_SECRET, etc=folder / "etc")  # no etc/localtime: TZ, else UTC
    return main(argv, context), out.getvalue()


def not_found(request: HttpRequest) -> HttpResponse:
    return HttpResponse(404, b"<!doctype html><title>404 Not Found</title>", {"content-type": "text/html"})


def secrets_of(world: Any, secret_id: str | None = None, *extra: str) -> list[str]:
    """Every secret a run could know: the key (and its lines), webhook secrets, tokens, client secrets."""
    values = [BOT_TOKEN, WEBHOOK_SECRET, STACK_SECRET, *extra]
    for answer in world.hub.conversions:
        values += [answer["pem"], answer["webhook_secret"], answer["client_secret"]]
    if secret_id:
        values += [v for v in stored_secret(secret_id).values() if v]
    lines = [line for value in values for line in value.splitlines() if len(line) > 20 and "PRIVATE KEY" not in line]
    return sorted(set(values + lines))


def assert_no_secret(output: str, secrets: list[str]) -> None:
    leaked = [s[:6] + "…" for s in secrets if s and s in output]
    assert not leaked, f"secrets in the output: {leaked}"


# -- pager setup, end to end -----------------------------------------------------------------------------------


@pytest.fixture
def fresh(make_world, private_key_pem, aws, tmp_path):
    """A stack deployed before the app exists, a bot with its token, a forum group where the maintainer wrote."""
    world = make_world()
    world.hub.app_key = private_key_pem  # the key the manifest flow hands out (no new RSA key per test)
    world.chat.token = BOT_TOKEN
    world.chat.receive("/start@pager_test_bot", chat=CHAT, user=MAINTAINER, thread_id=7)
    world.chat.handle("setWebhook", {"url": "https://old.example/telegram"})  # from an earlier try: in getUpdates' way
    secret_id = deploy(FIRST_PARAMETERS)
    guided_samconfig(tmp_path, FIRST_PARAMETERS)
    return world, secret_id


def test_setup_registers_the_app_from_a_manifest_stores_the_secrets_and_sets_telegrams_webhook(fresh, aws, tmp_path):
    world, secret_id = fresh
    person = Person(world, answers=["", "", "", "", "", ""], secrets=[BOT_TOKEN])  # Enter: no Workflows permission
    code, output = run(["setup"], world, tmp_path, aws, person, {"TZ": "Europe/Berlin"})
    assert code == 0, output

    # the form was served on loopback and its post registered one app, from the code's own tables
    assert len(person.visited) == 1 and re.fullmatch(r"http://127\.0\.0\.1:\d+/", person.visited[0])
    [app] = world.hub.apps_registered
    assert app["events"] == subscribed_events()
    assert WORKFLOWS_QUESTION in person.asked and "workflows" not in app["permissions"]  # asked; no by default
    assert app["permissions"] == app_manifest.needed_permissions()
    assert world.hub.hook["url"] == GITHUB_HOOK and world.hub.hook["active"]
    assert app["owner"]["login"] == world.hub.user and app["external_url"] == f"https://github.test/{CONTROL}"
    [conversion] = world.hub.conversions  # the redirect's code converted once

    # the secrets are in the stack's secret (the generated secret token kept), nothing else
    secret = stored_secret(secret_id)
    assert secret == {"GITHUB_PRIVATE_KEY": conversion["pem"], "GITHUB_WEBHOOK_SECRET": conversion["webhook_secret"],
                      "TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_WEBHOOK_SECRET": STACK_SECRET}

    # the non-secret values wait in samconfig.local.toml for `make deploy`
    parameters = SamConfig(tmp_path / "samconfig.local.toml").parameters()
    assert parameters == {**FIRST_PARAMETERS, "GitHubAppId": str(app["id"]), "GitHubAppSlug": app["slug"],
                          "GitHubAppOwner": "", "TelegramChatId": str(CHAT["id"]), "TelegramThreadId": "7",
                          "TelegramAllowedUsers": "42", **QUIET}
    assert "run `make deploy`" in output

    # Telegram: the old webhook removed for getUpdates, then set at the stack's /telegram with the secret token,
    # for presses and commands; the command menu; a test message in the topic
    methods = [r.path.rsplit("/", 1)[-1] for r in world.chat.requests]
    assert methods.index("deleteWebhook") < methods.index("getUpdates") < methods.index("setWebhook")
    assert world.chat.webhook == {"url": TELEGRAM_HOOK, "secret_token": STACK_SECRET,
                                  "allowed_updates": ["callback_query", "message"]}
    assert world.chat.handle("getWebhookInfo", {})[1]["result"]["allowed_updates"] == ["message", "callback_query"]
    assert world.chat.menu(CHAT["id"]) == list(BOT_COMMANDS) and world.chat.menu() == []  # the chat's alone
    assert "set the bot's command menu in the chat (what Telegram lists after / there): /status, /mute, /unmute, /help" in output
    [message] = world.chat.chat()
    assert message.chat_id == str(CHAT["id"]) and message.thread_id == 7 and "set up" in message.text

    # and what is left: installing is done already in this world (the control repository has the app)
    assert "check it all with `make doctor`" in output
    assert_no_secret(output, secrets_of(world, secret_id))


def test_setup_run_again_finds_everything_done_and_changes_nothing(fresh, aws, tmp_path):
    world, secret_id = fresh
    assert run(["setup"], world, tmp_path, aws, Person(world, ["", "", "", "", "", ""], [BOT_TOKEN]))[0] == 0
    samconfig = (tmp_path / "samconfig.local.toml").read_text()
    secret, webhook, sent = stored_secret(secret_id), dict(world.chat.webhook), list(world.chat.sent)
    world.chat.requests.clear()
    aws.calls.clear()

    code, output = run(["setup"], world, tmp_path, aws, Person(world))  # asks nothing: the script is empty
    assert code == 0, output
    assert len(world.hub.apps_registered) == 1 and len(world.hub.conversions) == 1
    assert stored_secret(secret_id) == secret and "put_parameter" not in aws.calls
    assert (tmp_path / "samconfig.local.toml").read_text() == samconfig
    called = {r.path.rsplit("/", 1)[-1] for r in world.chat.requests}
    assert called <= {"getMe", "getWebhookInfo", "getMyCommands"}, called  # nothing set, nothing sent
    assert world.chat.webhook == webhook and world.chat.sent == sent
    assert output.count("✓") >= 8 and "✗" not in output and "→" not in output
    assert_no_secret(output, secrets_of(world, secret_id))


def test_setup_after_a_pager_without_commands_lets_messages_through_the_webhook_and_sets_the_menu(healthy, aws, tmp_path):
    world, secret_id = healthy
    world.chat.handle("setWebhook", {"url": TELEGRAM_HOOK, "secret_token": STACK_SECRET, "allowed_updates": ["callback_query"]})
    world.chat.handle("deleteMyCommands", {"scope": {"type": "chat", "chat_id": CHAT["id"]}})
    world.chat.requests.clear()

    code, output = run(["setup"], world, tmp_path, aws, Person(world))  # asks nothing
    assert code == 0, output
    called = [r.path.rsplit("/", 1)[-1] for r in world.chat.requests]
    # the webhook set again, so the test message setup sends whenever it changed the webhook
    assert sorted(set(called) - {"getMe", "getWebhookInfo", "getMyCommands"}) == ["sendMessage", "setMyCommands",
                                                                                 "setWebhook"]
    assert world.chat.handle("getWebhookInfo", {})[1]["result"]["allowed_updates"] == ["message", "callback_query"]
    assert world.chat.menu(CHAT["id"]) == list(BOT_COMMANDS)
    code, output = run(["setup"], world, tmp_path, aws, Person(world))
    assert code == 0 and "(button presses and commands)" in output and "command menu lists /status" in output, output


def test_setup_moves_the_menu_an_earlier_setup_set_for_every_chat_into_the_chat_alone(healthy, aws, tmp_path):
    world, secret_id = healthy
    world.chat.handle("deleteMyCommands", {"scope": {"type": "chat", "chat_id": CHAT["id"]}})
    world.chat.handle("setMyCommands", {"commands": MENU})  # the default scope: every private chat listed them
    world.chat.add_chat(MAINTAINER["id"], "private")
    assert world.chat.handle("getMyCommands", {"scope": {"type": "chat", "chat_id": MAINTAINER["id"]}})[1]["result"] == []

    code, output = run(["setup"], world, tmp_path, aws, Person(world))  # asks nothing
    assert code == 0, output
    assert world.chat.menu(CHAT["id"]) == list(BOT_COMMANDS) and world.chat.menu() == []
    assert "removed the command menu from every other chat (the default scope an earlier setup set" in output
    code, output = doctor(world, tmp_path, aws)
    assert code == 0 and "no other chat lists them" in output, output
    world.chat.requests.clear()
    assert run(["setup"], world, tmp_path, aws, Person(world))[0] == 0  # done: nothing set again
    assert not {"setMyCommands", "deleteMyCommands"} & {r.path.rsplit("/", 1)[-1] for r in world.chat.requests}


def test_setup_removes_pagers_menu_for_every_chat_and_leaves_the_chats_own_as_it_is(healthy, aws, tmp_path):
    world, secret_id = healthy
    world.chat.handle("setMyCommands", {"commands": MENU})  # beside the chat's own, which is right
    world.chat.requests.clear()
    code, output = run(["setup"], world, tmp_path, aws, Person(world))
    assert code == 0 and world.chat.menu() == [] and world.chat.menu(CHAT["id"]) == list(BOT_COMMANDS), output
    called = [r.path.rsplit("/", 1)[-1] for r in world.chat.requests]
    assert "deleteMyCommands" in called and "setMyCommands" not in called, called


def test_setup_leaves_a_menu_for_every_chat_that_is_not_pagers_and_doctor_notes_it(healthy, aws, tmp_path):
    world, secret_id = healthy
    world.chat.handle("setMyCommands", {"commands": [{"command": "start", "description": "Say hello"}]})
    code, output = run(["setup"], world, tmp_path, aws, Person(world))
    assert code == 0 and world.chat.menu() == [("start", "Say hello")], output
    code, output = doctor(world, tmp_path, aws)
    line = next(line for line in output.splitlines() if "Telegram commands" in line)
    assert code == 0 and line.startswith("ℹ Telegram commands: the menu in the chat") and "lists /start" in line, output


def test_setup_never_registers_a_second_app_when_the_key_of_the_one_set_is_missing(healthy, aws, tmp_path):
    world, secret_id = healthy
    store_secret(secret_id, {**stored_secret(secret_id), "GITHUB_PRIVATE_KEY": ""})

    code, output = run(["setup"], world, tmp_path, aws, Person(world))
    assert code == 1
    assert "never registers a second app" in output and "Generate a private key" in output
    assert len(world.hub.apps_registered) == 1 and not world.hub.conversions


def test_setup_never_registers_a_second_app_when_a_key_is_stored_but_its_id_was_lost(fresh, aws, tmp_path, private_key_pem):
    world, secret_id = fresh  # as if a run had stopped after storing the key, before writing the app's id
    store_secret(secret_id, {**stored_secret(secret_id), "GITHUB_PRIVATE_KEY": private_key_pem})

    code, output = run(["setup"], world, tmp_path, aws, Person(world))
    assert code == 1 and "holds an app's private key, but no GITHUB_APP_ID is set" in output
    assert not world.hub.apps_registered
    assert_no_secret(output, secrets_of(world, secret_id))


def test_setup_finds_a_channel_posted_in_after_its_question_even_when_a_webhook_narrowed_the_bots_updates(
        make_world, private_key_pem, aws, tmp_path):
    # An earlier webhook set the bot's allowed_updates to presses and messages; Telegram keeps that setting
    # for getUpdates unless told otherwise, and does not keep a channel's post the setting leaves out.
    world = make_world()
    world.hub.app_key = private_key_pem
    world.chat.handle("setWebhook", {"url": "https://old.example/telegram", "allowed_updates": ["callback_query", "message"]})

    def post_then_enter() -> str:
        world.chat.receive("post", chat={"id": -1005, "type": "channel", "title": "Releases", "username": "releases"})
        world.chat.receive("hi", chat={"id": 42, "type": "private", "first_name": "Maintainer"}, user=MAINTAINER)
        return ""

    environ = {"GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API}
    person = Person(world, answers=[CONTROL, "", "n", post_then_enter, "", "", ""], secrets=[BOT_TOKEN])
    code, output = run(["setup", "--local", "https://tunnel.example"], world, tmp_path, aws, person, environ)
    assert code == 0, output
    assert read_dotenv(tmp_path / ".env")["TELEGRAM_CHAT_ID"] == "-1005"


def test_setup_for_make_serve_writes_dotenv_for_an_organizations_app(make_world, private_key_pem, aws, tmp_path):
    world = make_world()
    world.hub.app_key = private_key_pem
    world.chat.receive("post", chat={"id": -1005, "type": "channel", "title": "Releases", "username": "releases"})
    world.chat.receive("hi", chat={"id": 42, "type": "private", "first_name": "Maintainer"}, user=MAINTAINER)
    del world.hub.installations[CONTROL]  # not installed yet: setup says where to install it
    environ = {"GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API}
    person = Person(world, answers=[CONTROL, "y", "", "", "", "none"], secrets=[BOT_TOKEN])  # y: its releases change workflows
    code, output = run(["setup", "--local", "https://tunnel.example", "--org", "acme"], world, tmp_path, aws, person,
                       environ)
    assert code == 0, output
    [app] = world.hub.apps_registered
    assert app["owner"] == {**app["owner"], "login": "acme", "type": "Organization"}
    assert app["permissions"] == {**app_manifest.needed_permissions(), "workflows": "write"}
    env = read_dotenv(tmp_path / ".env")
    assert env["GITHUB_PRIVATE_KEY"] == private_key_pem and env["GITHUB_APP_OWNER"] == "acme"
    assert env["TELEGRAM_CHAT_ID"] == "-1005" and env["TELEGRAM_ALLOWED_USERS"] == "42"
    assert env["QUIET_HOURS"] == "none" and env["TIMEZONE"] == "UTC"  # none, as chosen: never asked again
    assert re.fullmatch(r"[A-Za-z0-9_-]{1,256}", env["TELEGRAM_WEBHOOK_SECRET"])
    assert (tmp_path / ".env").stat().st_mode & 0o077 == 0
    assert world.hub.hook["url"] == "https://tunnel.example/github"
    assert f"install the app: https://github.test/apps/{app['slug']}/installations/new" in output
    assert "make deploy" not in output
    assert '  - check it all with `make doctor DOCTOR_ARGS="--local https://tunnel.example"`' in output, output
    assert world.chat.webhook["url"] == "https://tunnel.example/telegram"
    assert world.chat.webhook["secret_token"] == env["TELEGRAM_WEBHOOK_SECRET"]
    assert "no command menu in the chat: a channel takes none" in output and world.chat.commands == {}
    assert_no_secret(output, secrets_of(world, None, env["TELEGRAM_WEBHOOK_SECRET"]))
    # and a second run changes nothing here either
    before = (tmp_path / ".env").read_text()
    assert run(["setup", "--local", "https://tunnel.example"], world, tmp_path, aws, Person(world), environ)[0] == 0
    assert (tmp_path / ".env").read_text() == before and len(world.hub.apps_registered) == 1


def test_setup_without_a_stack_or_a_local_url_says_what_to_do(make_world, aws, tmp_path):
    world = make_world()
    code, output = run(["setup"], world, tmp_path, aws)
    assert code == 1 and "no stack named pager" in output, output
    assert 'set up for `make serve`: `make setup SETUP_ARGS="--local <tunnel URL>"`' in output  # pager is not on PATH


def test_no_message_names_a_pager_command_the_person_cannot_run():
    """`pager` lives in .venv/bin, off the PATH: every line that says what to run names a make target (`make setup`,
    `make doctor DOCTOR_ARGS=--local`, ...). Left: the lines that head a command's own output, and the words the
    docs' tables repeat."""
    kept = {"pager's secrets (pager setup)",  # the secrets' parameter's description in Parameter Store: who wrote it
            WORKFLOWS.why}  # docs/deploy.md's permission table, compared with it word for word
    found = []
    for root in (ROOT / "layers" / "pager" / "pager", ROOT / "sim" / "pager_local"):
        for path in sorted(root.rglob("*.py")):
            tree = ast.parse(path.read_text())
            docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                          if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                          and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
            found += [f"{path.name}:{node.lineno}: {node.value[:80]!r}" for node in ast.walk(tree)
                      if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
                      and re.search(r"pager (setup|doctor|where|remove)", node.value)
                      and not re.fullmatch(r"pager (setup|doctor|remove): (no stack named )?", node.value)
                      and node.value not in kept]
    assert found == []


def test_the_form_refuses_a_redirect_without_this_runs_state_and_keeps_the_first_good_code():
    form = ManifestForm("the-state").start()
    try:
        form.show(action="https://github.test/settings/apps/new?state=the-state", manifest={"name": "x"}, owner="")
        status, page = fetch(form.url)
        assert status == 200 and 'name="manifest"' in page
        assert fetch(form.redirect_url + "?code=evil&state=other")[0] == 400 and form.code is None
        assert fetch(form.redirect_url + "?code=good&state=the-state")[0] == 200
        assert fetch(form.redirect_url + "?code=later&state=the-state")[0] == 200
        assert form.code == "good" and form.got.is_set()
    finally:
        form.stop()


# -- pager doctor ----------------------------------------------------------------------------------------------


@pytest.fixture
def healthy(make_world, private_key_pem, aws, tmp_path):
    """A deployment as setup and `make deploy` leave it, with a day of deliveries."""
    return set_up(make_world(), private_key_pem, tmp_path, QUIET)


@pytest.fixture
def unquiet(make_world, private_key_pem, aws, tmp_path):
    """The same, with no quiet hours chosen: set up before setup asked for them, or by hand with Enter at the
    guided deploy's QuietHours."""
    return set_up(make_world(), private_key_pem, tmp_path, {})


def set_up(world: Any, pem: str, folder: Path, quiet: dict[str, str]) -> tuple[Any, str]:
    app = world.hub.register_app(
        app_manifest.manifest(name="pager-test", homepage=f"https://github.test/{CONTROL}", webhook_url=GITHUB_HOOK,
                              redirect_url="http://127.0.0.1:1/back"), app_id=12345, pem=pem, webhook_secret=WEBHOOK_SECRET)
    parameters = {**FIRST_PARAMETERS, "GitHubAppId": "12345", "GitHubAppSlug": app["slug"],
                  "TelegramChatId": str(CHAT["id"]), "TelegramAllowedUsers": "42", **quiet}
    secret_id = deploy(parameters, secret={"GITHUB_PRIVATE_KEY": pem, "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
                                     "TELEGRAM_BOT_TOKEN": BOT_TOKEN, "TELEGRAM_WEBHOOK_SECRET": STACK_SECRET})
    guided_samconfig(folder, parameters)
    world.chat.token = BOT_TOKEN
    world.chat.add_chat(CHAT["id"], "supergroup", forum=True, topics=(7,), title=CHAT["title"])  # the bot is in the chat
    world.chat.handle("setWebhook", {"url": TELEGRAM_HOOK, "secret_token": STACK_SECRET,
                                     "allowed_updates": ["callback_query", "message"]})
    world.chat.handle("setMyCommands", {"commands": MENU, "scope": {"type": "chat", "chat_id": CHAT["id"]}})
    for status in (200, 200, 502, 200):
        world.hub.record(world.hub.new_guid(), "issues", "opened", 1, status)
    world.advance(10)
    return world, secret_id


def doctor(world: Any, folder: Path, aws: Any, *argv: str) -> tuple[int, str]:
    return run(["doctor", *argv], world, folder, aws)


def test_doctor_against_a_healthy_deployment_exits_0_with_every_check_holding(healthy, aws, tmp_path):
    world, secret_id = healthy
    code, output = doctor(world, tmp_path, aws)
    assert code == 0, output
    assert "✗" not in output and "skipped" not in output
    for expected in ("settings: complete and well-formed", "GitHub accepts the app's JWT: pager-test (id 12345)",
                     "events: the app subscribes to all 11", "permissions: the app holds all 8",
                     f"webhook: active, JSON, signed, at {GITHUB_HOOK}",
                     "✓ pager's endpoint answered GitHub's signed ping: 200", f"on the control repository {CONTROL}",
                     "on 2 repositories", "deliveries in the last day: 4, 1 failed, 0 refused with 401",
                     "Telegram accepts the bot token: @pager_test_bot", f"Telegram webhook: {TELEGRAM_HOOK}",
                     f"Telegram commands: the menu in the chat {CHAT['id']} lists /status, /mute, /unmute, /help; no other "
                     "chat lists them",
                     f"chat: the bot may post in the chat {CHAT['id']}", f"table: {TABLE} is active, with its TTL"):
        assert expected in output, (expected, output)
    assert_no_secret(output, secrets_of(world, secret_id))


def test_a_token_left_in_the_shell_is_neither_stored_by_setup_nor_checked_by_doctor_in_the_stacks_place(
        healthy, aws, tmp_path):
    world, secret_id = healthy
    stale = "999999:revoked-token-from-an-old-bot-abcdefghijkl"
    code, output = run(["setup"], world, tmp_path, aws, environ={"TELEGRAM_BOT_TOKEN": stale})
    assert code == 0, output
    assert stored_secret(secret_id)["TELEGRAM_BOT_TOKEN"] == BOT_TOKEN  # the stack's, which works, is kept
    assert "TELEGRAM_BOT_TOKEN in your environment differs from" in output
    secret = stored_secret(secret_id)
    secret.pop("TELEGRAM_BOT_TOKEN")
    store_secret(secret_id, secret)  # the functions have no bot token now
    code, output = doctor(world, tmp_path, aws)
    code_shell, output_shell = run(["doctor"], world, tmp_path, aws, environ={"TELEGRAM_BOT_TOKEN": BOT_TOKEN})
    assert code == code_shell == 1 and "✗" in output_shell  # the shell's token does not hide what the stack lacks
    assert_no_secret(output_shell, secrets_of(world, secret_id, stale))


@pytest.mark.parametrize("kind, service", [("github-5xx", "GitHub"), ("telegram-unreachable", "Telegram")])
def test_setup_while_github_or_telegram_does_not_answer_stops_and_asks_to_replace_nothing(healthy, aws, tmp_path,
                                                                                        kind, service):
    world, secret_id = healthy
    before = stored_secret(secret_id)
    world.faults.fail(kind.split("-")[0], None, kind=kind, count=10**6)
    code, output = run(["setup"], world, tmp_path, aws)  # the script answers no question: none may be asked
    assert code == 1 and f"✗ {service} could not be asked" in output and "nothing to replace" in output
    assert "private key" not in output and "token" not in output.split(f"✗ {service}")[1]
    assert stored_secret(secret_id) == before


def test_doctor_names_the_supergroup_telegram_made_of_the_chat(healthy, aws, tmp_path):
    world, secret_id = healthy
    world.chat.add_chat(CHAT["id"], "group", title=CHAT["title"])  # a basic group, which Telegram then upgrades
    new = world.chat.migrate(CHAT["id"])
    code, output = doctor(world, tmp_path, aws)
    assert code == 1
    line = next(line for line in output.splitlines() if line.startswith("✗ chat"))
    assert f"Telegram made the group {CHAT['id']} the supergroup {new}" in line and "the bot may post there" in line
    assert f"fix: set TELEGRAM_CHAT_ID (the TelegramChatId parameter) to {new}" in output
    assert f"✗ Telegram commands: the menu in the chat {new} lists nothing" in output  # the supergroup's, a new chat's
    assert_no_secret(output, secrets_of(world, secret_id))


def test_doctor_names_the_move_pager_recorded_when_telegram_does_not_tell_it(healthy, aws, tmp_path):
    # The Bot API server answers "upgraded" to calls that write; what getChatMember of the bot itself gets
    # in an upgraded group is undocumented: pager's own record of the move, in its table, tells doctor too.
    import boto3

    world, secret_id = healthy
    table = boto3.client("dynamodb", region_name="us-east-1").list_tables()["TableNames"][0]
    data = json.dumps({"from": str(CHAT["id"]), "to": "-1009876543210", "at": 1})
    boto3.client("dynamodb", region_name="us-east-1").put_item(TableName=table, Item={
        "pk": {"S": "telegram#chat"}, "sk": {"S": "#"}, "version": {"N": "1"}, "data": {"S": data}})
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and f"Telegram made the group {CHAT['id']} the supergroup -1009876543210" in output
    assert "fix: set TELEGRAM_CHAT_ID (the TelegramChatId parameter) to -1009876543210" in output


def _no_event(world, secret_id, folder):
    world.hub.app["events"].remove("discussion")


def _no_permission(world, secret_id, folder):
    world.hub.app["permissions"]["contents"] = "read"


def _not_installed(world, secret_id, folder):
    del world.hub.installations[CONTROL]


def _not_accepted(world, secret_id, folder):
    world.hub.installation_permissions[1] = {"metadata": "read", "issues": "read"}


def _telegram_error(world, secret_id, folder):
    world.chat.webhook_error = (int(world.now) - 600, "Wrong response from the webhook: 401 Unauthorized")
    world.chat.pending_update_count = 3


def _refused_401(world, secret_id, folder):
    world.hub.record(world.hub.new_guid(), "issues", "opened", 1, 401)


def _kept_failing(world, secret_id, folder):
    guid = world.hub.new_guid()
    for attempt in range(3):
        world.hub.record(guid, "workflow_run", "completed", 1, 502, redelivery=attempt > 0)


def _inactive(world, secret_id, folder):
    world.hub.hook["active"] = False


def _elsewhere(world, secret_id, folder):
    world.hub.hook["url"] = "https://old.example/github"


def _wrong_key(world, secret_id, folder):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    other = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    store_secret(secret_id, {**stored_secret(secret_id), "GITHUB_PRIVATE_KEY": other})


def _token_refused(world, secret_id, folder):
    world.chat.token = "654321:another-bot"


def _bot_kicked(world, secret_id, folder):
    world.chat.kicked = True


def _restricted(world, secret_id, folder):
    world.chat.members[world.chat.bot["id"]] = {"status": "restricted", "can_send_messages": False}


def _only_administrators_write(world, secret_id, folder):  # the group's default permissions: members may not send
    world.chat.set_permissions(CHAT["id"], can_send_messages=False)


def _restricted_where_only_administrators_write(world, secret_id, folder):  # its own restriction is what to lift
    world.chat.members[world.chat.bot["id"]] = {"status": "restricted", "can_send_messages": False}
    world.chat.set_permissions(CHAT["id"], can_send_messages=False)


def _group_permissions_unread(world, secret_id, folder):
    world.chat.fail("^getChat$", 502, count=10)  # (not getChatMember)


def _no_telegram_webhook(world, secret_id, folder):
    world.chat.handle("deleteWebhook", {})


def _presses_only(world, secret_id, folder):  # set up before the chat's commands
    world.chat.handle("setWebhook", {"url": TELEGRAM_HOOK, "secret_token": STACK_SECRET, "allowed_updates": ["callback_query"]})


def _no_commands(world, secret_id, folder):
    world.chat.handle("deleteMyCommands", {"scope": {"type": "chat", "chat_id": CHAT["id"]}})


def _other_descriptions(world, secret_id, folder):
    world.chat.handle("setMyCommands", {"commands": [{**c, "description": "old"} for c in MENU],
                                        "scope": {"type": "chat", "chat_id": CHAT["id"]}})


def _in_every_chat(world, secret_id, folder):  # as setup set them before: every private chat with the bot lists them
    world.chat.handle("setMyCommands", {"commands": MENU})


def _ttl_off(world, secret_id, folder):
    client("dynamodb").update_time_to_live(
        TableName=TABLE, TimeToLiveSpecification={"Enabled": False, "AttributeName": "ttl"})


def _not_deployed(world, secret_id, folder):
    path = folder / "samconfig.local.toml"
    path.write_text(path.read_text().replace('GitHubAppSlug=\\"pager-test\\"', 'GitHubAppSlug=\\"pager-new\\"'))


def _missing_setting(world, secret_id, folder):
    store_secret(secret_id, {**stored_secret(secret_id), "TELEGRAM_BOT_TOKEN": ""})


@pytest.mark.parametrize("break_it,named", [
    (_no_event, "events: the app does not subscribe to discussion"),
    (_no_permission, "permissions: the app lacks Contents (read and write)"),
    (_not_installed, f"the app is not installed on the control repository {CONTROL}"),
    (_not_accepted, "has not accepted"),
    (_telegram_error, ("Telegram webhook: its last delivery failed 10 min ago: Wrong response from the webhook: 401 "
                       "Unauthorized; 3 updates wait")),
    (_refused_401, "1 refused with 401"),
    (_kept_failing, "1 kept failing"),
    (_inactive, "webhook: not active"),
    (_elsewhere, f"it points at https://old.example/github, not at {GITHUB_HOOK}"),
    (_wrong_key, "GitHub refuses the app's JWT"),
    (_token_refused, "Telegram refuses the bot token"),
    (_bot_kicked, "chat: the bot cannot see the chat"),
    (_restricted, "chat: the bot may not post in the chat"),
    (_only_administrators_write, "(its members may not send messages)"),
    (_restricted_where_only_administrators_write, f"chat: the bot may not post in the chat {CHAT['id']} (it is restricted)"),
    (_group_permissions_unread, "Telegram could not be asked (it answered 502)"),
    (_no_telegram_webhook, "Telegram webhook: none is set"),
    (_presses_only, "Telegram webhook: message is not among its allowed updates, so the chat's commands never reach"),
    (_no_commands, f"Telegram commands: the menu in the chat {CHAT['id']} lists nothing, not /status, /mute, /unmute, /help"),
    (_other_descriptions, f"Telegram commands: the menu in the chat {CHAT['id']} lists /status, /mute, /unmute, /help, "
                          "with other descriptions"),
    (_in_every_chat, "but every other chat with the bot lists /status, /mute, /unmute, /help too (the default scope), "
                     "where each is answered “not allowed”"),
    (_ttl_off, f"table: {TABLE} has no TTL"),
    (_not_deployed, "samconfig.local.toml has GitHubAppSlug the stack does not have yet"),
    (_missing_setting, "settings: missing TELEGRAM_BOT_TOKEN"),
], ids=lambda value: value.__name__.strip("_") if callable(value) else "")
def test_doctor_names_each_misconfiguration_with_its_fix_and_exits_non_zero(healthy, aws, tmp_path, break_it, named):
    world, secret_id = healthy
    break_it(world, secret_id, tmp_path)
    code, output = doctor(world, tmp_path, aws)
    assert code == 1, output
    failing = [line for line in output.splitlines() if line.startswith("✗")]
    assert any(named in line for line in failing), (named, output)
    fix = output.splitlines()[output.splitlines().index(next(line for line in failing if named in line)) + 1]
    assert fix.startswith("    fix: ") and len(fix) > 20, fix
    assert_no_secret(output, secrets_of(world, secret_id))


def _secret_changed_where_pager_reads_it(world, secret_id, folder):  # pager's endpoint still checks with the one before
    store_secret(secret_id, {**stored_secret(secret_id), "GITHUB_WEBHOOK_SECRET": ANOTHER_SECRET})


def _function_fails(world, secret_id, folder):
    world.down = 502


def _no_answer_in_time(world, secret_id, folder):
    world.down = 0


def _redirected(world, secret_id, folder):
    world.down = 301  # a domain in front of pager moved: GitHub does not follow the redirect


def _at_an_old_host(world, secret_id, folder):
    world.hub.hook["url"] = f"{OLD_HOST}/github"


ANOTHER_SECRET = "a-webhook-secret-set-a-minute-ago"


@pytest.mark.parametrize("break_it, line, fix", [
    (_secret_changed_where_pager_reads_it,
     "✗ pager's endpoint answered GitHub's signed ping: 401: the secret it checks signatures with is not GITHUB_WEBHOOK_SECRET",
     "    fix: make the app's Webhook secret (on https://github.test/settings/apps/pager-test: GitHub signs with it) and "
     "GITHUB_WEBHOOK_SECRET in the secret of the stack pager (pager checks with it) the same; the functions read a changed "
     "secret within ten minutes (at once: docs/operations.md, Changing a secret)"),
    (_function_fails, "✗ pager's endpoint answered GitHub's signed ping: 502: the webhook function fails",
     "    fix: see why in the webhook function's log (`make logs FUNCTION=WebhookFunction`); what GitHub delivers meanwhile "
     "fails alike, and the sweep brings it back once the endpoint answers"),
    (_no_answer_in_time, "✗ pager's endpoint gave no answer to GitHub's signed ping within 10 s",
     "    fix: see why in the webhook function's log (`make logs FUNCTION=WebhookFunction`); what GitHub delivers meanwhile "
     f"fails alike, and the sweep brings it back once the endpoint answers (no line of the ping there: {GITHUB_HOOK} is "
     "not reached)"),
    (_redirected, "✗ pager's endpoint answered GitHub's signed ping: 301: a redirect, which GitHub does not follow: pager never runs",
     "    fix: give the app's webhook the URL the redirect leads to, on https://github.test/settings/apps/pager-test"),
    (_at_an_old_host, f"✗ pager's endpoint answered GitHub's signed ping: 404: nothing of pager's answers at {OLD_HOST}/github",
     f"    fix: GitHub delivers to {OLD_HOST}/github, the stack's URL is {GITHUB_HOOK} (its output GitHubWebhookUrl): set "
     "the Webhook URL on https://github.test/settings/apps/pager-test to it, Save changes"),
], ids=lambda value: value.__name__.strip("_") if callable(value) else "")
def test_doctor_pings_pagers_endpoint_where_github_delivers_and_says_what_its_answer_means(healthy, aws, tmp_path,
                                                                                           break_it, line, fix):
    world, secret_id = healthy
    break_it(world, secret_id, tmp_path)
    code, output = doctor(world, tmp_path, aws)
    lines = output.splitlines()
    assert code == 1 and line in lines, output
    assert lines[lines.index(line) + 1] == fix
    assert_no_secret(output, secrets_of(world, secret_id, ANOTHER_SECRET))


@pytest.mark.parametrize("change, line", [
    ({"url": ""}, "ℹ pager's endpoint: not pinged: the app has no webhook URL, so GitHub delivers nothing"),
    ({"active": False}, f"ℹ pager's endpoint: not pinged: the app's webhook is not active, so GitHub delivers nothing to {GITHUB_HOOK}"),
])
def test_doctor_pings_nothing_where_github_delivers_nothing_and_says_so(healthy, aws, tmp_path, change, line):
    world, secret_id = healthy
    world.hub.hook.update(change)
    code, output = doctor(world, tmp_path, aws)
    lines = output.splitlines()
    assert line in lines, output
    assert lines[lines.index(line) + 1] == "    how: once the webhook line holds, `make doctor` pings it"
    assert code == 1 and any(line.startswith("✗ webhook: ") for line in lines)  # which says what to set


def test_doctor_for_make_serve_pings_with_the_env_files_secret_and_skips_the_ping_without_the_apps_key(
        healthy, aws, tmp_path):
    world, secret_id = healthy
    values = stored_secret(secret_id)
    settings = {"GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test", "TELEGRAM_CHAT_ID": str(CHAT["id"]),
                "CONTROL_REPOSITORY": CONTROL, "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API}
    write_dotenv(tmp_path / ".env", {**values, **settings})
    world.down = 503
    code, output = doctor(world, tmp_path, aws, "--local")
    lines = output.splitlines()
    line = "✗ pager's endpoint answered GitHub's signed ping: 503: the webhook function fails"
    assert code == 1 and line in lines, output
    assert lines[lines.index(line) + 1].startswith("    fix: see why in `make serve`'s output (is it running, and the "
                                                   "tunnel in front of it?)")
    (tmp_path / ".env").unlink()
    write_dotenv(tmp_path / ".env", {**{k: v for k, v in values.items() if k != "GITHUB_PRIVATE_KEY"}, **settings})
    code, output = doctor(world, tmp_path, aws, "--local")
    assert "– pager's endpoint: skipped (needs GITHUB_APP_ID and GITHUB_PRIVATE_KEY)" in output.splitlines(), output
    assert_no_secret(output, secrets_of(world, secret_id))


@pytest.mark.parametrize("kind, service, said", [
    ("github-unreachable", "GitHub", "GitHub could not be asked (no answer)"),
    ("github-5xx", "GitHub", "GitHub could not be asked (it answered 502)"),
    ("telegram-unreachable", "Telegram", "Telegram could not be asked (no answer)"),
    ("telegram-5xx", "Telegram", "Telegram could not be asked (it answered 502)"),
])
def test_doctor_tells_a_service_it_could_not_reach_from_one_that_refuses_and_asks_to_replace_nothing(
        healthy, aws, tmp_path, kind, service, said):
    world, secret_id = healthy
    world.faults.fail(kind.split("-")[0], None, kind=kind, count=10**6)
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and said in output, output
    assert "refuses" not in output and "generate one" not in output and "@BotFather" not in output
    fix = output.splitlines()[output.splitlines().index(next(line for line in output.splitlines() if said in line)) + 1]
    assert "nothing to replace" in fix and "network" in fix, fix
    assert_no_secret(output, secrets_of(world, secret_id))


@pytest.mark.parametrize("fault, said, fix", [
    (Fault(200, b"<!doctype html><p>Sign in</p>", {"content-type": "text/html"}), "what answered at https://api.github.test is not its API",
     "check GITHUB_API_URL (GitHub Enterprise Server: https://<host>/api/v3)"),
    (Fault(429, {"message": "API rate limit exceeded"}, {"retry-after": "60"}), "GitHub limits the rate of the app's calls",
     "wait 60 s and run `make doctor` again"),
    (Fault(401, {"message": "'Expiration time' claim ('exp') is too far in the future"}),
     "GitHub refuses the app's JWT for its times", "this machine's clock is off"),
])
def test_doctor_says_what_is_wrong_when_github_answers_but_not_as_its_api(healthy, aws, tmp_path, fault, said, fix):
    world, secret_id = healthy
    world.faults.fail("github", r"^GET /app$", fault=fault, count=10**6)
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and said in output, output
    line = next(line for line in output.splitlines() if said in line)
    assert fix in output.splitlines()[output.splitlines().index(line) + 1]
    assert "generate one" not in output and "(DNS, proxy, firewall)" not in output


def test_doctor_tells_a_key_that_does_not_load_from_githubs_refusal(healthy, aws, tmp_path):
    world, secret_id = healthy
    store_secret(secret_id, {**stored_secret(secret_id), "GITHUB_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----"})
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and "GITHUB_PRIVATE_KEY does not load as the app's key" in output, output
    assert "GitHub refuses" not in output


def test_doctor_names_every_settings_problem_in_one_pass(healthy, aws, tmp_path):
    world, secret_id = healthy
    parameters = SamConfig(tmp_path / "samconfig.local.toml").parameters()
    guided_samconfig(tmp_path, {**parameters, "ControlRepository": "pager", "SweepMaxAttempts": "0"})
    store_secret(secret_id, {**stored_secret(secret_id), "TELEGRAM_BOT_TOKEN": "", "TELEGRAM_WEBHOOK_SECRET": "has spaces"})
    code, output = doctor(world, tmp_path, aws)
    [line] = [line for line in output.splitlines() if line.startswith("✗ settings")]
    for named in ("missing TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET is not", "CONTROL_REPOSITORY is not",
                  "SWEEP_MAX_ATTEMPTS must be at least 1"):
        assert named in line, (named, line)
    assert code == 1 and "has spaces" not in output


def test_doctor_without_an_aws_region_reads_the_env_file_and_says_how_to_name_one(healthy, tmp_path):
    import botocore.exceptions

    world, secret_id = healthy
    (tmp_path / "samconfig.local.toml").unlink()

    def no_region(service: str, region: str) -> Any:
        assert not region
        raise botocore.exceptions.NoRegionError()

    write_dotenv(tmp_path / ".env", {**stored_secret(secret_id), "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
                                     "TELEGRAM_CHAT_ID": str(CHAT["id"]), "CONTROL_REPOSITORY": CONTROL,
                                     "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API})
    code, output = doctor(world, tmp_path, no_region)
    assert "no AWS region to look for the stack in (pass --region, set AWS_REGION" in output, output
    assert "✓ settings: complete and well-formed, read from" in output and ".env" in output
    assert code == 0, output


def test_doctor_for_a_stack_named_without_a_region_says_so_and_never_claims_to_read_env(healthy, tmp_path):
    import botocore.exceptions

    world, _ = healthy
    (tmp_path / "samconfig.local.toml").unlink()

    def no_region(service: str, region: str) -> Any:
        raise botocore.exceptions.NoRegionError()

    code, output = doctor(world, tmp_path, no_region, "--stack", "mystack")
    assert code == 1 and output.startswith("pager doctor: the stack mystack\n"), output
    assert "no AWS region to look for the stack in" in output and "instead" not in output.splitlines()[1], output


def test_doctor_after_setup_and_make_deploy_exits_0_and_every_call_made_is_documented(fresh, aws, tmp_path):
    world, secret_id = fresh
    assert run(["setup"], world, tmp_path, aws, Person(world, ["", "", "", "", "", ""], [BOT_TOKEN]))[0] == 0
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and "run `make deploy`" in output  # the app's id is not deployed yet
    redeploy(SamConfig(tmp_path / "samconfig.local.toml").parameters())
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and "✗ pager's endpoint answered GitHub's signed ping: 401" in output  # still the secret before
    functions_read_the_stored_secret(world, secret_id)
    code, output = doctor(world, tmp_path, aws)
    assert code == 0, output
    assert_no_secret(output, secrets_of(world, secret_id))
    assert_documented(world)


def functions_read_the_stored_secret(world: Any, secret_id: str) -> None:
    """The deployed functions once they read the webhook secret setup stored (within ten minutes of it): the world's
    pager checks signatures with it, as GitHub signs with the one the manifest's conversion handed out."""
    secret = stored_secret(secret_id)["GITHUB_WEBHOOK_SECRET"]
    world.services.settings = replace(world.services.settings, github_webhook_secret=secret)
    world.signing_secret = secret


def assert_documented(world: Any) -> None:
    """Every call the commands made is an operation (a method) of the slices of GitHub's (Telegram's) description,
    with documented parameters."""
    specs = ROOT / "tests" / "fixtures" / "specs"
    github = json.loads((specs / "github-openapi.slice.json").read_text())["operations"]
    telegram = json.loads((specs / "telegram-bot-api.slice.json").read_text())["methods"]
    used = set()
    for request in world.hub.requests:
        [operation] = [op for op in github if op["method"] == request.method and re.fullmatch(
            re.sub(r"\{[^}]+\}", "[^/]+", op["path"]), request.path)]
        documented = {p["name"] for p in operation["parameters"] if p["in"] == "query"}
        assert set(request.query) <= documented, (operation["operationId"], request.query)
        used.add(operation["operationId"])
    assert {"apps/get-authenticated", "apps/get-webhook-config-for-app", "apps/create-from-manifest",
            "apps/get-repo-installation", "apps/list-repos-accessible-to-installation", "apps/list-webhook-deliveries"} <= used
    for request in world.chat.requests:
        method = request.path.rsplit("/", 1)[-1]
        parameters = {p["name"]: p for p in telegram[method]["parameters"]}
        sent = request.json()
        assert set(sent) <= set(parameters), (method, sent)
        assert {name for name, p in parameters.items() if p["required"]} <= set(sent), (method, sent)
    assert {r.path.rsplit("/", 1)[-1] for r in world.chat.requests} >= {
        "getMe", "getWebhookInfo", "deleteWebhook", "getUpdates", "setWebhook", "sendMessage", "getChatMember",
        "setMyCommands", "getMyCommands"}


def test_doctor_without_a_stack_skips_what_needs_it_with_a_note(healthy, aws, tmp_path):
    world, secret_id = healthy
    values = stored_secret(secret_id)
    write_dotenv(tmp_path / ".env", {**values, "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
                                     "TELEGRAM_CHAT_ID": str(CHAT["id"]), "CONTROL_REPOSITORY": CONTROL,
                                     "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API})
    code, output = doctor(world, tmp_path, aws, "--stack", "elsewhere")  # named, and not there: never .env in its place
    assert code == 1 and "✗ no stack named elsewhere" in output and "make doctor DOCTOR_ARGS=--local" in output, output
    code, output = doctor(world, tmp_path, aws, "--local")
    assert "– table: skipped" in output and "– deployed parameters: skipped" in output
    # the URLs cannot be compared with the stack's: the GitHub webhook must merely end in /github
    assert "✓ webhook: active, JSON, signed" in output and code == 0, output
    assert "✓ pager's endpoint answered GitHub's signed ping: 200" in output  # .env's webhook secret signed it
    assert_no_secret(output, secrets_of(world, secret_id))


def test_doctor_and_setup_with_expired_aws_credentials_say_to_sign_in_never_check_env_instead(healthy, aws, tmp_path):
    import botocore.exceptions

    world, _ = healthy

    class Expired:
        def describe_stacks(self, **_: Any) -> Any:
            raise botocore.exceptions.ClientError({"Error": {"Code": "ExpiredToken", "Message": (
                "The security token included in the request is expired")}}, "DescribeStacks")

    def expired(service: str, region: str) -> Any:
        return Expired() if service == "cloudformation" else aws(service, region)

    code, output = run(["doctor"], world, tmp_path, expired)
    assert code == 1 and "✗ AWS refused to show the stack pager (ExpiredToken): sign in to AWS again" in output, output
    assert output.startswith("pager doctor: the stack pager (")  # what was asked for, not .env
    assert "fix: then run `make doctor` again; or, for `make serve`'s .env instead" in output
    assert "settings" not in output  # .env was not checked in the stack's place
    code, output = run(["setup"], world, tmp_path, expired)
    assert code == 1 and "AWS refused to show the stack pager (ExpiredToken)" in output and "then run `make setup` again" in output
    assert "deploy it first" not in output


def test_setup_for_a_stack_samconfig_does_not_deploy_stops_before_it_registers_anything(fresh, aws, tmp_path):
    world, _ = fresh
    template = {"Parameters": {n: {"Type": "String"} for n in FIRST_PARAMETERS},
                "Resources": {"G": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/x/y"}}},
                "Outputs": {"GitHubWebhookUrl": {"Value": GITHUB_HOOK + "2"}, "TelegramWebhookUrl": {"Value": TELEGRAM_HOOK + "2"},
                            "TableName": {"Value": TABLE}, "SecretName": {"Value": "/pager/pager-staging/secrets"}}}
    client("cloudformation").create_stack(StackName="pager-staging", TemplateBody=json.dumps(template), Parameters=[
        {"ParameterKey": k, "ParameterValue": v} for k, v in FIRST_PARAMETERS.items()])
    code, output = run(["setup", "--stack", "pager-staging"], world, tmp_path, aws)  # asks nothing
    assert code == 1 and "samconfig.local.toml deploys the stack pager, not pager-staging" in output, output
    assert world.hub.apps_registered == [] and stored_secret("/pager/pager-staging/secrets") == {}


def test_a_stack_whose_first_deploy_failed_is_said_to_be_deleted_not_waited_for():
    from pager.admin.deployment import find_stack

    class Failed:
        def describe_stacks(self, **_: Any) -> Any:
            return {"Stacks": [{"StackName": "pager", "StackStatus": "ROLLBACK_COMPLETE", "Outputs": []}]}

    stack, missing = find_stack(Failed(), "pager", "eu-central-1")
    assert stack is None and missing is not None and not missing.asking
    assert "first deploy failed (ROLLBACK_COMPLETE): delete it (aws cloudformation delete-stack --stack-name pager " \
           "--region eu-central-1), then run `make deploy` again" in missing.why


class Denied:
    """A boto3 client of Parameter Store that the operator's credentials may not read (IAM's AccessDeniedException)."""

    def get_parameter(self, **_: Any) -> Any:
        import botocore.exceptions

        raise botocore.exceptions.ClientError({"Error": {"Code": "AccessDeniedException", "Message": (
            "User: arn:aws:iam::123456789012:user/ops is not authorized to perform: ssm:GetParameter")}}, "GetParameter")


def denying_ssm(aws: Any, regions: list[str] | None = None) -> Any:
    """moto's clients, but a Parameter Store that refuses; each region asked for is noted in `regions`."""
    def factory(service: str, region: str) -> Any:
        if regions is not None:
            regions.append(region)
        return Denied() if service == "ssm" else aws(service, region)

    return factory


def test_doctor_runs_every_check_it_can_when_the_secret_cannot_be_read_and_says_why_for_the_rest(healthy, aws, tmp_path):
    world, secret_id = healthy
    code, output = doctor(world, tmp_path, denying_ssm(aws))
    assert code == 1, output
    unread = f"the secret {SECRET_NAME} could not be read: AccessDenied"
    [settings] = [line for line in output.splitlines() if line.startswith("✗ settings")]
    assert unread in settings and "the other settings are complete and well-formed" in settings
    assert "missing" not in settings  # the secrets are not missing: they could not be read
    fix = output.splitlines()[output.splitlines().index(settings) + 1]
    assert "ssm:GetParameter" in fix and "kms:Decrypt" in fix, fix
    # what needs no secret ran: the stack's parameters, the table
    assert "✓ deployed parameters: the stack pager has what samconfig.local.toml holds" in output
    assert f"✓ table: {TABLE} is active, with its TTL" in output
    # what needs it was skipped, each saying why, and no failure of AWS stopped the run
    for what in ("GitHub App", "events", "permissions", "webhook", "pager's endpoint", "installation", "workflows",
                 "deliveries"):
        assert f"– {what}: skipped (needs GITHUB_PRIVATE_KEY: {unread})" in output, (what, output)
    for what in ("Telegram bot", "Telegram webhook", "Telegram commands", "chat"):
        assert f"– {what}: skipped (needs TELEGRAM_BOT_TOKEN: {unread})" in output, (what, output)
    assert "✗ AWS" not in output and "arn:aws" not in output and "not authorized" not in output
    assert output.rstrip().endswith("3 checks hold, 1 fails, 12 skipped.")


class Failing:
    """A boto3 client of Parameter Store whose every read fails with `error`."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def get_parameter(self, **_: Any) -> Any:
        raise self.error


def failing_ssm(aws: Any, error: Exception) -> Any:
    def factory(service: str, region: str) -> Any:
        return Failing(error) if service == "ssm" else aws(service, region)

    return factory


def settings_and_fix(output: str) -> tuple[str, str]:
    """doctor's settings line and the fix under it."""
    lines = output.splitlines()
    [settings] = [line for line in lines if line.startswith("✗ settings")]
    return settings, lines[lines.index(settings) + 1]


def test_doctor_says_how_to_read_the_secret_by_what_kept_it_from_it(healthy, aws, tmp_path):
    import botocore.exceptions as aws_errors

    world, secret_id = healthy

    def refused(code: str) -> Exception:
        return aws_errors.ClientError({"Error": {"Code": code, "Message": "arn:aws:iam::123456789012:user/ops"}},
                                      "GetParameter")

    # the stack, and no credentials on this machine: sign in; the functions' own role is another matter
    code, output = doctor(world, tmp_path, failing_ssm(aws, aws_errors.NoCredentialsError()))
    settings, fix = settings_and_fix(output)
    assert code == 1 and f"the secret {SECRET_NAME} could not be read: no AWS credentials were found" in settings
    assert "sign in to AWS on this machine" in fix and "`aws sts get-caller-identity`" in fix, fix
    assert "then run `make doctor` again" in fix and "may read the secret" not in fix
    assert fix.endswith("; the functions read it with their own role, so this says nothing about them")
    # credentials AWS does not take (expired): sign in again, too
    settings, fix = settings_and_fix(doctor(world, tmp_path, failing_ssm(aws, refused("ExpiredTokenException")))[1])
    assert "could not be read: ExpiredToken" in settings and "sign in to AWS" in fix, fix
    # the stack, credentials that may not read it: which permissions
    settings, fix = settings_and_fix(doctor(world, tmp_path, failing_ssm(aws, refused("AccessDeniedException")))[1])
    assert "could not be read: AccessDenied" in settings and "sign in" not in fix
    assert "run `make doctor` with AWS credentials that may read the secret (ssm:GetParameter" in fix, fix
    assert "their own role" in fix
    # no answer from AWS: the network, nothing about credentials
    settings, fix = settings_and_fix(doctor(world, tmp_path, failing_ssm(
        aws, aws_errors.EndpointConnectionError(endpoint_url="https://ssm.us-east-1.amazonaws.com")))[1])
    assert "could not be read: EndpointConnectionError" in settings
    assert "check this machine's network" in fix and "credentials" not in fix, fix

    # `.env` for `make serve`: no functions read it; and no region anywhere: where to set one
    write_dotenv(tmp_path / ".env", {"PAGER_SECRET_ID": SECRET_NAME})
    code, output = run(["doctor", "--local"], world, tmp_path, failing_ssm(aws, aws_errors.NoRegionError()))
    settings, fix = settings_and_fix(output)
    assert code == 1 and f"the secret {SECRET_NAME} could not be read: no AWS region is set" in settings, output
    assert fix == ("    fix: set AWS_REGION (in the environment or in .env, where `make serve` reads it too), or give the "
                   'region: `make doctor DOCTOR_ARGS="--local --region <region>"`'), fix
    settings, fix = settings_and_fix(run(["doctor", "--local"], world, tmp_path,
                                         failing_ssm(aws, refused("AccessDeniedException")))[1])
    assert fix.startswith("    fix: run `make doctor DOCTOR_ARGS=--local` with AWS credentials that may read the secret "
                          "(ssm:GetParameter on it and kms:Decrypt of its key)"), fix
    assert "functions" not in fix and "role" not in fix
    settings, fix = settings_and_fix(run(["doctor", "--local"], world, tmp_path,
                                         failing_ssm(aws, aws_errors.NoCredentialsError()))[1])
    assert "sign in to AWS" in fix and "`make doctor DOCTOR_ARGS=--local` again" in fix and "functions" not in fix, fix


def test_doctor_local_reads_the_secret_in_aws_region_and_runs_what_the_environment_gives_it(healthy, aws, tmp_path):
    world, secret_id = healthy
    values = stored_secret(secret_id)
    write_dotenv(tmp_path / ".env", {"PAGER_SECRET_ID": SECRET_NAME, "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
                                     "TELEGRAM_CHAT_ID": str(CHAT["id"]), "CONTROL_REPOSITORY": CONTROL,
                                     "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API})
    (tmp_path / "samconfig.local.toml").unlink()
    regions: list[str] = []
    environ = {"AWS_REGION": "eu-central-2", "TELEGRAM_BOT_TOKEN": values["TELEGRAM_BOT_TOKEN"]}
    code, output = run(["doctor", "--local"], world, tmp_path, denying_ssm(aws, regions), environ=environ)
    assert regions == ["eu-central-2"], regions  # boto3 reads AWS_DEFAULT_REGION only: the CLI passes AWS_REGION
    assert code == 1 and f"the secret {SECRET_NAME} could not be read: AccessDenied" in output, output
    assert "– GitHub App: skipped (needs GITHUB_PRIVATE_KEY" in output
    assert "✓ Telegram accepts the bot token" in output  # the environment gave the token: its checks ran
    # the region given wins over the environment's, and the environment's AWS_REGION over AWS_DEFAULT_REGION
    regions.clear()
    run(["doctor", "--local", "--region", "ap-south-1"], world, tmp_path, denying_ssm(aws, regions),
        environ={**environ, "AWS_DEFAULT_REGION": "us-west-2"})
    assert regions == ["ap-south-1"]
    regions.clear()
    run(["doctor", "--local"], world, tmp_path, denying_ssm(aws, regions),
        environ={**environ, "AWS_DEFAULT_REGION": "us-west-2"})
    assert regions == ["eu-central-2"]


def test_the_commands_find_the_region_by_one_rule(tmp_path):
    samconfig = SamConfig(tmp_path / "samconfig.local.toml")
    environ = {"AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "us-west-2"}
    assert aws_region("ap-south-1", samconfig, environ) == "ap-south-1"
    assert aws_region("", samconfig, environ) == "eu-west-1"
    assert aws_region("", samconfig, {"AWS_DEFAULT_REGION": "us-west-2"}) == "us-west-2"
    assert aws_region("", samconfig, {}) == ""  # boto3's own: the profile
    guided_samconfig(tmp_path, FIRST_PARAMETERS)
    assert aws_region("", samconfig, environ) == REGION
    # `.env`, what `make serve` runs with: samconfig.local.toml is no part of it; the profile's region comes last
    assert aws_region("", None, environ) == "eu-west-1"
    assert aws_region("ap-south-1", None, environ) == "ap-south-1"
    assert aws_region("", None, {"AWS_DEFAULT_REGION": "us-west-2"}) == "us-west-2"
    config = tmp_path / "aws-config"
    config.write_text("[default]\nregion = sa-east-1\n[profile ops]\nregion = eu-north-1\n")
    assert aws_region("", None, {"AWS_CONFIG_FILE": str(config)}) == "sa-east-1"
    assert aws_region("", None, {"AWS_CONFIG_FILE": str(config), "AWS_PROFILE": "ops"}) == "eu-north-1"
    assert aws_region("", None, {}) == ""


def samconfig_in(folder: Path, region: str) -> None:
    """samconfig.local.toml as a guided deploy to `region` leaves it."""
    guided_samconfig(folder, FIRST_PARAMETERS)
    path = folder / "samconfig.local.toml"
    path.write_text(path.read_text().replace(f'region = "{REGION}"', f'region = "{region}"'))


@pytest.mark.parametrize("environ,dotenv,expected", [
    # the environment over .env, and samconfig.local.toml's region (eu-central-1) never: it is the stack's
    ({"AWS_REGION": "us-west-2"}, {"AWS_REGION": "ap-south-1"}, "us-west-2"),
    ({}, {"AWS_REGION": "ap-south-1"}, "ap-south-1"),  # .env alone names it
    ({"AWS_DEFAULT_REGION": "us-west-2"}, {"AWS_REGION": "ap-south-1"}, "ap-south-1"),  # AWS_REGION first, wherever
    ({"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "eu-west-3"}, {}, "us-west-2"),
    ({}, {"AWS_DEFAULT_REGION": "eu-west-3"}, "eu-west-3"),
    ({"AWS_REGION": ""}, {"AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "eu-west-3"}, "eu-west-3"),  # named, empty
    ({"AWS_CONFIG_FILE": "{config}"}, {}, "sa-east-1"),  # then the profile's
    ({"AWS_CONFIG_FILE": "{config}"}, {"AWS_PROFILE": "ops"}, "eu-north-1"),  # the profile .env names
])
def test_doctor_local_reads_the_secret_in_the_region_make_serve_reads_it_in(healthy, aws, tmp_path, environ, dotenv,
                                                                            expected):
    from pager_local.serve import prepare

    world, _ = healthy
    samconfig_in(tmp_path, "eu-central-1")
    config = tmp_path / "aws-config"
    config.write_text("[default]\nregion = sa-east-1\n[profile ops]\nregion = eu-north-1\n")
    environ = {key: value.replace("{config}", str(config)) for key, value in environ.items()}
    write_dotenv(tmp_path / ".env", {"PAGER_SECRET_ID": SECRET_NAME, **dotenv})
    regions: list[str] = []
    code, output = run(["doctor", "--local"], world, tmp_path, denying_ssm(aws, regions), environ=environ)
    assert regions == [expected], output
    served = dict(environ)
    prepare(served, str(tmp_path / ".env"))
    assert served["AWS_DEFAULT_REGION"] == expected  # where boto3 in `make serve` reads it


def test_doctor_local_names_an_empty_pager_table_missing_as_make_serve_does(healthy, aws, tmp_path):
    world, secret_id = healthy
    values = {**stored_secret(secret_id), "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
              "TELEGRAM_CHAT_ID": str(CHAT["id"]), "CONTROL_REPOSITORY": CONTROL,
              "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API}
    write_dotenv(tmp_path / ".env", values)
    code, output = doctor(world, tmp_path, aws, "--local")
    assert "✓ settings: complete and well-formed" in output, output  # not named: make serve embeds its table
    write_dotenv(tmp_path / ".env", {**values, "PAGER_TABLE": ""})
    code, output = doctor(world, tmp_path, aws, "--local")
    assert code == 1 and "✗ settings: missing PAGER_TABLE" in output, output


def pasted_dotenv(folder: Path, values: dict[str, str], pem: str, quote: str) -> None:
    """`.env` as a person writes it: KEY=value lines, and the .pem file pasted as it is after GITHUB_PRIVATE_KEY=,
    inside `quote` (or none)."""
    lines = [f"{key}={value}" for key, value in values.items() if key != "GITHUB_PRIVATE_KEY"]
    (folder / ".env").write_text("\n".join([*lines, f"GITHUB_PRIVATE_KEY={quote}{pem}{quote}", ""]), encoding="utf-8")


def test_doctor_local_takes_a_key_pasted_across_lines_in_double_quotes_and_says_how_when_it_is_not(healthy, aws, tmp_path):
    world, secret_id = healthy
    values = {**stored_secret(secret_id), "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
              "TELEGRAM_CHAT_ID": str(CHAT["id"]), "CONTROL_REPOSITORY": CONTROL,
              "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API, "QUIET_HOURS": "none"}
    pem = values["GITHUB_PRIVATE_KEY"]
    pasted_dotenv(tmp_path, values, pem, '"')  # python-dotenv's multi-line form
    code, output = doctor(world, tmp_path, aws, "--local")
    assert code == 0 and "✓ GitHub accepts the app's JWT: pager-test" in output, output

    pasted_dotenv(tmp_path, values, pem, "")  # unquoted: the value ends with the line, as python-dotenv reads it
    code, output = doctor(world, tmp_path, aws, "--local")
    lines = output.splitlines()
    [line] = [line for line in lines if line.startswith("✗ GitHub App")]
    assert code == 1 and "GITHUB_PRIVATE_KEY does not load as the app's key (it is the first line of a .pem file alone)" in line
    fix = lines[lines.index(line) + 1]
    assert fix.startswith('    fix: put the app\'s private key into .env as GITHUB_PRIVATE_KEY="…", the whole .pem file '
                          "inside the double quotes"), fix
    assert "the whole .pem file, into .env" not in output  # never what the person just did
    assert_no_secret(output, secrets_of(world, secret_id))


def test_doctor_builds_no_link_and_makes_no_call_from_a_value_the_settings_line_calls_malformed(healthy, aws, tmp_path):
    world, secret_id = healthy
    values = {**stored_secret(secret_id), "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "My App!",
              "TELEGRAM_BOT_TOKEN": "nonsense", "CONTROL_REPOSITORY": "x", "TELEGRAM_CHAT_ID": str(CHAT["id"]),
              "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API}
    pem = values["GITHUB_PRIVATE_KEY"]
    pasted_dotenv(tmp_path, values, pem.splitlines()[0], "")  # a key that does not load: GitHub is not asked
    world.hub.requests.clear()
    world.chat.requests.clear()
    code, output = doctor(world, tmp_path, aws, "--local")
    settings = next(line for line in output.splitlines() if line.startswith("✗ settings"))
    assert code == 1 and "GITHUB_APP_SLUG is not an app's slug" in settings and "TELEGRAM_BOT_TOKEN is not a bot token" in settings
    assert "My App!" not in output and "/settings/apps/" not in output, output  # no link from the slug it called invalid
    assert "generate one on GitHub (Settings → Developer settings → GitHub Apps → the app → Private keys)" in output
    assert world.chat.requests == [] and world.hub.requests == []  # no getMe with what is no bot token
    assert "– Telegram bot: skipped (the settings line names what is wrong with TELEGRAM_BOT_TOKEN)" in output
    fixes = [line for line in output.splitlines() if line.startswith(("    fix:", "    how:"))]
    assert fixes and all(line.count(".env") <= 1 for line in fixes), fixes  # each place said once
    assert "    fix: correct them in .env" in fixes

    # an app id that is none: no JWT is made with it; the key loads, and the control repository is no owner/name
    pasted_dotenv(tmp_path, {**values, "GITHUB_APP_ID": "app-12345", "GITHUB_APP_SLUG": "pager-test"}, pem, '"')
    code, output = doctor(world, tmp_path, aws, "--local")
    assert code == 1 and world.hub.requests == [], output
    assert "– GitHub App: skipped (the settings line names what is wrong with GITHUB_APP_ID)" in output

    # the app read with its key: its pages are GitHub's own, whatever the slug set; the control repository unasked
    pasted_dotenv(tmp_path, values, pem, '"')
    code, output = doctor(world, tmp_path, aws, "--local")
    assert "✗ GitHub App: the key is app 12345's, whose slug is pager-test" in output, output
    assert "My App!/" not in output and "https://github.test/settings/apps/pager-test/permissions" in output
    assert "– installation: skipped (the settings line names what is wrong with CONTROL_REPOSITORY)" in output
    assert {request.path for request in world.hub.requests} >= {"/app", "/app/hook/config"}
    assert not any("/repos/x" in request.path or "/installation" == request.path for request in world.hub.requests)
    assert world.chat.requests == []


def test_doctor_notes_a_form_encoded_webhook_which_the_endpoint_reads_and_lets_it_pass(healthy, aws, tmp_path):
    world, secret_id = healthy
    world.hub.hook["content_type"] = "form"  # GitHub's other content type: the payload in a form's `payload` field
    code, output = doctor(world, tmp_path, aws)
    assert code == 0 and "✗" not in output, output
    lines = output.splitlines()
    line = next(line for line in lines if "webhook: active" in line)
    assert line == f"ℹ webhook: active, form-encoded, signed, at {GITHUB_HOOK}: pager reads the JSON in its payload field"
    assert lines[lines.index(line) + 1].startswith("    how: nothing to change; for JSON itself, choose Content type "
                                                  "application/json on https://github.test/settings/apps/pager-test")


def test_the_summary_counts_in_words():
    from pager.admin.doctor import Check, report

    lines: list[str] = []
    assert report([Check(True, "a"), Check(False, "b", "fix it"), Check(None, "c")], lines.append) == 1
    assert lines[-1] == "1 check holds, 1 fails, 1 skipped."
    lines.clear()
    assert report([Check(True, "a"), Check(True, "b")], lines.append) == 0
    assert lines[-1] == "2 checks hold, 0 fail."


def test_doctor_says_whether_the_app_may_merge_releases_that_change_workflows_as_information(healthy, aws, tmp_path):
    world, secret_id = healthy
    code, output = doctor(world, tmp_path, aws)  # the README's app: no Workflows permission
    assert code == 0, output
    lines = output.splitlines()
    [line] = [line for line in lines if line.startswith("ℹ workflows")]
    assert ("the app lacks Workflows (read and write), so merges of release pull requests that change "
            ".github/workflows/ are refused") in line
    how = lines[lines.index(line) + 1]
    assert how == ("    how: on https://github.test/settings/apps/pager-test/permissions: Repository permissions → "
                   "Workflows: Read and write, Save changes; then the installation's owner accepts it (GitHub asks them)")
    assert output.rstrip().endswith("15 checks hold, 0 fail.")  # information neither holds nor fails

    world.hub.app["permissions"]["workflows"] = "write"  # chosen, and not accepted by the installation's owner yet
    world.hub.installation_permissions[1] = app_manifest.needed_permissions()
    code, output = doctor(world, tmp_path, aws)
    assert code == 0 and "ℹ workflows: the app asks for Workflows (read and write), but the installation on " in output
    assert "accept the app's new permissions on https://github.com/settings/installations/1" in output
    assert "not needed" not in output  # an optional permission is never called one to take away

    world.hub.installation_permissions[1]["workflows"] = "write"
    code, output = doctor(world, tmp_path, aws)
    assert code == 0 and "✓ workflows: the app holds Workflows (read and write): pager merges release pull requests" in output
    assert "ℹ" not in output and output.rstrip().endswith("16 checks hold, 0 fail.")


def test_setup_stops_without_a_traceback_when_the_input_closes_at_a_question_and_goes_on_the_next_time(fresh, aws,
                                                                                                     tmp_path):
    world, secret_id = fresh
    code, output = run(["setup"], world, tmp_path, aws, Person(world, [EOFError]))  # at the app's owner
    assert code == 1 and "✗ stopped: the input closed before an answer came" in output, output
    assert "Traceback" not in output and world.hub.apps_registered == []
    code, output = run(["setup"], world, tmp_path, aws, Person(world, ["", ""], [EOFError]))  # at the bot's token
    assert code == 1 and "✗ stopped: the input closed before an answer came" in output, output
    assert len(world.hub.apps_registered) == 1  # kept: the next run goes on from there
    code, output = run(["setup"], world, tmp_path, aws, Person(world, ["", "", "", ""], [BOT_TOKEN]))
    assert code == 0 and len(world.hub.apps_registered) == 1, output


def test_setup_with_workflows_asks_nothing_about_it_and_registers_the_app_with_it(fresh, aws, tmp_path):
    world, _ = fresh
    person = Person(world, answers=["", "", "", "", ""], secrets=[BOT_TOKEN])  # no Workflows question
    assert run(["setup", "--workflows"], world, tmp_path, aws, person)[0] == 0
    [app] = world.hub.apps_registered
    assert WORKFLOWS_QUESTION not in person.asked and app["permissions"]["workflows"] == "write"


def test_setup_with_no_workflows_asks_nothing_about_it_and_registers_the_app_without_it(fresh, aws, tmp_path):
    world, _ = fresh
    person = Person(world, answers=["", "", "", "", ""], secrets=[BOT_TOKEN])  # no Workflows question
    assert run(["setup", "--no-workflows"], world, tmp_path, aws, person)[0] == 0
    [app] = world.hub.apps_registered
    assert WORKFLOWS_QUESTION not in person.asked and "workflows" not in app["permissions"]


def test_setup_with_workflows_for_an_app_registered_without_it_says_where_to_add_it(healthy, aws, tmp_path):
    world, _ = healthy
    code, output = run(["setup", "--workflows"], world, tmp_path, aws)
    assert code == 0, output
    assert ("  - give the app Workflows: on https://github.test/settings/apps/pager-test/permissions, Repository "
            "permissions → Workflows: Read and write, Save changes;") in output
    code, output = run(["setup"], world, tmp_path, aws)  # not asked for: nothing said
    assert code == 0 and "Workflows" not in output
    code, output = run(["setup", "--no-workflows"], world, tmp_path, aws)  # declined: nothing said either
    assert code == 0 and "Workflows" not in output


# -- quiet hours: setup asks, doctor notes none ------------------------------------------------------------------


def quiet_parameters(folder: Path) -> tuple[str | None, str | None]:
    """QuietHours and TimeZone as the next `make deploy` takes them from samconfig.local.toml."""
    parameters = SamConfig(folder / "samconfig.local.toml").parameters()
    return parameters.get("QuietHours"), parameters.get("TimeZone")


def test_setup_offers_quiet_hours_from_22_to_7_on_this_machines_clock_and_enter_takes_them(unquiet, aws, tmp_path):
    world, _ = unquiet
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "localtime").symlink_to("/usr/share/zoneinfo/America/New_York")  # this machine's clock
    person = Person(world, ["", ""])  # everything else is done: only the quiet hours are asked for
    code, output = run(["setup"], world, tmp_path, aws, person)
    assert code == 0, output
    assert person.asked == ["Your time zone, for quiet hours and the chat's times [Enter for America/New_York, this "
                            "machine's]: ", "Quiet hours on that clock, HH:MM-HH:MM or none [Enter for 22:00-07:00]: "]
    assert quiet_parameters(tmp_path) == ("22:00-07:00", "America/New_York")
    assert ("✓ quiet hours 22:00-07:00 on America/New_York's clock: nothing buzzes inside them, one summary when they "
            "end; in samconfig.local.toml") in output
    assert "  - run `make deploy`: QuietHours, TimeZone in samconfig.local.toml reach the functions then" in output
    # chosen: a second run asks nothing, and the deployment's functions take them
    code, output = run(["setup"], world, tmp_path, aws, Person(world))
    assert code == 0 and "✓ quiet hours 22:00-07:00 on America/New_York's clock" in output, output
    redeploy(SamConfig(tmp_path / "samconfig.local.toml").parameters())
    code, output = doctor(world, tmp_path, aws)
    assert code == 0 and "✓ quiet hours: 22:00-07:00 (America/New_York): nothing buzzes inside them" in output, output


def test_setup_keeps_none_as_chosen_never_asks_again_and_the_functions_take_it(unquiet, aws, tmp_path):
    world, _ = unquiet
    code, output = run(["setup"], world, tmp_path, aws, Person(world, ["Europe/Berlin", "None"]))
    assert code == 0, output
    assert quiet_parameters(tmp_path) == ("none", "Europe/Berlin")  # as the template's pattern takes it
    assert "✓ no quiet hours, as chosen: what needs you buzzes day and night" in output
    code, output = run(["setup"], world, tmp_path, aws, Person(world))  # never asked again
    assert code == 0 and "✓ no quiet hours, as chosen" in output, output
    redeploy(SamConfig(tmp_path / "samconfig.local.toml").parameters())
    code, output = doctor(world, tmp_path, aws)
    assert code == 0 and "✓ settings: complete and well-formed" in output, output
    assert "✓ quiet hours: none, as chosen: what needs you buzzes day and night" in output
    assert "ℹ quiet hours" not in output


def test_setup_asks_again_after_an_answer_it_cannot_take_and_says_why(unquiet, aws, tmp_path):
    world, _ = unquiet
    code, output = run(["setup"], world, tmp_path, aws, Person(world, ["Mars/Olympus", "Berlin", "/etc/localtime"]))
    assert code == 1 and "✗ no time zone chosen" in output, output
    assert ('fix: run `make setup` again, or give both: `make setup SETUP_ARGS="--time-zone Europe/Berlin '
            '--quiet-hours 22:00-07:00"` (or --quiet-hours none)') in output
    assert quiet_parameters(tmp_path) == (None, None)  # nothing kept

    person = Person(world, ["Mars/Olympus", "europe/berlin", "22-7", "07:00-07:00", "23:30-06:00"])
    code, output = run(["setup"], world, tmp_path, aws, person)
    assert code == 0, output
    assert [question.split(",")[0] for question in person.asked] == ["Your time zone"] * 2 + ["Quiet hours on that clock"] * 3
    assert "  Mars/Olympus is not a time zone of the IANA database (such as Europe/Berlin)" in output
    assert "  quiet hours are HH:MM-HH:MM; give them such as 22:00-07:00, or none" in output
    assert "  quiet hours must start and end at different times; give them such as 22:00-07:00, or none" in output
    assert quiet_parameters(tmp_path) == ("23:30-06:00", "Europe/Berlin")  # the database's spelling


def test_setup_with_time_zone_and_quiet_hours_flags_asks_nothing_and_a_flag_changes_them_later(unquiet, aws, tmp_path,
                                                                                              capsys):
    world, _ = unquiet
    code, output = run(["setup", "--time-zone", "Asia/Tokyo", "--quiet-hours", "23:00-06:00"], world, tmp_path, aws,
                       Person(world))
    assert code == 0 and quiet_parameters(tmp_path) == ("23:00-06:00", "Asia/Tokyo"), output
    code, output = run(["setup", "--quiet-hours", "none"], world, tmp_path, aws, Person(world))  # the zone is kept
    assert code == 0 and quiet_parameters(tmp_path) == ("none", "Asia/Tokyo"), output
    code, output = run(["setup", "--time-zone", "Asia/Tokyo"], world, tmp_path, aws, Person(world))  # as it is already
    assert code == 0 and "✓ no quiet hours, as chosen" in output, output
    # a flag setup would not take as an answer stops it before anything runs, in setup's words
    with pytest.raises(SystemExit) as stopped:
        run(["setup", "--quiet-hours", "22:00"], world, tmp_path, aws, Person(world))
    assert stopped.value.code == 2
    assert "argument --quiet-hours: quiet hours are HH:MM-HH:MM; give them such as 22:00-07:00, or none" in capsys.readouterr().err
    assert quiet_parameters(tmp_path) == ("none", "Asia/Tokyo")


def test_the_machines_time_zone_is_found_in_tz_then_the_localtime_link_then_etc_timezone_else_utc(tmp_path):
    etc = tmp_path / "etc"
    etc.mkdir()
    assert machine_zone({}, etc) == "UTC"  # nothing names one (Windows has no /etc)
    (etc / "timezone").write_text("Europe/Lisbon\n")  # Debian's file, beside a localtime that is a copy
    (etc / "localtime").write_bytes(b"TZif")
    assert machine_zone({}, etc) == "Europe/Lisbon"
    (etc / "localtime").unlink()
    for target, zone in [("/usr/share/zoneinfo/America/New_York", "America/New_York"),  # Linux: the link wins
                         ("/var/db/timezone/zoneinfo/Europe/Paris", "Europe/Paris"),  # macOS
                         ("../usr/share/zoneinfo/posix/Australia/Sydney", "Australia/Sydney"),  # relative, posix/
                         ("/usr/share/zoneinfo/Etc/UTC", "Etc/UTC")]:
        (etc / "localtime").unlink(missing_ok=True)
        (etc / "localtime").symlink_to(target)
        assert machine_zone({}, etc) == zone, target
    # TZ first, as the C library reads it: a name, a name after ':', a path into zoneinfo; a POSIX rule names none
    for tz, zone in [("Asia/Tokyo", "Asia/Tokyo"), (":Europe/Berlin", "Europe/Berlin"),
                     (":/usr/share/zoneinfo/America/Sao_Paulo", "America/Sao_Paulo"), ("CET-1CEST,M3.5.0,M10.5.0/3", "Etc/UTC"),
                     ("", "Etc/UTC")]:
        assert machine_zone({"TZ": tz}, etc) == zone, tz
    (etc / "localtime").unlink()
    (etc / "timezone").write_text("Mars/Olympus\n")
    assert machine_zone({}, etc) == "UTC"  # no zone of the database: UTC


def test_doctor_notes_a_deployment_without_quiet_hours_and_says_how_to_set_them(unquiet, aws, tmp_path):
    world, secret_id = unquiet
    code, output = doctor(world, tmp_path, aws)
    assert code == 0, output  # a note, not a failure
    lines = output.splitlines()
    [line] = [line for line in lines if "quiet hours" in line]
    assert line == "ℹ quiet hours: none are set, so what needs you buzzes at night too"
    assert lines[lines.index(line) + 1] == (
        "    how: run `make setup`: it asks for them, offering 22:00-07:00 on this machine's clock; or set QuietHours "
        "(such as 22:00-07:00, or none) and TimeZone (such as Europe/Berlin) in samconfig.local.toml (then `make deploy`)")
    assert output.rstrip().endswith("14 checks hold, 0 fail.")
    # for `make serve`: the names .env has
    write_dotenv(tmp_path / ".env", {**stored_secret(secret_id), "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
                                     "TELEGRAM_CHAT_ID": str(CHAT["id"]), "CONTROL_REPOSITORY": CONTROL,
                                     "GITHUB_API_URL": GITHUB_API, "TELEGRAM_API_URL": TELEGRAM_API})
    code, output = doctor(world, tmp_path, aws, "--local", "https://tunnel.example")
    lines = output.splitlines()
    [line] = [line for line in lines if line.startswith("ℹ quiet hours")]
    assert lines[lines.index(line) + 1] == (
        '    how: run `make setup SETUP_ARGS="--local https://tunnel.example"`: it asks for them, offering 22:00-07:00 on '
        "this machine's clock; or set QUIET_HOURS (such as 22:00-07:00, or none) and TIMEZONE (such as Europe/Berlin) in .env")
    # quiet hours the functions refuse are the settings line's failure, and no note
    guided_samconfig(tmp_path, {**SamConfig(tmp_path / "samconfig.local.toml").parameters(), "QuietHours": "22:00-22:00"})
    code, output = doctor(world, tmp_path, aws)
    assert code == 1 and "QUIET_HOURS: quiet hours must start and end at different times" in output, output
    assert "– quiet hours: skipped (the settings line says what is wrong with them)" in output


def test_the_lambda_functions_never_import_the_command_line():
    import subprocess
    import sys

    code = ("import sys, pager.bootstrap, pager.webhook, pager.sweep, pager.signals; "
            "print(sorted(m for m in sys.modules if m.startswith(('pager.admin', 'pager.cli'))))")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "[]"


# -- the pure parts --------------------------------------------------------------------------------------------


def test_the_manifest_takes_its_events_from_the_signals_table_and_the_least_permissions_their_calls_need():
    made = app_manifest.manifest(name="n", homepage="https://github.com/o/r", webhook_url="https://h/github",
                                 redirect_url="http://127.0.0.1:9/back")
    assert made["default_events"] == subscribed_events()
    assert made["default_permissions"] == {p.name: p.access for p in app_manifest.PERMISSIONS}
    assert made["hook_attributes"] == {"url": "https://h/github", "active": True} and made["public"] is False
    assert set(made) <= {"name", "url", "hook_attributes", "redirect_url", "callback_urls", "setup_url",
                         "description", "public", "default_events", "default_permissions", "request_oauth_on_install",
                         "setup_on_update"}
    assert set(app_manifest.EVENT_PERMISSIONS) == set(subscribed_events()), "each subscribed event needs its permission"


def _installation_calls() -> set[tuple[str, str]]:
    """(method, path template) of each call in pager/github.py made with an installation token (through
    `_on_repository`)."""
    tree = ast.parse(inspect.getsource(pager.github))
    calls = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_on_repository"
                and isinstance(node.args[2], ast.Constant) and isinstance(node.args[3], ast.JoinedStr)):
            continue
        path = "".join(v.value if isinstance(v, ast.Constant) else "{" + ast.unparse(v.value) + "}" for v in node.args[3].values)
        path = path.replace("{repo}", "{owner}/{repo}").replace("{int(number)}", "{n}")
        calls.add((node.args[2].value, path))
    return calls


def test_every_call_pager_makes_with_an_installation_token_has_its_least_permission():
    mapped = {(method, re.sub(r"\{(pull_number|alert_number)\}", "{n}", path)) for method, path in app_manifest.CALL_PERMISSIONS}
    calls = _installation_calls()
    assert len(calls) >= 4 and calls <= mapped, f"give these a permission in CALL_PERMISSIONS: {sorted(calls - mapped)}"


def test_the_deploy_pages_permission_table_is_the_codes():
    readme = (ROOT / "docs" / "deploy.md").read_text()
    table = readme.split("<!-- permissions -->")[1].split("<!-- /permissions -->")[0]
    rows = [line.strip() for line in table.strip().splitlines()]
    expected = ["| permission | access | why |", "|---|---|---|"]
    expected += [f"| {p.title} | {app_manifest.ACCESS_TITLES[p.access]} | {p.why} |"
                 for p in (*app_manifest.PERMISSIONS, *app_manifest.OPTIONAL)]  # the optional ones last
    assert rows == expected


def test_the_command_menu_by_hand_is_set_in_the_chats_scope_and_removed_from_every_other_chat():
    from pager_world.telegram import FakeTelegram

    page = (ROOT / "docs" / "deploy.md").read_text()
    block = page.split("## Telegram's webhook by hand")[1].split("```sh")[1].split("```")[0]
    assert "TELEGRAM_CHAT_ID=$(aws cloudformation describe-stacks" in block and "ParameterKey=='TelegramChatId'" in block
    command = block[block.index("/setMyCommands"):block.index("/deleteMyCommands")]
    scope = re.search(r'--data-urlencode "scope=(\{.*?\})"', command)
    commands = re.search(r"--data-urlencode 'commands=(\[.*?\])'", command, re.S)
    assert scope is not None and commands is not None, command
    chat = FakeTelegram()  # the Bot API as the fake world keeps it: the menu in the chat's scope alone
    chat.add_chat(CHAT["id"], "supergroup")
    chat.handle("setMyCommands", {"commands": MENU})  # what an earlier setup set for every chat
    given = scope.group(1).replace('\\"', '"').replace("${TELEGRAM_CHAT_ID}", str(CHAT["id"]))
    assert chat.handle("setMyCommands", {"scope": given, "commands": commands.group(1)})[0] == 200
    assert re.search(r'^curl -sS "https://api\.telegram\.org/bot\$\{TELEGRAM_BOT_TOKEN\}/deleteMyCommands"$', block, re.M)
    assert chat.handle("deleteMyCommands", {})[0] == 200
    assert chat.menu(CHAT["id"]) == list(BOT_COMMANDS) and chat.menu() == []


def test_the_parameters_setup_writes_are_the_settings_template_yaml_gives_the_functions():
    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: {suffix: loader.construct_scalar(node)}
                                 if isinstance(node, yaml.ScalarNode) else {suffix: None})
    template = yaml.load((ROOT / "template.yaml").read_text(), Loader=Loader)
    environment = dict(template["Globals"]["Function"]["Environment"]["Variables"])
    environment.update(template["Resources"]["SweepFunction"]["Properties"]["Environment"]["Variables"])
    from_parameters = {value["Ref"]: name for name, value in environment.items()
                       if isinstance(value, dict) and value.get("Ref") in template["Parameters"]
                       and name != "LOG_LEVEL"}  # Powertools' level, not a setting of pager's
    assert from_parameters == PARAMETER_SETTINGS
    assert set(template["Outputs"]) >= {"GitHubWebhookUrl", "TelegramWebhookUrl", "TableName", "SecretName"}


def test_the_settings_the_commands_read_are_the_settings_pages():
    section = (ROOT / "docs" / "settings.md").read_text()
    names = set(re.findall(r"^\| `([A-Z_]+)`", section, re.MULTILINE))
    names |= {"GITHUB_API_URL", "TELEGRAM_API_URL", "SWEEP_FAILURE_PAGES", "SWEEP_ALL_PAGES"}  # two to a row
    assert set(SETTING_NAMES) == names


def todo(state: State, options: Options) -> list[str]:
    """The steps a run of setup would take, in order, from what it gathered (as `run_setup` walks STEPS)."""
    return [name for name, done, _ in STEPS if not done(state, options)]


def _state(tmp_path: Path, **values: Any) -> State:
    target = Target("local", tmp_path / ".env", SamConfig(tmp_path / "samconfig.local.toml"), base_url="https://t.example")
    return State(target, dict(values.pop("values", {})), dict(values.pop("secrets", {})), **values)


def test_setup_plans_every_step_for_nothing_and_none_for_a_finished_deployment(tmp_path):
    assert todo(_state(tmp_path), Options()) == ["control", "github-app", "bot", "secret-token", "chat", "webhook",
                                                 "commands", "quiet"]
    secrets = {"GITHUB_PRIVATE_KEY": "k", "GITHUB_WEBHOOK_SECRET": "w", "TELEGRAM_BOT_TOKEN": "1:a",
               "TELEGRAM_WEBHOOK_SECRET": "token_1"}
    done = _state(tmp_path, values={"CONTROL_REPOSITORY": "o/r", "TELEGRAM_CHAT_ID": "-100", "QUIET_HOURS": "none"},
                  secrets=secrets, stored=dict(secrets), app={"id": 1, "slug": "s"}, bot={"username": "b"},
                  commands=list(MENU),
                  webhook_info={"url": "https://t.example/telegram", "allowed_updates": ["message", "callback_query"]})
    assert todo(done, Options()) == []
    assert todo(done, Options(test_message=True)) == ["test-message"]
    # quiet hours chosen (none, in TIMEZONE's default UTC) are kept, unless a flag asks for others
    assert todo(done, Options(quiet_hours="none", time_zone="UTC")) == []
    assert todo(done, Options(quiet_hours="22:00-07:00")) == todo(done, Options(time_zone="Europe/Berlin")) == ["quiet"]
    for allowed in (["callback_query"], None):  # presses only (set up before the commands), Telegram's default
        assert todo(State(**{**vars(done), "webhook_info": {**done.webhook_info, "allowed_updates": allowed}}),
                    Options()) == ["webhook"]
    assert todo(State(**{**vars(done), "commands": MENU[:1]}), Options()) == ["commands"]
    assert todo(State(**{**vars(done), "default_commands": MENU[1:]}), Options()) == ["commands"]  # pager's, everywhere
    assert todo(State(**{**vars(done), "default_commands": [{"command": "start", "description": "d"}]}), Options()) == []
    assert todo(State(**{**vars(done), "commands": None, "channel": True}), Options()) == []  # a channel takes none
    done.webhook_info["last_error_message"], done.webhook_info["last_error_date"] = "Wrong response: 401 Unauthorized", 1
    assert todo(done, Options()) == ["webhook"]  # a secret token Telegram has wrong: set it again


def test_chats_are_found_in_groups_forum_topics_channels_and_private_chats_alike():
    updates = [
        {"update_id": 1, "message": {"message_id": 1, "date": 1, "chat": CHAT, "from": MAINTAINER, "text": "/start",
                                     "message_thread_id": 7, "is_topic_message": True}},
        {"update_id": 2, "message": {"message_id": 2, "date": 1, "chat": {"id": -5, "type": "group", "title": "Old"},
                                     "from": {"id": 9, "is_bot": True, "first_name": "bot"}, "text": "x"}},
        {"update_id": 3, "channel_post": {"message_id": 3, "date": 1, "chat": {"id": -1009, "type": "channel",
                                                                                "title": "News"}, "text": "post"}},
        {"update_id": 4, "message": {"message_id": 4, "date": 1, "chat": {"id": 77, "type": "private", "first_name": "Ann"},
                                     "from": {"id": 77, "is_bot": False, "first_name": "Ann"}, "text": "hi"}},
        {"update_id": 5, "callback_query": {"id": "c"}},
    ]
    chats = chats_in(updates)
    assert [(c.chat_id, c.kind, c.thread_id) for c in chats] == [
        (str(CHAT["id"]), "supergroup", 7), ("-5", "group", None), ("-1009", "channel", None), ("77", "private", None)]
    assert chats[0].users == ((42, "maint"),) and chats[1].users == ()  # a bot is nobody to allow
    assert allowed_users(chats[2], chats) == {77: "Ann"}  # a channel: whoever wrote to the bot in private
    assert allowed_users(chats[0], chats) == {42: "maint", 77: "Ann"}


def test_deliveries_are_counted_by_outcome_and_an_event_that_failed_every_attempt_is_named():
    items = [{"id": 1, "guid": "a", "status_code": 200}, {"id": 2, "guid": "b", "status_code": 401},
             {"id": 3, "guid": "c", "status_code": 502}, {"id": 4, "guid": "c", "status_code": 0},
             {"id": 5, "guid": "c", "status_code": 502}, {"id": 6, "guid": "d", "status_code": 502}]
    assert count_deliveries(items, True, 3) == DeliveryCount(total=6, failed=5, refused=1, kept_failing=1, complete=True)


def test_dotenv_and_samconfig_are_updated_in_place(tmp_path):
    env = tmp_path / ".env"
    env.write_text("# mine\nexport PORT=9000\nGITHUB_APP_ID=1\n")
    pem = "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----\n"
    assert write_dotenv(env, {"GITHUB_APP_ID": "2", "GITHUB_PRIVATE_KEY": pem}) is True
    assert write_dotenv(env, {"GITHUB_APP_ID": "2"}) is False
    assert env.read_text().startswith("# mine\nexport PORT=9000\nGITHUB_APP_ID=\"2\"\n")
    assert read_dotenv(env) == {"PORT": "9000", "GITHUB_APP_ID": "2", "GITHUB_PRIVATE_KEY": pem}

    path = guided_samconfig(tmp_path, FIRST_PARAMETERS)
    before = path.read_text()
    stack = Stack(STACK, REGION, {}, FIRST_PARAMETERS)
    assert SamConfig(path).update({"GitHubAppId": "7", "TelegramChatId": '@a"b'}, stack) is True
    data = tomllib.loads(path.read_text())["default"]["deploy"]["parameters"]
    assert parse_overrides(data["parameter_overrides"]) == {**FIRST_PARAMETERS, "GitHubAppId": "7", "TelegramChatId": '@a"b'}
    assert data["s3_prefix"] == "pager" and data["image_repositories"] == []
    assert len(path.read_text().splitlines()) == len(before.splitlines())
    assert SamConfig(path).update({"GitHubAppId": "7"}, stack) is False

    created = SamConfig(tmp_path / "new.toml")
    assert created.update({"GitHubAppId": "7"}, stack) is True
    assert created.stack_name() == STACK and created.region() == REGION
    assert created.parameters() == {**FIRST_PARAMETERS, "GitHubAppId": "7"}


def test_the_fake_github_refuses_a_manifest_without_a_webhook_url_and_a_name_taken(make_world):
    hub = make_world().hub
    form = {"name": "x", "url": "https://github.test/o/r", "redirect_url": "http://127.0.0.1:1/back",
            "hook_attributes": {"url": "https://h/github"}}

    def post(manifest: dict[str, Any]) -> int:
        body = urlencode({"manifest": json.dumps(manifest)}).encode()
        return hub.web(HttpRequest("POST", "https://github.test/settings/apps/new?state=s", {}, body)).status

    assert post({**form, "hook_attributes": {}}) == 422
    assert post(form) == 302 and post(form) == 422  # "Name is already in use"
    assert post({**form, "name": "y", "url": ""}) == 422
    assert REPO in hub.installations


def test_pager_version_names_the_installed_distribution(capsys):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exited:
        main(["--version"], Context(stdout=io.StringIO()))
    assert exited.value.code == 0 and capsys.readouterr().out.strip() == f"pager {version('pager')}"


def test_the_distribution_is_the_package_pager_alone():
    import fnmatch
    import tomllib

    find = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]["find"]
    assert len(find["where"]) == 1  # sim/ (the fake world, the demo, the bench) is not shipped
    where = ROOT / find["where"][0]
    packages = sorted(".".join(init.parent.relative_to(where).parts) for init in where.rglob("__init__.py"))
    found = [name for name in packages if any(fnmatch.fnmatchcase(name, pattern) for pattern in find["include"])]
    assert "pager" in found and "pager.admin" in found and "pager.sweep" in found
    assert found == [name for name in packages if name == "pager" or name.startswith("pager.")], found


def test_the_profiles_region_is_the_profile_botocore_would_choose(tmp_path):
    from pager.admin.deployment import profile_region

    config = tmp_path / "config"
    config.write_text("[default]\nregion = us-east-1\n[profile work]\nregion = eu-west-1\n[profile home]\nregion = ap-south-1\n")
    base = {"AWS_CONFIG_FILE": str(config)}
    assert profile_region(base) == "us-east-1"
    assert profile_region({**base, "AWS_PROFILE": "work"}) == "eu-west-1"
    # botocore reads AWS_DEFAULT_PROFILE before AWS_PROFILE (configprovider's `profile`), and so do boto3 and SAM
    assert profile_region({**base, "AWS_PROFILE": "work", "AWS_DEFAULT_PROFILE": "home"}) == "ap-south-1"
