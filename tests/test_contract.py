"""The fake world against GitHub's and Telegram's own descriptions of their APIs.

tests/fixtures/specs/ holds the slices of GitHub's OpenAPI description (@octokit/openapi) and of the
Bot API's machine-readable description (aiogram's scrape of core.telegram.org/bots/api) that pager
relies on; its README names versions and licenses, derive.py re-derives them. Checked here:

GitHub (`FakeGitHub`, and pager's client `pager.github`)
- every route the fake serves (read from its `_route`) is an operation of the slice, same method and
  path template; every call pager's client makes (read from pager/github.py) is one, and the fake
  serves it;
- the status codes the fake answers, driven with requests built here (its refusals 400, 401, 403,
  404, 405, 409, 422 included), are those the slice documents for the operation;
- its answers carry the properties pager reads, with the documented types; every property is a
  documented one; the answers it builds itself carry the required ones;
- what pager's client sends, captured in pager_world's World while pager's handlers and sweep run
  (a draft and a fix dispatched, a release merged, the deliveries listed and one redelivered), has
  the documented query parameters, path parameters and request bodies; the dispatch limits the fake
  enforces are the documented ones.

Telegram (`FakeTelegram`, and pager's client `pager.telegram`)
- every method the fake answers and every method pager calls is in the slice;
- the parameters pager sends are documented parameters of the method, of the documented types and
  within the documented limits (a reply's ReplyParameters, the command menu's BotCommands and their
  number, its BotCommandScopeChat); the limits the fake enforces (text, callback_data, BotCommand's command and description,
  setMyCommands' number of commands) are the documented ones; its answers (deleteMessage's,
  setMyCommands', getMyCommands' and deleteMyCommands' too, a reply's Message with its reply_to_message) have the
  documented envelope and result types; the Update it makes for a command typed in the chat is an
  Update of the documented types, with its bot_command MessageEntity.

Where the fake knowingly differs from the description, the difference is listed below (`KNOWN_*`)
with its reason; the tests check that list exactly, so a new difference fails, and so does one that
went away (then take it out of the list).
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import textwrap
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import jwt
import pytest

import pager.github
import pager.html
import pager.telegram
from pager.commands import BOT_COMMANDS
from pager.permissions import needed_permissions
from pager_world.cases import alert, check_run, issue_comment_by, issue_opened, live_pull, pull, run, suite_passed, unstable
from pager_world.github import FakeGitHub
from pager_world.http import HttpRequest
from pager_world.payloads import example
from pager_world.telegram import (
    MAX_CALLBACK_DATA,
    MAX_COMMAND,
    MAX_COMMAND_DESCRIPTION,
    MAX_COMMANDS,
    MAX_TEXT,
    FakeTelegram,
    parse_html,
    shown_length,
)
from pager_world.world import CHAT_ID, CONTROL, GITHUB_API, REPO, World

SPECS = Path(__file__).parent / "fixtures" / "specs"
GITHUB = json.loads((SPECS / "github-openapi.slice.json").read_text(encoding="utf-8"))
TELEGRAM = json.loads((SPECS / "telegram-bot-api.slice.json").read_text(encoding="utf-8"))
OPERATIONS = {op["operationId"]: op for op in GITHUB["operations"]}
METHODS = TELEGRAM["methods"]
TYPES = TELEGRAM["types"]

# Status codes the fake answers that GitHub's description does not list for the operation.
_BAD_CREDENTIALS = ("GitHub answers 401 Bad credentials on any endpoint for a missing or refused JWT or token "
                    "(docs: Authenticating as a GitHub App); the description lists 401 only for some operations")
_NOT_PERMITTED = ("GitHub answers 403 Resource not accessible by integration to an installation token without the "
                  "permission the endpoint needs (docs: Permissions required for GitHub Apps); the description lists "
                  "403 only for some operations")
KNOWN_UNDOCUMENTED_STATUSES = {
    ("apps/list-webhook-deliveries", 401): _BAD_CREDENTIALS,
    ("apps/redeliver-webhook-delivery", 401): _BAD_CREDENTIALS,
    ("apps/get-repo-installation", 401): _BAD_CREDENTIALS,
    ("repos/create-dispatch-event", 401): _BAD_CREDENTIALS,
    ("pulls/get", 401): _BAD_CREDENTIALS,
    ("pulls/merge", 401): _BAD_CREDENTIALS,
    ("code-scanning/get-alert", 401): _BAD_CREDENTIALS,
    ("repos/get", 401): _BAD_CREDENTIALS,
    ("apps/get-webhook-delivery", 401): _BAD_CREDENTIALS,
    ("apps/redeliver-webhook-delivery", 404): "the fake answers 404 for a delivery id it does not list; the "
                                              "description documents only 202, 400 and 422",
    ("apps/get-webhook-delivery", 404): "the fake answers 404 for a delivery id it does not list; the "
                                        "description documents only 200, 400 and 422",
    ("apps/get-authenticated", 401): _BAD_CREDENTIALS,
    ("repos/check-collaborator", 401): _BAD_CREDENTIALS,
    ("repos/create-dispatch-event", 403): _NOT_PERMITTED,
    ("pulls/get", 403): _NOT_PERMITTED,
    ("repos/check-collaborator", 403): _NOT_PERMITTED,
    ("checks/list-for-ref", 401): _BAD_CREDENTIALS,
    ("checks/list-for-ref", 403): _NOT_PERMITTED,
}
# What the fake's answers lack against the description (pager reads none of it).
KNOWN_ANSWER_GAPS: dict[tuple[str, int], list[str]] = {}
# What the fake Telegram's results lack or carry against the Bot API's types (pager reads only message_id).
KNOWN_RESULT_GAPS: dict[str, list[str]] = {}

SAMPLE_REPO = "octo-org/hello-world"


# -- reading the code ------------------------------------------------------------------------------------


def fake_github_routes() -> list[tuple[str, str]]:
    """(method, path regex) of every route `FakeGitHub._route` serves (and each `_route_*` it hands requests to)."""
    sources = [inspect.getsource(member) for name, member in vars(FakeGitHub).items()
               if name == "_route" or name.startswith("_route_")]
    tree = ast.parse("\n".join(textwrap.dedent(source) for source in sources))
    routes = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And)):
            continue
        method = pattern = None
        for value in node.values:
            if isinstance(value, ast.Compare) and isinstance(value.left, ast.Name) and isinstance(value.comparators[0], ast.Constant):
                if value.left.id == "method":
                    method = value.comparators[0].value
                elif value.left.id == "path":
                    pattern = re.escape(value.comparators[0].value)
            elif isinstance(value, ast.NamedExpr) and isinstance(value.value, ast.Call):
                call = value.value
                if isinstance(call.func, ast.Attribute) and call.func.attr == "fullmatch" and isinstance(call.args[0], ast.Constant):
                    pattern = call.args[0].value
        if method and pattern:
            routes.append((method, pattern))
    return routes


def fake_telegram_methods() -> set[str]:
    """Every Bot API method `FakeTelegram.handle` answers."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(FakeTelegram.handle)))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and isinstance(node.left, ast.Name) and node.left.id == "method":
            for comparator in node.comparators:
                values = comparator.elts if isinstance(comparator, (ast.Tuple, ast.List, ast.Set)) else [comparator]
                names |= {v.value for v in values if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    return names


def _sample(node: ast.expr) -> str:
    """A value for a formatted part of pager's request path: the repository, or a number."""
    while isinstance(node, ast.Call) and node.args:
        node = node.args[0]
    return SAMPLE_REPO if isinstance(node, ast.Name) and node.id == "repo" else "7"


def pager_github_calls() -> list[tuple[str, str]]:
    """(method, a concrete path) of every REST call pager's GitHub client makes, read from its source."""
    tree = ast.parse(inspect.getsource(pager.github))
    calls = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("_request", "_send", "_object", "_on_repository")):
            continue
        args = node.args[2:] if node.func.attr == "_on_repository" else node.args  # (repo, installation, method, path)
        if not (len(args) >= 2 and isinstance(args[0], ast.Constant)):
            continue
        method, path = args[0], args[1]
        if isinstance(path, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else _sample(v.value) for v in path.values)
        elif isinstance(path, ast.BinOp) and isinstance(path.right, ast.Constant):
            text = path.right.value
        else:
            continue  # a URL GitHub handed over (the next page of a list)
        calls.append((method.value, text))
    return calls


def pager_telegram_methods() -> set[str]:
    """Every Bot API method pager's Telegram client calls, read from its source."""
    tree = ast.parse(inspect.getsource(pager.telegram))
    return {node.args[0].value for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("_call", "_object")
            and node.args and isinstance(node.args[0], ast.Constant)}


# -- the GitHub slice ------------------------------------------------------------------------------------


def template_regex(template: str) -> str:
    return "".join("[^/]+" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^}]+\})", template))


def operation_of(method: str, path: str) -> dict[str, Any] | None:
    found = [op for op in GITHUB["operations"] if op["method"] == method and re.fullmatch(template_regex(op["path"]), path)]
    assert len(found) <= 1, (method, path, found)
    return found[0] if found else None


def sample_path(op: dict[str, Any]) -> str:
    """The operation's path with a value for each parameter (the repository's own, numbers for integers)."""
    types = {p["name"]: p.get("type") for p in op["parameters"] if p["in"] == "path"}
    values = {"owner": "octo-org", "repo": "hello-world"}
    return re.sub(r"\{([^}]+)\}", lambda m: values.get(m.group(1)) or ("7" if types[m.group(1)] == "integer" else "x"),
                  op["path"])


def type_problems(value: Any, info: dict[str, Any], where: str) -> list[str]:
    """How a value differs from an OpenAPI type (type, nullable, enum, format, lengths, counts)."""
    if value is None:
        return [] if info.get("nullable") else [f"{where}: null where the description says not nullable"]
    if "oneOf" in info:
        if any(not type_problems(value, branch, where) for branch in info["oneOf"]):
            return []
        return [f"{where}: {value!r} fits none of {info['oneOf']}"]
    kind = info.get("type")
    fits = {
        "integer": isinstance(value, int) and not isinstance(value, bool),
        "number": isinstance(value, (int, float)) and not isinstance(value, bool),
        "string": isinstance(value, str),
        "boolean": isinstance(value, bool),
        "object": isinstance(value, dict),
        "array": isinstance(value, list),
        None: True,
    }[kind]
    if not fits:
        return [f"{where}: {type(value).__name__} where the description says {kind}"]
    problems = []
    if "enum" in info and value not in info["enum"]:
        problems.append(f"{where}: {value!r} is not one of {info['enum']}")
    if info.get("format") == "date-time" and not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)", value):
        problems.append(f"{where}: {value!r} is not a date-time")
    if info.get("format") == "uri" and not re.match(r"https?://", value):
        problems.append(f"{where}: {value!r} is not a URI")
    if kind == "string" and not info.get("minLength", 0) <= len(value) <= info.get("maxLength", len(value)):
        problems.append(f"{where}: {len(value)} characters, outside {info.get('minLength', 0)}-{info.get('maxLength')}")
    if kind == "object" and len(value) > info.get("maxProperties", len(value)):
        problems.append(f"{where}: {len(value)} properties, more than {info['maxProperties']}")
    if kind in ("integer", "number") and value > info.get("maximum", value):
        problems.append(f"{where}: {value} is over the maximum {info['maximum']}")
    if kind == "array" and "items" in info:
        problems += [p for i, item in enumerate(value) for p in type_problems(item, info["items"], f"{where}[{i}]")]
    return problems


def _at(value: Any, dotted: str) -> tuple[bool, Any]:
    for name in dotted.split("."):
        if not isinstance(value, dict) or name not in value:
            return False, None
        value = value[name]
    return True, value


def _each_at(value: Any, dotted: str) -> list[tuple[bool, Any]]:
    """What a dotted path reaches, once for each item of a list on the way ("check_runs.name": each run's name)."""
    name, _, rest = dotted.partition(".")
    if not isinstance(value, dict) or name not in value:
        return [(False, None)]
    found = value[name]
    if not rest:
        return [(True, found)]
    if isinstance(found, list):
        return [each for item in found for each in _each_at(item, rest)]
    return _each_at(found, rest)


def answer_problems(body: Any, spec: dict[str, Any] | None, *, built: bool) -> list[str]:
    """How an answer's body differs from the slice's: the properties pager reads (present, typed), no
    undocumented property, and, for an answer the fake builds itself (`built`), the required ones."""
    if spec is None:
        return [] if body in (None, b"", "") else [f"a body ({body!r}) where the description documents none"]
    if spec["type"] == "array":
        if not isinstance(body, list):
            return [f"{type(body).__name__} where the description says array"]
        return sorted({p for item in body for p in answer_problems(item, spec["items"], built=built)})
    if not isinstance(body, dict):
        return [f"{type(body).__name__} where the description says object"]
    problems = [f"undocumented property {name!r}" for name in sorted(set(body) - set(spec["properties"]))]
    for dotted, info in spec["reads"].items():
        for present, value in _each_at(body, dotted):
            if present:
                problems += type_problems(value, info, dotted)
            elif built:
                problems.append(f"{dotted!r} missing (pager reads it)")
    missing = sorted(set(spec["required"]) - set(body))
    if built and missing:
        problems.append("required properties missing: " + ", ".join(missing))
    return problems


# -- driving the fake GitHub -----------------------------------------------------------------------------


def app_jwt(private_key: str, now: float) -> dict[str, str]:
    token = jwt.encode({"iat": int(now) - 60, "exp": int(now) + 540, "iss": "12345"}, private_key, algorithm="RS256")
    return {"Authorization": f"Bearer {token}"}


def json_body(data: Any) -> bytes:
    return json.dumps(data).encode()


@pytest.fixture(scope="module")
def github_exchanges(private_key_pem) -> list[tuple[dict[str, Any], HttpRequest, Any]]:
    """Requests built here for every route of the fake, its refusals included: (operation, request, answer)."""
    world = World(private_key_pem)
    hub = world.github
    jwt_auth = app_jwt(private_key_pem, world.now)
    token = {"Authorization": f"Bearer {world.services.github.installation_token(1)}"}
    hub.installations["elsewhere/other"] = 2
    other = hub(HttpRequest("POST", f"{GITHUB_API}/app/installations/2/access_tokens", jwt_auth)).body["token"]
    other_token = {"Authorization": f"Bearer {other}"}  # an installation that cannot see the control repository
    for code in (200, 502, 200, 500, 404):
        hub.record(hub.new_guid(), "issues", "opened", 1, code)
    first = hub.deliveries[0]["id"]
    live_pull(world)
    hub.pulls[(REPO, 2)].update(example("pull_request", "opened")["pull_request"] | dict(hub.pulls[(REPO, 2)]))
    for number, state in ((3, "dirty"), (4, "blocked"), (5, "clean"), (7, "unstable"), (8, "draft")):
        hub.pulls[(REPO, number)] = dict(hub.pulls[(REPO, 2)], number=number, mergeable_state=state)
    hub.merge_methods[REPO] = {"merge", "squash"}
    hub.pulls[(REPO, 6)] = dict(hub.pulls[(REPO, 2)], number=6, state="closed", merged=False)  # closed, not merged
    hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    hub.collaborators[REPO] = {"Octocat"}
    # installations whose owner granted too little: metadata only, and nothing at all
    limited, bare = "octo-org/limited", "octo-org/bare"
    hub.installations.update({limited: 3, bare: 4})
    hub.installation_permissions.update({3: {"metadata": "read"}, 4: {}})
    hub.pulls[(limited, 2)] = dict(hub.pulls[(REPO, 2)])
    hub.alerts[(limited, 10)] = {"number": 10, "state": "open"}
    metadata_only = {"Authorization": f"Bearer {hub(HttpRequest('POST', f'{GITHUB_API}/app/installations/3/access_tokens', jwt_auth)).body['token']}"}
    nothing = {"Authorization": f"Bearer {hub(HttpRequest('POST', f'{GITHUB_API}/app/installations/4/access_tokens', jwt_auth)).body['token']}"}
    head = hub.pulls[(REPO, 2)]["head"]["sha"]
    hub.check_runs[(REPO, head)] = [check_run("build"), check_run("lint", "failure", number=2),
                                    check_run("e2e", status="in_progress", number=3)]
    hub.check_runs[(limited, head)] = [check_run("build")]
    api = GITHUB_API
    dispatch = f"{api}/repos/{CONTROL}/dispatches"
    # the app registered from a manifest (with the world's id and key, so that the JWT above stays valid)
    manifest = {"name": "pager-test", "url": f"https://github.com/{CONTROL}", "redirect_url": "http://127.0.0.1:1/back",
                "hook_attributes": {"url": "https://example.test/github"}, "default_events": ["issues"],
                "default_permissions": {"issues": "read", "metadata": "read"}}
    code = hub.issue_code(hub.register_app(manifest, app_id=12345, pem=private_key_pem))

    def merge(sha: str = head, method: str = "squash") -> bytes:
        return json_body({"sha": sha, "merge_method": method})

    requests = [
        HttpRequest("GET", f"{api}/app/hook/deliveries?per_page=2", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries?per_page=100&status=failure", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries?status=success", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries?cursor=%21%21%21", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries?per_page=many", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries?status=pending", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries", {}),
        HttpRequest("POST", f"{api}/app/hook/deliveries/{first}/attempts", jwt_auth),
        HttpRequest("POST", f"{api}/app/hook/deliveries/999/attempts", jwt_auth),
        HttpRequest("POST", f"{api}/app/hook/deliveries/{first}/attempts", token),
        HttpRequest("GET", f"{api}/app/hook/deliveries/{first}", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries/999", jwt_auth),
        HttpRequest("GET", f"{api}/app/hook/deliveries/{first}", token),
        HttpRequest("POST", f"{api}/app/installations/1/access_tokens", jwt_auth),
        HttpRequest("POST", f"{api}/app/installations/99/access_tokens", jwt_auth),
        HttpRequest("POST", f"{api}/app/installations/1/access_tokens", {}),
        HttpRequest("GET", f"{api}/repos/{REPO}/installation", jwt_auth),
        HttpRequest("GET", f"{api}/repos/nobody/nothing/installation", jwt_auth),
        HttpRequest("GET", f"{api}/repos/{REPO}/installation", token),
        HttpRequest("POST", dispatch, token, json_body({"event_type": "pager-draft", "client_payload": {"n": 1}})),
        HttpRequest("POST", dispatch, token, json_body({"event_type": "x" * 101, "client_payload": {}})),
        HttpRequest("POST", dispatch, token, json_body({"event_type": "e", "client_payload": {str(n): n for n in range(11)}})),
        HttpRequest("POST", dispatch, token, json_body({"event_type": "pager-fix", "client_payload": {"x": "x" * 70_000}})),
        HttpRequest("POST", dispatch, other_token, json_body({"event_type": "pager-draft", "client_payload": {}})),
        HttpRequest("POST", dispatch, jwt_auth, json_body({"event_type": "pager-draft", "client_payload": {}})),
        HttpRequest("GET", f"{api}/repos/{REPO}/pulls/2", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/pulls/99", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/pulls/2", {}),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/3/merge", token, merge()),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/4/merge", token, merge()),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/5/merge", token, merge(method="rebase")),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/2/merge", token, merge(sha="b" * 40)),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/99/merge", token, merge()),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/2/merge", {}, merge()),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/2/merge", token, merge()),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/2/merge", token, merge()),  # merged already
        HttpRequest("GET", f"{api}/repos/{REPO}/pulls/2", token),  # as the merge left it
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/6/merge", token, merge()),  # closed without a merge
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/5/merge", token, merge(method="fast-forward")),
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/7/merge", token, merge()),  # unstable: merged
        HttpRequest("PUT", f"{api}/repos/{REPO}/pulls/8/merge", token, merge()),  # a draft: refused
        HttpRequest("GET", f"{api}/repos/{REPO}/commits/{head}/check-runs?per_page=2", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/commits/{head}/check-runs?per_page=2&page=2", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/commits/{'c' * 40}/check-runs", token),  # a commit without runs
        HttpRequest("GET", f"{api}/repos/{REPO}/commits/{head}/check-runs", {}),
        HttpRequest("GET", f"{api}/repos/{limited}/commits/{head}/check-runs", metadata_only),
        HttpRequest("POST", f"{api}/repos/{limited}/dispatches", metadata_only,
                    json_body({"event_type": "pager-draft", "client_payload": {}})),
        HttpRequest("GET", f"{api}/repos/{limited}/pulls/2", metadata_only),
        HttpRequest("PUT", f"{api}/repos/{limited}/pulls/2/merge", metadata_only, merge()),
        HttpRequest("GET", f"{api}/repos/{limited}/code-scanning/alerts/10", metadata_only),
        HttpRequest("GET", f"{api}/repos/{REPO}/collaborators/octocat", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/collaborators/stranger", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/collaborators/octocat", {}),
        HttpRequest("GET", f"{api}/repos/{limited}/collaborators/octocat", metadata_only),
        HttpRequest("GET", f"{api}/repos/{bare}/collaborators/octocat", nothing),
        HttpRequest("GET", f"{api}/repos/{REPO}", token),
        HttpRequest("GET", f"{api}/repos/{REPO.lower()}", token),  # GitHub's names are not case-sensitive
        HttpRequest("GET", f"{api}/repos/{REPO}", other_token),
        HttpRequest("GET", f"{api}/repos/{REPO}", {}),
        HttpRequest("GET", f"{api}/repos/{REPO}/code-scanning/alerts/10", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/code-scanning/alerts/11", token),
        HttpRequest("GET", f"{api}/repos/{REPO}/code-scanning/alerts/10", jwt_auth),
        HttpRequest("GET", f"{api}/app", jwt_auth),
        HttpRequest("GET", f"{api}/app", {}),
        HttpRequest("GET", f"{api}/app/hook/config", jwt_auth),
        HttpRequest("POST", f"{api}/app-manifests/{code}/conversions", {}),
        HttpRequest("POST", f"{api}/app-manifests/{code}/conversions", {}),  # used already
        HttpRequest("GET", f"{api}/installation/repositories?per_page=1", token),
        HttpRequest("GET", f"{api}/installation/repositories", {}),
    ]
    exchanges = []
    for request in requests:
        op = operation_of(request.method, request.path)
        assert op is not None, f"{request.method} {request.path} is no operation of the slice"
        exchanges.append((op, request, hub(request)))
    link = exchanges[0][2].headers["Link"]
    follow = HttpRequest("GET", link[1: link.index(">")], jwt_auth)
    exchanges.append((operation_of("GET", follow.path), follow, hub(follow)))
    return exchanges


# The operations whose answer is what a test put into the fake (a pull request, an alert): only what
# is there is checked, not what is missing.
ECHOED = {"pulls/get", "code-scanning/get-alert"}


# -- pager's own traffic, through the World --------------------------------------------------------------


@pytest.fixture(scope="module")
def traffic(private_key_pem) -> World:
    """pager's handlers and sweep at work in a World: what its real clients sent is in the fakes' requests."""
    world = World(private_key_pem)
    world.deliver("issues", issue_opened())  # a draft dispatched
    world.deliver("workflow_run", run("failure"))
    world.press("🛠")  # a fix dispatched
    unstable(world, check_run("build"), check_run("lint", "failure", number=2))  # its head's checks are read
    world.deliver("pull_request", pull("opened"))
    world.deliver("check_suite", suite_passed())
    world.press("🔀")  # a release merged
    world.hub.alerts[(REPO, 10)] = {"number": 10, "state": "open"}
    world.deliver("code_scanning_alert", alert("appeared_in_branch", "reopened", **{"ref": "refs/heads/master", "alert.number": 10}))
    world.answer = lambda guid, redelivery: 500 if not redelivery else 200
    for _ in range(3):
        world.github.deliver("issues", issue_opened())
    world.answer = None
    world.advance(15)
    world.sweep()
    org = {"repository.owner.type": "Organization", "comment.author_association": "CONTRIBUTOR"}
    world.deliver("issue_comment", issue_comment_by("carol", comment_id=77, number=7, **org))  # "outside", confirmed
    world.deliver("issues", issue_opened(action="closed", **{"issue.state": "closed"}))
    world.hub.installation_permissions[1] = {"metadata": "read"}  # a refused dispatch: its probe asks Telegram and GitHub
    world.deliver("issue_comment", issue_comment_by("dave", comment_id=78, number=8, **org))
    world.hub.installation_permissions[1] = needed_permissions()
    world.advance(15)
    world.sweep()
    world.command(f"/mute {REPO} 2h")  # the repository a command names, as GitHub calls it
    # what no flow above needs: a repository's installation, a long page followed by its Link, a silent message
    client = world.services.github
    client.installation_for(REPO)
    page = client.list_deliveries(per_page=2)
    client.list_deliveries(url=page.next_url)
    if hasattr(client, "get_delivery"):
        client.get_delivery(page.items[0]["id"])
    telegram = world.services.telegram
    quiet = telegram.send_message(CHAT_ID, "<b>quiet</b> &amp; threaded", thread_id=7, buttons=[[("A", "a" * 64)]],
                                  notify=False)
    telegram.send_message(CHAT_ID, "a reply", reply_to=quiet, notify=False)  # what the attention model sends
    telegram.delete_message(CHAT_ID, quiet)
    telegram.set_my_commands(BOT_COMMANDS, chat=CHAT_ID)  # what setup sets in the chat's scope, and doctor reads back
    telegram.get_my_commands(chat=CHAT_ID)
    telegram.get_my_commands()  # the default scope, which doctor reads to be empty
    world.telegram.register_query("cb-long")  # a press Telegram knows, answered at once
    telegram.answer_callback("cb-long", "x" * 300)
    telegram.get_me()  # the recovery check's probe
    telegram.may_post(CHAT_ID)  # whether Telegram would take a refused page again (pager's own health)
    client.probe(CONTROL)
    return world


# -- GitHub: routes --------------------------------------------------------------------------------------


def test_every_route_the_fake_github_serves_is_an_operation_of_githubs_description():
    routes = fake_github_routes()
    assert len(routes) >= 8, f"read too few routes from FakeGitHub._route ({routes}): has its shape changed?"
    for method, pattern in routes:
        matching = [op["operationId"] for op in GITHUB["operations"]
                    if op["method"] == method and re.fullmatch(pattern, sample_path(op))]
        assert len(matching) == 1, f"the fake's route {method} {pattern} matches {matching or 'no operation'} of the slice"


def test_every_call_pagers_github_client_makes_is_described_and_served_by_the_fake():
    calls = pager_github_calls()
    assert len(calls) >= 8, f"read too few calls from pager/github.py ({calls})"
    routes = fake_github_routes()
    for method, path in calls:
        assert operation_of(method, path) is not None, f"pager calls {method} {path}: no operation of the slice"
        served = any(m == method and re.fullmatch(p, path) for m, p in routes)
        assert served, f"pager calls {method} {path}: FakeGitHub does not serve it"


def test_pagers_traffic_in_the_world_covers_every_call_its_github_client_makes(traffic):
    sent = {operation_of(r.method, r.path)["operationId"] for r in traffic.github.requests}
    wanted = {operation_of(m, p)["operationId"] for m, p in pager_github_calls()}
    assert wanted <= sent, f"not exercised here: {sorted(wanted - sent)}"


# -- GitHub: answers -------------------------------------------------------------------------------------


def test_the_fake_github_answers_only_status_codes_githubs_description_documents(github_exchanges):
    answered: dict[str, set[int]] = {}
    for op, _, response in github_exchanges:
        answered.setdefault(op["operationId"], set()).add(response.status)
    served = {op["operationId"] for op, _, _ in github_exchanges}
    assert served == {op["operationId"] for op in GITHUB["operations"] if any(
        m == op["method"] and re.fullmatch(p, sample_path(op)) for m, p in fake_github_routes())}, "a route not driven here"
    undocumented = {(op_id, status) for op_id, statuses in answered.items() for status in statuses
                    if str(status) not in OPERATIONS[op_id]["responses"]}
    assert undocumented == set(KNOWN_UNDOCUMENTED_STATUSES), (
        f"new: {sorted(undocumented - set(KNOWN_UNDOCUMENTED_STATUSES))}; "
        f"gone: {sorted(set(KNOWN_UNDOCUMENTED_STATUSES) - undocumented)}")
    # the refusals the fake models are all there
    assert {s for statuses in answered.values() for s in statuses} >= {200, 201, 202, 204, 400, 401, 403, 404, 405, 409, 422}


def test_the_fake_githubs_answers_carry_what_pager_reads_with_the_documented_types(github_exchanges):
    found: dict[tuple[str, int], list[str]] = {}
    for op, _request, response in github_exchanges:
        documented = op["responses"].get(str(response.status))
        if documented is None:
            continue  # an undocumented status: the test above
        spec = documented["body"]
        problems = answer_problems(response.body, spec, built=op["operationId"] not in ECHOED)
        if problems:
            key = (op["operationId"], response.status)
            found[key] = sorted(set(found.get(key, [])) | set(problems))
    assert found == KNOWN_ANSWER_GAPS


def test_a_merge_leaves_the_pull_request_as_github_describes_a_merged_one(github_exchanges):
    reads = OPERATIONS["pulls/get"]["responses"]["200"]["body"]["reads"]
    *_, last = [answer for op, _, answer in github_exchanges if op["operationId"] == "pulls/get" and answer.status == 200]
    response = last
    assert response.body["merged"] is True and response.body["state"] == "closed"
    for name in ("merged", "state", "merge_commit_sha"):
        assert type_problems(response.body[name], reads[name], name) == []


def test_the_worlds_release_pull_request_has_the_documented_types():
    world = SimpleNamespace(hub=SimpleNamespace(pulls={}))  # all live_pull touches
    live_pull(world)
    reads = OPERATIONS["pulls/get"]["responses"]["200"]["body"]["reads"]
    pull = world.hub.pulls[(REPO, 2)]
    present = {dotted: _at(pull, dotted)[1] for dotted in reads if _at(pull, dotted)[0]}
    assert present and [p for dotted, value in present.items() for p in type_problems(value, reads[dotted], dotted)] == []


# -- GitHub: what pager sends ----------------------------------------------------------------------------


def test_the_query_and_path_parameters_pagers_github_client_sends_are_documented(traffic):
    for request in traffic.github.requests:
        op = operation_of(request.method, request.path)
        parameters = {p["name"]: p for p in op["parameters"]}
        for name, value in parse_qsl(urlsplit(request.url).query):
            assert name in parameters and parameters[name]["in"] == "query", f"{op['operationId']}: undocumented {name}"
            info = parameters[name]
            typed: Any = int(value) if info.get("type") == "integer" else value
            assert type_problems(typed, info, name) == [], (op["operationId"], name, value)
        template = op["path"].split("/")
        for part, value in zip(template, request.path.split("/"), strict=True):
            if part.startswith("{") and parameters[part[1:-1]].get("type") == "integer":
                assert value.isdigit(), (op["operationId"], part, value)


def test_the_request_bodies_pagers_github_client_sends_match_the_description(traffic):
    bodies: dict[str, list[Any]] = {}
    for request in traffic.github.requests:
        op = operation_of(request.method, request.path)
        if request.body:
            bodies.setdefault(op["operationId"], []).append(request.json())
            assert op["requestBody"] is not None, f"{op['operationId']}: a body where the description takes none"
        else:
            assert not (op["requestBody"] or {}).get("required"), f"{op['operationId']}: no body where one is required"
    assert {"repos/create-dispatch-event", "pulls/merge"} <= set(bodies)
    for op_id, sent in bodies.items():
        spec = OPERATIONS[op_id]["requestBody"]
        for body in sent:
            assert isinstance(body, dict)
            assert set(spec["required_properties"]) <= set(body), (op_id, body)
            for name, value in body.items():
                assert name in spec["properties"], f"{op_id}: undocumented property {name}"
                assert type_problems(value, spec["properties"][name], name) == [], (op_id, body)
                limit = spec["properties"][name].get("maxSizeKB")
                if limit:
                    assert len(json.dumps(value).encode()) < limit * 1024
    assert {b["event_type"] for b in bodies["repos/create-dispatch-event"]} == {"pager-draft", "pager-fix"}


def test_the_dispatch_limits_the_fake_enforces_are_the_documented_ones(world):
    spec = OPERATIONS["repos/create-dispatch-event"]["requestBody"]["properties"]
    shortest, longest = spec["event_type"]["minLength"], spec["event_type"]["maxLength"]
    most = spec["client_payload"]["maxProperties"]
    token = {"Authorization": f"Bearer {world.services.github.installation_token(1)}"}

    def status(event_type: str, client_payload: dict[str, Any]) -> int:
        body = json_body({"event_type": event_type, "client_payload": client_payload})
        return world.github(HttpRequest("POST", f"{GITHUB_API}/repos/{CONTROL}/dispatches", token, body)).status

    assert status("x" * shortest, {}) == 204 and status("x" * (shortest - 1), {}) == 422
    assert status("x" * longest, {}) == 204 and status("x" * (longest + 1), {}) == 422
    assert status("e", {str(n): n for n in range(most)}) == 204
    assert status("e", {str(n): n for n in range(most + 1)}) == 422
    assert status("e", {"x": "x" * (spec["client_payload"]["maxSizeKB"] * 1024)}) == 422


def test_the_merge_methods_the_fake_knows_are_the_documented_ones(world):
    documented = OPERATIONS["pulls/merge"]["requestBody"]["properties"]["merge_method"]["enum"]
    token = {"Authorization": f"Bearer {world.services.github.installation_token(1)}"}
    for number, method in enumerate(documented, start=2):
        world.hub.pulls[(REPO, number)] = {"number": number, "state": "open", "head": {"sha": "a" * 40},
                                           "mergeable_state": "clean"}
        body = json_body({"sha": "a" * 40, "merge_method": method})
        answer = world.github(HttpRequest("PUT", f"{GITHUB_API}/repos/{REPO}/pulls/{number}/merge", token, body))
        assert answer.status == 200, (method, answer.body)


# What GitHub answers a merge, by the pull request's mergeable_state (GitHub's docs and octokit's types): its own
# Merge button merges clean, unstable and has_hooks; behind merges unless the base branch must be up to date;
# blocked (a required review or check missing) and dirty (conflicts) cannot be merged, nor can a draft.
MERGE_BY_STATE = [("clean", False, 200), ("unstable", False, 200), ("has_hooks", False, 200), ("behind", False, 200),
                  ("behind", True, 405), ("blocked", False, 405), ("dirty", False, 405), ("draft", False, 405)]


@pytest.mark.parametrize(("state", "up_to_date_required", "status"), MERGE_BY_STATE)
def test_the_fake_merges_by_mergeable_state_as_github_documents_it_and_refuses_a_stale_head(world, state, up_to_date_required,
                                                                                            status):
    token = {"Authorization": f"Bearer {world.services.github.installation_token(1)}"}
    world.hub.pulls[(REPO, 2)] = {"number": 2, "state": "open", "head": {"sha": "a" * 40}, "mergeable_state": state}
    if up_to_date_required:
        world.hub.up_to_date_required.add(REPO)

    def merge(sha: str) -> int:
        body = json_body({"sha": sha, "merge_method": "squash"})
        return world.github(HttpRequest("PUT", f"{GITHUB_API}/repos/{REPO}/pulls/2/merge", token, body)).status

    assert merge("b" * 40) == 409  # a sha that is not the head, whatever the state
    assert merge("a" * 40) == status
    assert str(status) in OPERATIONS["pulls/merge"]["responses"] and "409" in OPERATIONS["pulls/merge"]["responses"]


def test_pager_offers_merge_exactly_where_the_fake_merges():
    from pager.signals.release import MERGES, NOT_MERGEABLE

    merged = {state for state, required, status in MERGE_BY_STATE if not required and status == 200}
    refused = {state for state, required, status in MERGE_BY_STATE if not required and status == 405}
    assert MERGES == merged and set(NOT_MERGEABLE) == refused


# -- Telegram --------------------------------------------------------------------------------------------


def tg_problems(value: Any, expression: str, where: str) -> list[str]:
    """How a value differs from a Bot API type as the docs write it ("Integer or String", "Array of X", "Message")."""
    alternatives = [expression] if expression.startswith("Array of ") else expression.split(" or ")
    if len(alternatives) > 1:
        tried = [tg_problems(value, a, where) for a in alternatives]
        if any(not t for t in tried):
            return []
        fitting = [t for a, t in zip(alternatives, tried, strict=True) if a in TYPES and isinstance(value, dict)]
        return fitting[0] if fitting else [f"{where}: {value!r} is none of {expression}"]
    if expression.startswith("Array of "):
        if not isinstance(value, list):
            return [f"{where}: {type(value).__name__} where the docs say {expression}"]
        return [p for i, item in enumerate(value) for p in tg_problems(item, expression[len("Array of "):], f"{where}[{i}]")]
    scalar = {
        "Integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "String": lambda v: isinstance(v, str),
        "Boolean": lambda v: isinstance(v, bool),
        "True": lambda v: v is True,
        "Float": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    }
    if expression in scalar:
        return [] if scalar[expression](value) else [f"{where}: {value!r} is not {expression}"]
    if expression not in TYPES:
        return [f"{where}: the type {expression} is not in the slice"]
    spec = TYPES[expression]
    if "one_of" in spec:
        if any(not tg_problems(value, kind, where) for kind in spec["one_of"]):
            return []
        return [f"{where}: fits none of {spec['one_of']}"]
    if not isinstance(value, dict):
        return [f"{where}: {type(value).__name__} where the docs say {expression}"]
    problems = [f"{where}.{name}: not a field of {expression}" for name in sorted(set(value) - set(spec["fields"]))]
    missing = [name for name in spec["required"] if name not in value]
    if missing:
        problems.append(f"{where}: required fields of {expression} missing: {', '.join(missing)}")
    for name, item in value.items():
        if name in spec["fields"]:
            problems += tg_problems(item, spec["fields"][name], f"{where}.{name}")
            problems += limit_problems(item, spec.get("limits", {}).get(name), f"{where}.{name}")
    return problems


def limit_problems(value: Any, limits: dict[str, Any] | None, where: str, *, html: bool = False) -> list[str]:
    if limits and "max_items" in limits and isinstance(value, list) and len(value) > limits["max_items"]:
        return [f"{where}: {len(value)} {limits['items']}, more than {limits['max_items']}"]
    if not limits or not isinstance(value, str):
        return []
    if limits.get("unit") == "bytes":
        size = len(value.encode())
    else:
        size = shown_length(parse_html(value) if html and limits.get("counted") else value)
    problems = []
    if not limits["min"] <= size <= limits["max"]:
        problems.append(f"{where}: {size} {limits.get('unit', '')}, outside {limits['min']}-{limits['max']}")
    if "pattern" in limits and not re.fullmatch(limits["pattern"], value):
        problems.append(f"{where}: characters outside {limits['allowed']}")
    return problems


def parameter(method: str, name: str) -> dict[str, Any]:
    return next(p for p in METHODS[method]["parameters"] if p["name"] == name)


def telegram_requests(world: World) -> list[tuple[str, dict[str, Any]]]:
    return [(r.path.rsplit("/", 1)[-1], r.json()) for r in world.telegram.requests]


def test_every_method_the_fake_telegram_answers_and_pager_calls_is_in_the_bot_api_description():
    answered = fake_telegram_methods()
    assert {"sendMessage", "editMessageText", "answerCallbackQuery", "setWebhook", "deleteMessage", "setMyCommands",
            "getMyCommands", "deleteMyCommands"} <= answered
    assert answered <= set(METHODS), f"not in the slice: {sorted(answered - set(METHODS))}"
    called = pager_telegram_methods()
    assert called and called <= set(METHODS) and called <= answered, (called, answered)


def test_the_parameters_pagers_telegram_client_sends_are_documented_with_their_types_and_limits(traffic):
    sent = telegram_requests(traffic)
    assert {method for method, _ in sent} == pager_telegram_methods()
    for method, params in sent:
        documented = {p["name"]: p for p in METHODS[method]["parameters"]}
        missing = [name for name, p in documented.items() if p["required"] and name not in params]
        assert not missing, f"{method}: required parameters missing: {missing}"
        for name, value in params.items():
            assert name in documented, f"{method}: {name} is not a parameter of it"
            spec = documented[name]
            assert tg_problems(value, spec["type"], f"{method}.{name}") == [], (method, name, value)
            html = params.get("parse_mode") == "HTML"
            assert limit_problems(value, spec.get("limits"), f"{method}.{name}", html=html) == [], (method, name)


def test_the_limits_the_fake_telegram_enforces_are_the_documented_ones():
    text = {m: parameter(m, "text")["limits"] for m in ("sendMessage", "editMessageText")}
    button = TYPES["InlineKeyboardButton"]["limits"]["callback_data"]
    assert text["sendMessage"] == text["editMessageText"]
    assert (text["sendMessage"]["min"], text["sendMessage"]["max"]) == (1, MAX_TEXT)
    assert (button["min"], button["max"], button["unit"]) == (1, MAX_CALLBACK_DATA, "bytes")
    # pager's own limits are the same
    callback_text = parameter("answerCallbackQuery", "text")["limits"]
    assert pager.telegram.MAX_CALLBACK_TEXT == callback_text["max"]
    assert pager.telegram.MAX_CALLBACK_DATA == button["max"]
    assert pager.html.MAX_TEXT == text["sendMessage"]["max"]

    now = [1_800_000_000.0]
    chat = FakeTelegram(clock=lambda: now[0])
    chat.add_chat(CHAT_ID)
    chat.register_query("1")

    def status(text: str, data: str = "d") -> int:
        now[0] += 60  # a message a minute: the limits of a text here, not a chat's pace
        keyboard = {"inline_keyboard": [[{"text": "b", "callback_data": data}]]}
        params = {"chat_id": CHAT_ID, "text": text, "parse_mode": "HTML", "reply_markup": keyboard}
        return chat.handle("sendMessage", params)[0]

    most, fewest = text["sendMessage"]["max"], text["sendMessage"]["min"]
    assert status("x" * most) == 200 and status("x" * (most + 1)) == 400
    assert status("x" * fewest) == 200 and status("x" * (fewest - 1)) == 400
    assert status("<b>" + "x" * most + "</b>") == 200 and status("&amp;" * most) == 200  # after entities parsing
    assert status("x", "é" * (button["max"] // 2)) == 200 and status("x", "é" * (button["max"] // 2) + "x") == 400
    assert status("x", "") == 400

    def answered(text: str) -> int:
        return chat.handle("answerCallbackQuery", {"callback_query_id": "1", "text": text})[0]

    assert answered("x" * callback_text["max"]) == 200 and answered("x" * (callback_text["max"] + 1)) == 400


def test_the_command_menus_limits_the_fake_telegram_and_pager_enforce_are_the_documented_ones():
    command = TYPES["BotCommand"]["limits"]
    most = parameter("setMyCommands", "commands")["limits"]
    assert (command["command"]["min"], command["command"]["max"]) == (1, MAX_COMMAND)
    assert (command["description"]["min"], command["description"]["max"]) == (1, MAX_COMMAND_DESCRIPTION)
    assert (most["max_items"], most["items"]) == (MAX_COMMANDS, "commands")
    assert pager.telegram.COMMAND.pattern == f"[a-z0-9_]{{1,{MAX_COMMAND}}}" and command["command"]["pattern"] == "^[a-z0-9_]*$"
    assert (pager.telegram.MAX_COMMAND_DESCRIPTION, pager.telegram.MAX_COMMANDS) == (MAX_COMMAND_DESCRIPTION, MAX_COMMANDS)
    assert all(limit_problems(c, command["command"], c) == [] for c, _ in BOT_COMMANDS)

    chat = FakeTelegram()

    def status(*commands: tuple[str, str]) -> int:
        return chat.handle("setMyCommands", {"commands": [{"command": c, "description": d} for c, d in commands]})[0]

    assert status(("x" * MAX_COMMAND, "d" * MAX_COMMAND_DESCRIPTION)) == 200
    assert status(("x" * (MAX_COMMAND + 1), "d")) == 400 and status(("", "d")) == 400
    assert status(("x", "d" * (MAX_COMMAND_DESCRIPTION + 1))) == 400 and status(("x", "")) == 400
    assert status(("Status", "d")) == 400 and status(("mute-repo", "d")) == 400
    assert status(*[(f"c{n}", "d") for n in range(MAX_COMMANDS)]) == 200
    assert status(*[(f"c{n}", "d") for n in range(MAX_COMMANDS + 1)]) == 400


def test_the_fake_telegram_answers_with_the_documented_envelope_and_result_types():
    envelope = TELEGRAM["response"]["fields"]
    found: dict[str, list[str]] = {}
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID)
    chat.register_query("1")
    sent = chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "a"})
    message_id = sent[1]["result"]["message_id"]
    answers = [
        ("sendMessage", sent),
        ("editMessageText", chat.handle("editMessageText", {"chat_id": CHAT_ID, "message_id": message_id, "text": "b"})),
        ("editMessageText", chat.handle("editMessageText", {"chat_id": CHAT_ID, "message_id": message_id, "text": "b"})),
        ("answerCallbackQuery", chat.handle("answerCallbackQuery", {"callback_query_id": "1"})),
        ("setWebhook", chat.handle("setWebhook", {"url": "https://example.test/telegram", "secret_token": "s"})),
        ("getMe", chat.handle("getMe", {})),
        ("getWebhookInfo", chat.handle("getWebhookInfo", {})),
        ("getUpdates", chat.handle("getUpdates", {})),  # refused while a webhook is set
        ("deleteWebhook", chat.handle("deleteWebhook", {})),
        ("getWebhookInfo", chat.handle("getWebhookInfo", {})),
        ("sendMessage", chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "c", "disable_notification": True,
                                                    "reply_parameters": {"message_id": message_id}})),
        ("sendMessage", chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "d", "reply_parameters": {
            "message_id": 99_999, "allow_sending_without_reply": True}})),
        ("sendMessage", chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "e",
                                                    "reply_parameters": {"message_id": 99_999}})),  # refused
        ("deleteMessage", chat.handle("deleteMessage", {"chat_id": CHAT_ID, "message_id": message_id})),
        ("deleteMessage", chat.handle("deleteMessage", {"chat_id": CHAT_ID, "message_id": message_id})),  # gone
        ("getChat", chat.handle("getChat", {"chat_id": CHAT_ID})),
        ("setMyCommands", chat.handle("setMyCommands", {"commands": [{"command": c, "description": d}
                                                                     for c, d in BOT_COMMANDS]})),
        ("getMyCommands", chat.handle("getMyCommands", {})),
        ("getMyCommands", chat.handle("getMyCommands", {"scope": {"type": "all_group_chats"}})),  # none set: []
        ("setMyCommands", chat.handle("setMyCommands", {"commands": [{"command": "help", "description": "Help"}],
                                                        "scope": {"type": "chat", "chat_id": CHAT_ID}})),
        ("getMyCommands", chat.handle("getMyCommands", {"scope": {"type": "chat", "chat_id": CHAT_ID}})),
        ("deleteMyCommands", chat.handle("deleteMyCommands", {})),
        ("deleteMyCommands", chat.handle("deleteMyCommands", {"scope": {"type": "chat", "chat_id": "@nobody"}})),  # refused
    ]
    assert answers[10][1][1]["result"]["reply_to_message"]["message_id"] == message_id
    assert answers[17][1][1]["result"] == [{"command": c, "description": d} for c, d in BOT_COMMANDS]
    assert answers[20][1][1]["result"] == [{"command": "help", "description": "Help"}]
    assert answers[21][1] == (200, {"ok": True, "result": True}) and answers[22][1][0] == 400
    chat.receive("/start", chat={"id": int(CHAT_ID), "type": "supergroup", "title": "Pager"}, thread_id=7,
                 user={"id": 42, "is_bot": False, "first_name": "Maintainer"})
    chat.receive("post", chat={"id": -1002, "type": "channel", "title": "News", "username": "news"})
    answers.append(("getUpdates", chat.handle("getUpdates", {"limit": 100})))
    answers.append(("getChat", chat.handle("getChat", {"chat_id": -1002})))  # a channel: no default permissions
    for status in ("member", "administrator", "creator", "restricted", "left", "kicked"):
        chat.members[42] = {"status": status}
        answers.append(("getChatMember", chat.handle("getChatMember", {"chat_id": CHAT_ID, "user_id": 42})))
    chat.handle("setWebhook", {"url": "https://example.test/telegram", "allowed_updates": ["callback_query"]})
    chat.webhook_error = (1796200000, "Wrong response from the webhook: 401 Unauthorized")
    answers.append(("getWebhookInfo", chat.handle("getWebhookInfo", {})))
    info = answers[-1][1][1]["result"]
    assert info["last_error_message"] and info["allowed_updates"] == ["callback_query"]
    for method, (status, body) in answers:
        assert set(body) <= set(envelope), (method, body)
        assert isinstance(body["ok"], bool)
        if body["ok"]:
            assert status == 200
            returns = METHODS[method]["returns"]
            if all(tg_problems(body["result"], t, "result") for t in returns):
                shaped = [t for t in returns if (t in TYPES) == isinstance(body["result"], dict)] or returns
                found[method] = sorted(set(tg_problems(body["result"], shaped[0], "result")))
        else:
            assert status == body["error_code"] and isinstance(body["description"], str) and status >= 400
    assert found == KNOWN_RESULT_GAPS


def test_a_reply_with_an_inline_keyboard_is_sent_and_comes_back_as_a_message_of_the_documented_type():
    names = {p["name"] for p in METHODS["sendMessage"]["parameters"]}
    assert {"reply_parameters", "reply_markup", "disable_notification"} <= names  # one call may carry them all
    chat = FakeTelegram()
    chat.add_chat(CHAT_ID)
    page = chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "🚨 a page"})[1]["result"]["message_id"]
    keyboard = {"inline_keyboard": [[{"text": "🔔 Unmute", "callback_data": "unmute:1"}]]}
    status, answer = chat.handle("sendMessage", {  # a mute's answer: a silent reply offering 🔔 Unmute
        "chat_id": CHAT_ID, "text": "🔕 muted", "disable_notification": True, "reply_parameters": {"message_id": page},
        "reply_markup": keyboard})
    assert status == 200 and tg_problems(answer["result"], "Message", "result") == []
    assert answer["result"]["reply_markup"] == keyboard and answer["result"]["reply_to_message"]["message_id"] == page
    shown = chat.view()[answer["result"]["message_id"]]
    assert shown.buttons == (("🔔 Unmute",),) and shown.reply_to == page and not shown.notified


def test_the_update_the_fake_telegram_sends_for_a_typed_command_has_the_documented_types(private_key_pem):
    world = World(private_key_pem)
    pager_id = world.services.telegram.send_message(CHAT_ID, "📦 a page")
    update = world.chat.command_update("/mute@pager_test_bot owner/name 8h", chat_id=CHAT_ID,
                                       user={"id": 42, "is_bot": False, "first_name": "Maintainer"})
    assert tg_problems(update, "Update", "update") == []
    message = update["message"]
    assert {"from", "chat", "date", "text", "entities"} <= set(message)
    [entity] = message["entities"]
    assert entity == {"offset": 0, "length": len("/mute@pager_test_bot"), "type": "bot_command"}
    # the message is in the chat: a reply to it is valid, as to the bot's own
    for replied in (message["message_id"], pager_id):
        status, answer = world.chat.handle("sendMessage", {"chat_id": CHAT_ID, "text": "muted",
                                                           "reply_parameters": {"message_id": replied}})
        assert status == 200 and answer["result"]["reply_to_message"]["message_id"] == replied
        assert tg_problems(answer["result"], "Message", "result") == []


def test_the_worlds_telegram_webhook_secret_is_a_valid_secret_token():
    from pager_world.world import TELEGRAM_SECRET

    limits = parameter("setWebhook", "secret_token")["limits"]
    assert limit_problems(TELEGRAM_SECRET, limits, "secret_token") == []


def test_the_slices_name_their_package_version_and_license():
    for spec in (GITHUB, TELEGRAM):
        source = spec["source"]
        assert source["package"] and source["version"] and source["license"] == "MIT"
        assert source["version"] in (SPECS / "README.md").read_text(encoding="utf-8")
