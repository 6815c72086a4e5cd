"""What a delivery costs the webhook function, and what starting either function costs.

- `handler_cost`: per delivery next to the floor (HMAC check plus JSON parse of the same body),
  `pager.webhook.handle_github` and `functions/webhook/app.py:lambda_handler` (through pager.bootstrap,
  the resolver and the metrics flush included), for an event pager ignores and for a contribution,
  with the HTTP calls, table writes and table round trips (loads and writes: each one a DynamoDB
  request) per delivery;
- `ignored_delivery_modules`: the modules a fresh interpreter loads to answer one delivery pager
  ignores through `functions/webhook/app.py:lambda_handler`, and which of the heavy ones are among them,
  both `WAYS`: as deployed (the secrets read from their SecureString) and with the secrets in the
  environment (local runs);
- `cold_imports`: the cold start of both functions from the built layer (laid out by `cold_trees`), with
  and without compiled bytecode: the import, then the first invocation (clients, the secrets read from Parameter Store, the
  private key parsed, against moto's server and the fakes on loopback: `cold_world`), then a warm one;
  and the webhook function's for an ignored delivery both `WAYS` in alternating runs, beside what the
  secrets' read through boto3 costs alone.

`BEFORE` keeps the figures of the hot path before it was made lean, measured the same way.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pager_local.local import FakeServer, free_port, load_handler
from pager_world.clock import Clock
from pager_world.events import LambdaContext, github_event, scheduled_event
from pager_world.faults import Faults
from pager_world.github import FakeGitHub
from pager_world.http import HttpRequest, HttpResponse, session_for
from pager_world.payloads import example
from pager_world.store import FaultyStore
from pager_world.telegram import FakeTelegram

from . import fleet
from .simulate import (
    GITHUB_API,
    TELEGRAM_API,
    WEBHOOK_SECRET,
    bench_settings,
    install_on_fleet,
    join_chat,
    make_services,
    private_key,
    quiet,
    register_signals,
)

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("requests", "urllib3", "jwt", "cryptography", "boto3", "botocore")  # what an ignored delivery should not need
# The target: none of these, but boto3 as deployed, where it reads the secrets' SecureString on a new environment's
# first request (`WAYS`). botocore's top-level package comes anyway: Powertools imports it for its user agent.
NOT_FOR_IGNORED = ("requests", "jwt", "cryptography", "boto3")

# The hot path before it was made lean, counted the way this module counts it now, on the tree of an
# older commit (`git archive <commit> | tar -x -C DIR`): the table round trips of a contribution and of
# an ignored delivery, as (loads, writes), on the tree of 22c6c6a, fcd371e's parent (before signals were
# declared in one table and settled over one lease); the modules an ignored delivery loaded on the tree
# of c47878a (`ignored_delivery_modules(root=DIR)` in this repository's virtualenv, Python 3.11.7),
# before the services were built on first use.
BEFORE = {
    "round_trips": {"commit": "fcd371e", "contribution": (3, 4), "ignored": (0, 0)},
    "modules": {"commit": "c47878a", "modules": 709, "heavy": list(HEAVY)},
}


# ---------------------------------------------------------------------------- the handler's cost


BARE_URL = "https://bare.test"


class _Timed:
    """A fake's calls, timed: the seconds spent inside the fakes, to leave out of the handler's own cost."""

    def __init__(self) -> None:
        self.inside = 0.0

    def wrap(self, fake: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
        def call(request: HttpRequest) -> HttpResponse:
            t0 = time.perf_counter()
            try:
                return fake(request)
            finally:
                self.inside += time.perf_counter() - t0
        return call


def contribution_body(template: dict[str, Any], k: int) -> bytes:
    """issues.opened by an outsider, issue number 10,000 + k: a new contribution for each k."""
    p = json.loads(json.dumps(template))
    p["action"] = "opened"
    issue = p["issue"]
    issue.update(number=10_000 + k, title=f"Bench issue {k}", author_association="NONE")
    issue["user"] = dict(issue["user"], login="alice-out", type="User")
    p["sender"] = dict(issue["user"])
    p.pop("comment", None)
    return json.dumps(p, separators=(",", ":")).encode()


def _contribution_template(trace: fleet.Trace) -> dict[str, Any]:
    return fleet.payload(next(e for e in trace.events if e.event == "issues" or e.event == "issue_comment"), trace)


@dataclass
class _Samples:
    """One case's measures, one entry per delivery."""

    floor: list[float] = field(default_factory=list)
    handler: list[float] = field(default_factory=list)
    faked: list[float] = field(default_factory=list)
    app: list[float] = field(default_factory=list)
    app_faked: list[float] = field(default_factory=list)
    bare_call: list[float] = field(default_factory=list)
    calls: list[int] = field(default_factory=list)
    writes: list[int] = field(default_factory=list)
    trips: list[int] = field(default_factory=list)
    loads: list[int] = field(default_factory=list)
    outcomes: Counter[str] = field(default_factory=Counter)

    def summary(self, n: int, bodies: list[tuple[str, bytes]]) -> dict[str, Any]:
        warm = slice(min(50, n // 10), None)  # the first calls warm caches (JWT, installation token)
        f_med = statistics.median(self.floor[warm])
        h_med = statistics.median(self.handler[warm])
        a_med = statistics.median(self.app[warm])
        own = statistics.median(h - e for h, e in zip(self.handler[warm], self.faked[warm], strict=True))
        app_own = statistics.median(a - e for a, e in zip(self.app[warm], self.app_faked[warm], strict=True))
        return {
            "body_bytes": statistics.median(len(b) for _, b in bodies),
            "floor_us": f_med * 1e6,
            "handler_us": h_med * 1e6,
            "own_us": own * 1e6,
            "ratio": h_med / f_med,
            "own_ratio": own / f_med,
            "app_us": a_med * 1e6,
            "app_own_us": app_own * 1e6,
            "app_ratio": a_med / f_med,
            "app_own_ratio": app_own / f_med,
            "bare_call_us": statistics.median(self.bare_call[warm]) * 1e6,
            "outcomes": dict(self.outcomes.most_common(3)),
            "calls": statistics.median(self.calls[warm]),
            "writes": statistics.median(self.writes[warm]),
            "round_trips": statistics.median(self.trips[warm]),
            "round_trips_loads": statistics.median(self.loads[warm]),
            "round_trips_writes": statistics.median(t - n for t, n in zip(self.trips[warm], self.loads[warm], strict=True)),
            "round_trips_max": max(self.trips),
        }


DELIVERY_GAP = 15.0  # virtual seconds between two measured deliveries (each may send and edit a message)


class _HandlerBench:
    """The webhook with its services on the fake GitHub and Telegram, timed three ways per delivery:
    the floor (HMAC check and JSON parse of the body), `handle_github`, and the function's
    `lambda_handler` (through pager.bootstrap, with the services handed in as the replay does)."""

    def __init__(self, pem: str) -> None:
        from pager import bootstrap

        trace = fleet.tiny_trace(hours=1)
        self.trace = trace
        self.clock = clock = Clock(time.time())
        faults = Faults(record=False)
        github = FakeGitHub(clock=clock, faults=faults, api_url=GITHUB_API, keep_requests=False)
        telegram = FakeTelegram(faults=faults, keep_requests=False, clock=clock)
        self.store = FaultyStore(faults)
        self.timed = _Timed()
        session = session_for({GITHUB_API: self.timed.wrap(github), TELEGRAM_API: self.timed.wrap(telegram)})
        settings = bench_settings(pem)
        install_on_fleet(github, trace, settings)
        join_chat(telegram, settings)
        self.services = make_services(settings, self.store, session, clock)
        self.lambda_handler = load_handler("webhook")
        self.context = LambdaContext("pager-webhook", seconds=10**9)
        bootstrap.use(self.services)
        self.bare = session_for({BARE_URL: lambda request: HttpResponse(200, {"ok": True, "result": {}})})

    def floor(self, apigw: dict[str, Any], samples: _Samples) -> None:
        from pager.routing import verify_signature

        t0 = time.perf_counter()
        raw = apigw["body"].encode()
        verify_signature(raw, apigw["headers"]["x-hub-signature-256"], WEBHOOK_SECRET)
        json.loads(raw)
        samples.floor.append(time.perf_counter() - t0)

    def handler(self, apigw: dict[str, Any], samples: _Samples) -> None:
        from pager.webhook import handle_github

        services, store = self.services, self.store
        self.timed.inside = 0.0
        calls_before = services.github.calls + services.telegram.calls
        writes_before, loads_before, trips_before = sum(store.writes.values()), store.loads, store.round_trips
        t0 = time.perf_counter()
        status, answer = handle_github(apigw, services)
        samples.handler.append(time.perf_counter() - t0)
        samples.faked.append(self.timed.inside)
        samples.calls.append(services.github.calls + services.telegram.calls - calls_before)
        samples.writes.append(sum(store.writes.values()) - writes_before)
        samples.trips.append(store.round_trips - trips_before)
        samples.loads.append(store.loads - loads_before)
        samples.outcomes[f"{status} {answer.get('outcome', answer.get('error', ''))}"[:60]] += 1

    def bare_call(self, apigw: dict[str, Any], samples: _Samples) -> None:
        """One POST through `requests` to an adapter that answers at once: what a call costs before any
        of pager's work (the session as the clients build it)."""
        t0 = time.perf_counter()
        self.bare.post(BARE_URL, json={"chat_id": 1, "text": "x"}, timeout=(3.05, 5)).json()
        samples.bare_call.append(time.perf_counter() - t0)

    def app(self, apigw: dict[str, Any], samples: _Samples) -> None:
        self.timed.inside = 0.0
        t0 = time.perf_counter()
        self.lambda_handler(apigw, self.context)
        samples.app.append(time.perf_counter() - t0)
        samples.app_faked.append(self.timed.inside)

    def case(self, name: str, bodies: list[tuple[str, bytes]], n: int) -> dict[str, Any]:
        """`n` deliveries of the case, each measured three ways in a rotating order; `handle_github` and
        `lambda_handler` each get their own delivery (bodies k and n + k, taken round)."""
        samples = _Samples()
        for k in range(n):
            # Deliveries come some seconds apart, as in a busy fleet: what is measured is one delivery's
            # cost, not the chat's flood limit (at most 20 messages a minute in a group, the fake's rule).
            self.clock.advance(DELIVERY_GAP)
            deliveries = []
            for j in (k, n + k):
                event, body = bodies[j % len(bodies)]
                deliveries.append(github_event(event, body, guid=f"bench-{name}-{j}", secret=WEBHOOK_SECRET))
            steps = [(self.floor, deliveries[0]), (self.handler, deliveries[0]), (self.app, deliveries[1]),
                     (self.bare_call, deliveries[0])]
            for step, apigw in steps[k % 4:] + steps[:k % 4]:
                step(apigw, samples)
        return samples.summary(n, bodies)


def handler_cost(n: int = 2000, *, pem: str | None = None) -> dict[str, Any]:
    """Time the webhook per delivery next to the floor (HMAC compare + json.loads of the same body),
    interleaved, for an event the pager ignores and for a contribution (through the fake GitHub and
    Telegram): `handle_github`, and `functions/webhook/app.py:lambda_handler` (the resolver, the
    services' lookup and the metrics flush included); count the HTTP calls, table writes and table
    round trips of `handle_github` per delivery."""
    from pager import bootstrap

    register_signals()
    bench = _HandlerBench(pem or private_key())
    trace = bench.trace
    ignored = next(e for e in trace.events if e.event == "check_run")
    base = next(e for e in trace.events if e.event == "workflow_job")
    template = _contribution_template(trace)
    cases = {
        "ignored": [(ignored.event, fleet.render(ignored, trace)), (base.event, fleet.render(base, trace))],
        "contribution": [("issues", contribution_body(template, k)) for k in range(2 * n)],
    }
    out: dict[str, Any] = {"n": n}
    try:
        with quiet():
            for name, bodies in cases.items():
                out[name] = bench.case(name, bodies, n)
    finally:
        bootstrap.use(None)
    return out


# ------------------------------------------------------------------ the modules of an ignored delivery

# The two ways an ignored delivery is measured, side by side: as every deployment runs (the template sets
# PAGER_SECRET_ID, so the first request of an environment reads the secrets' SecureString through Powertools
# and boto3), and with the four secrets in the environment instead (local runs and tests), which never asks
# the secrets' store. Everything else in the two environments is the same.
WAYS = {"deployed": "as deployed (secret store set)", "local": "secret in the environment (local runs)"}
IGNORED = ("star", "created")  # the ignored delivery both measures answer

_MODULES = """
import json, sys
sys.path[:0] = {paths!r}
event = json.loads(sys.stdin.read())
import app
class Context:
    function_name, memory_limit_in_mb, aws_request_id = "pager-webhook", 512, "modules-1"
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:pager-webhook"

    def get_remaining_time_in_millis(self):
        return 15000

answer = app.lambda_handler(event, Context())
print({mark!r} + json.dumps({{
    "names": sorted(sys.modules),
    "status": answer.get("statusCode"),
    "body": answer.get("body"),
}}))
"""
_MARK = "pager-bench-modules: "


def _modules_of(names: list[str], answer: dict[str, Any]) -> dict[str, Any]:
    """What one fresh interpreter had loaded: how many modules, which of `HEAVY`, botocore's own, its answer."""
    body = json.loads(answer.pop("body") or "{}")
    return {"modules": len(names), "loaded": [name for name in HEAVY if name in names],
            "botocore": [m for m in names if m == "botocore" or m.startswith("botocore.")],
            "outcome": f"{answer.pop('status')} {body.get('outcome', body.get('error', ''))}"}


def ignored_delivery_modules(event: str = IGNORED[0], action: str = IGNORED[1], *, pem: str | None = None,
                             root: Path = ROOT, python: str = sys.executable) -> dict[str, Any]:
    """The modules a fresh interpreter (`-I`) has loaded once `functions/webhook/app.py` (imported as
    Lambda imports it) answered one signed delivery of an event pager ignores, both `WAYS`: as deployed,
    its secrets read from their SecureString in moto's Parameter Store on loopback (`cold_world`), and with
    the secrets in its environment. For each: how many, which of `HEAVY`, botocore's own; for the first,
    also the top-level packages of the modules it loaded that the second did not (`added`, by count). The
    repository's layers/pager and sim are first on its path. The event is built here and handed over on
    stdin, so that building it loads nothing there."""
    from pager.signals import acts_on

    if acts_on(event, action):
        raise ValueError(f"pager acts on {event}.{action}: not an ignored delivery")
    pem = pem or private_key()
    apigw = github_event(event, example(event, action), guid="bench-ignored-1", secret=WEBHOOK_SECRET)
    paths = [str(root / "functions" / "webhook"), str(root / "layers" / "pager"), str(root / "sim")]
    code = _MODULES.format(paths=paths, mark=_MARK)
    names: dict[str, list[str]] = {}
    out: dict[str, Any] = {"event": f"{event}.{action}",
                           "python": subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip()}
    with cold_world(pem) as (deployed, _, _):
        for way, env in (("deployed", deployed), ("local", secrets_in_environment(deployed, pem))):
            done = subprocess.run([python, "-I", "-c", code], input=json.dumps(apigw), capture_output=True, text=True,
                                  env=env, timeout=120)
            line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(_MARK)), None)
            if done.returncode != 0 or line is None:
                raise RuntimeError(f"an ignored delivery in a fresh interpreter ({WAYS[way]}) failed: "
                                   f"{done.stderr.strip()[-800:]}")
            answer = json.loads(line[len(_MARK):])
            names[way] = answer.pop("names")
            out[way] = _modules_of(names[way], answer)
    extra = set(names["deployed"]) - set(names["local"])
    out["deployed"]["added"] = dict(Counter(m.split(".")[0] for m in sorted(extra)).most_common())  # ties by name
    return out


# ------------------------------------------------------------------------------------- cold import

WORK = ROOT / ".aws-sam" / "bench"  # where the cold start's layer, runtime and functions are laid out


def _python_for_tag(tag: str) -> str | None:
    """An interpreter for a bytecode tag such as cpython-313: on PATH, or pyenv's."""
    if not tag.startswith("cpython-") or len(tag) < 11:
        return None
    version = f"{tag[8]}.{tag[9:]}"
    if sys.implementation.cache_tag == tag:
        return sys.executable
    candidates = [shutil.which(f"python{version}")]
    try:
        root = subprocess.run(["pyenv", "root"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        root = ""
    if root:
        candidates += sorted(str(p) for p in Path(root, "versions").glob(f"{version}.*/bin/python{version}"))
    for candidate in candidates:
        if not candidate:
            continue
        try:
            ok = subprocess.run([candidate, "-c", "import sys; print(sys.implementation.cache_tag)"],
                                capture_output=True, text=True, timeout=30).stdout.strip() == tag
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return candidate
    return None


def _run(*command: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed: {done.stderr.strip()[-800:]}")


def _pip(python: str, target: Path, *requirements: str) -> None:
    _run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile",
         "--target", str(target), *requirements)


def _compile(python: str, path: Path) -> None:
    _run(python, "-m", "compileall", "-q", "--invalidation-mode", "unchecked-hash", str(path))


def bench_layer(log: Callable[[str], None], built: Path | None = None, work: Path = WORK) -> tuple[Path, Path, str, str]:
    """(layer, runtime, python, where from): the layer's dependencies with the current `pager`, compiled,
    and boto3 as the Lambda runtime brings it, in `work` (.aws-sam/bench unless told).

    The dependencies come from `make build`'s layer (.aws-sam/build/PagerLayer/python) when it is
    there and an interpreter of its bytecode version is found; else they are installed from the
    layer's requirements with the current python."""
    built = built or ROOT / ".aws-sam" / "build" / "PagerLayer" / "python"
    requirements = ROOT / "layers" / "pager" / "requirements.txt"
    python, source = None, ""
    if (built / "pager").is_dir():
        tags = {p.name.split(".")[1] for p in built.glob("*/__pycache__/*.pyc")}
        python = next((p for p in (_python_for_tag(t) for t in sorted(tags)) if p), None)
        source = "the layer built by `make build`"
    layer = work / "layer"
    if layer.exists():
        shutil.rmtree(layer)
    if python:
        log(f"layer: dependencies from {built}")
        shutil.copytree(built, layer, ignore=shutil.ignore_patterns("pager"))
    else:
        python = sys.executable
        source = "the layer's requirements installed with this python (`make build` had not built the layer)"
        stamp = hashlib.sha256(requirements.read_bytes() + python.encode()).hexdigest()[:12]
        cached = work / f"deps-{stamp}"
        if not cached.exists():
            log("layer: installing the layer's requirements (once)")
            _pip(python, cached.with_suffix(".tmp"), "-r", str(requirements))
            cached.with_suffix(".tmp").rename(cached)
        shutil.copytree(cached, layer, ignore=shutil.ignore_patterns("bin"))
    shutil.copytree(ROOT / "layers" / "pager" / "pager", layer / "pager", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _compile(python, layer)
    tag = subprocess.run([python, "-c", "import sys; print(sys.implementation.cache_tag)"], capture_output=True, text=True).stdout.strip()
    runtime = work / f"runtime-{tag}"
    if not runtime.exists():
        log("runtime: installing boto3 as the Lambda runtime has it (once)")
        version = importlib.metadata.version("boto3")
        _pip(python, runtime.with_suffix(".tmp"), f"boto3=={version}")
        _compile(python, runtime.with_suffix(".tmp"))
        runtime.with_suffix(".tmp").rename(runtime)
    return layer, runtime, python, source


# ----------------------------------------------------------------------- the world a cold start meets


class _Intervals:
    """When the fakes were busy answering (wall-clock intervals, shared with the child by time.time)."""

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def add(self, start: float, end: float) -> None:
        with self._lock:
            self.spans.append((start, end))

    def within(self, start: float, end: float) -> float:
        """Seconds the fakes were busy between `start` and `end`."""
        with self._lock:
            return sum(max(0.0, min(e, end) - max(s, start)) for s, e in self.spans)

    def timed(self, answer: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any) -> Any:
            t0 = time.time()
            try:
                return answer(*args)
            finally:
                self.add(t0, time.time())
        return call


@contextlib.contextmanager
def _moto(busy: _Intervals) -> Iterator[str]:
    """moto's server on loopback (DynamoDB and Parameter Store), its answers timed; yields its URL."""
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
    from werkzeug.serving import make_server

    app = DomainDispatcherApplication(create_backend_app)

    def timed_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        t0 = time.time()
        try:
            return list(app(environ, start_response))
        finally:
            busy.add(t0, time.time())

    class Handler(MotoRequestHandler):
        disable_nagle_algorithm = True  # an answer's header and body go out at once, not 40 ms apart

        def log(self, *args: Any) -> None:  # quiet: no line per request
            pass

    port = free_port()
    server = make_server("127.0.0.1", port, timed_app, True, request_handler=Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        # moto keeps its backends in this process: a world made again (the modules' measure, then the cold
        # starts') starts from nothing, as moto's own reset endpoint leaves it.
        urllib.request.urlopen(urllib.request.Request(f"{url}/moto-api/reset", method="POST"), timeout=30).close()
        yield url
    finally:
        server.shutdown()
        thread.join()


SECRET_ID = "/pager/pager-bench/secrets"  # the stack's form: a SecureString parameter


def _secrets(pem: str) -> dict[str, str]:
    """The four secrets, by the names the settings read them under."""
    settings = bench_settings(pem)
    return {"GITHUB_PRIVATE_KEY": pem, "GITHUB_WEBHOOK_SECRET": settings.github_webhook_secret,
            "TELEGRAM_BOT_TOKEN": settings.telegram_bot_token, "TELEGRAM_WEBHOOK_SECRET": settings.telegram_webhook_secret}


def secrets_in_environment(env: dict[str, str], pem: str) -> dict[str, str]:
    """`cold_world`'s environment as a local run has it: the four secrets in it, no secret id."""
    return {**{name: value for name, value in env.items() if name != "PAGER_SECRET_ID"}, **_secrets(pem)}


@contextlib.contextmanager
def cold_world(pem: str) -> Iterator[tuple[dict[str, str], _Intervals, FakeGitHub]]:
    """What a deployment's first invocation talks to, on loopback: the table and the secret in moto's
    server, GitHub and Telegram as pager_world's fakes. Yields the functions' environment (as the
    template sets it, the secrets' four values only in their Parameter Store SecureString), when the fakes were busy, and
    the fake GitHub."""
    import boto3

    from pager.dynamo import create_table

    busy = _Intervals()
    settings = bench_settings(pem)
    github = FakeGitHub(clock=time.time, keep_requests=False)
    install_on_fleet(github, fleet.tiny_trace(hours=1), settings)
    # Flood control off: the cold starts run back to back, two contributions each, into the one chat, far more
    # messages a second than a deployment's cold start meets; its wait (pager sleeps Telegram's retry_after,
    # a second or two) would be measured as the invocation's own time.
    telegram = FakeTelegram(keep_requests=False, flood=False)
    join_chat(telegram, settings)
    servers = [FakeServer(github), FakeServer(telegram)]
    for server in servers:
        server.answer = busy.timed(server.answer)  # type: ignore[method-assign]
        server.start()
        assert server.server is not None
        server.server.RequestHandlerClass.disable_nagle_algorithm = True  # its own handler class
    github.api_url = servers[0].url
    try:
        with _moto(busy) as aws:
            keys = {"region_name": "us-east-1", "aws_access_key_id": "bench", "aws_secret_access_key": "bench"}
            create_table(boto3.client("dynamodb", endpoint_url=aws, **keys), settings.table)
            boto3.client("ssm", endpoint_url=aws, **keys).put_parameter(Name=SECRET_ID, Type="SecureString",
                                                                        Value=json.dumps(_secrets(pem)))
            env = {
                "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "AWS_DEFAULT_REGION": "us-east-1",
                "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
                "AWS_ENDPOINT_URL_SSM": aws, "PAGER_DYNAMODB_ENDPOINT": aws,
                "PAGER_TABLE": settings.table, "PAGER_SECRET_ID": SECRET_ID, "GITHUB_APP_ID": settings.github_app_id,
                "GITHUB_APP_SLUG": settings.github_app_slug, "TELEGRAM_CHAT_ID": settings.telegram_chat_id,
                "CONTROL_REPOSITORY": settings.control_repository, "GITHUB_API_URL": servers[0].url,
                "TELEGRAM_API_URL": servers[1].url, "POWERTOOLS_SERVICE_NAME": "pager", "LOG_LEVEL": "INFO",
            }
            yield env, busy, github
    finally:
        for server in servers:
            server.stop()


# ------------------------------------------------------------------------------------- cold start

FIRST_EVENT = {"webhook": "a contribution (issues.opened by an outsider)", "sweep": "a scheduled run"}

_TIMER = """
import json, sys, time
sys.path[:0] = {paths!r}
events = json.loads(sys.stdin.read())

class Context:
    function_name = {name!r}
    memory_limit_in_mb = 512
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:" + {name!r}

    def __init__(self, n):
        self.aws_request_id = "cold-%d" % n

    def get_remaining_time_in_millis(self):
        return 150000

t0 = time.perf_counter()
import app
t1, w1 = time.perf_counter(), time.time()
first = app.lambda_handler(events[0], Context(1))
t2, w2 = time.perf_counter(), time.time()
second = app.lambda_handler(events[1], Context(2))
t3, w3 = time.perf_counter(), time.time()
answers = [a.get("statusCode", a.get("outcome")) for a in (first, second)]
print({mark!r} + json.dumps({{"module": t1 - t0, "first": t2 - t1, "warm": t3 - t2, "spans": [w1, w2, w3],
                              "answers": answers}}))
"""
_COLD_MARK = "pager-bench-cold: "


# The secrets' read alone, in the same interpreter and paths as the cold start: what boto3 costs the first
# request of an environment as deployed. Powertools reads the SecureString through a boto3 client of its own.
_SECRET_READ = """
import json, sys, time
sys.path[:0] = {paths!r}
t0 = time.perf_counter()
import botocore.session
t1 = time.perf_counter()
import boto3
t2 = time.perf_counter()
client = boto3.client("ssm")
t3 = time.perf_counter()
client.get_parameter(Name={name!r}, WithDecryption=True)
t4 = time.perf_counter()
print({mark!r} + json.dumps({{"botocore": t1 - t0, "boto3": t2 - t1, "client": t3 - t2, "call": t4 - t3}}))
"""


class _Events:
    """Each child's two events: two new contributions, two scheduled runs, or two deliveries pager ignores."""

    def __init__(self, trace: fleet.Trace) -> None:
        self.template = _contribution_template(trace)
        self.k = 0

    def __call__(self, kind: str) -> list[dict[str, Any]]:
        out = []
        for _ in range(2):
            self.k += 1
            if kind == "webhook":
                body = contribution_body(self.template, 50_000 + self.k)
                out.append(github_event("issues", body, guid=f"bench-cold-{self.k}", secret=WEBHOOK_SECRET))
            elif kind == "ignored":
                out.append(github_event(IGNORED[0], example(*IGNORED), guid=f"bench-cold-{self.k}", secret=WEBHOOK_SECRET))
            else:
                out.append(scheduled_event(f"bench-cold-{self.k}", time.time()))
        return out


def _run_child(python: str, flags: list[str], code: str, env: dict[str, str], stdin: str = "") -> dict[str, Any]:
    done = subprocess.run([python, *flags, "-c", code], input=stdin, capture_output=True, text=True, env=env, timeout=180)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(_COLD_MARK)), None)
    if done.returncode != 0 or line is None:
        raise RuntimeError(f"a cold start failed: {done.stderr.strip()[-800:]}")
    return json.loads(line[len(_COLD_MARK):])


def _child(python: str, flags: list[str], code: str, env: dict[str, str], events: list[dict[str, Any]],
           busy: _Intervals) -> dict[str, Any]:
    out = _run_child(python, flags, code, env, json.dumps(events))
    w1, w2, w3 = out.pop("spans")
    out.update(fakes_first=busy.within(w1, w2), fakes_warm=busy.within(w2, w3))
    return out


def _medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The medians of a function's runs; `one_time` is what the first invocation did once: its own time
    (the fakes' left out) less a warm invocation's own time, per run."""
    own = [(r["first"] - r["fakes_first"]) - (r["warm"] - r["fakes_warm"]) for r in runs]
    out = {key: statistics.median(r[key] for r in runs) for key in ("module", "first", "warm", "fakes_first", "fakes_warm")}
    out.update(first_invocation=statistics.median(r["module"] + r["first"] for r in runs), one_time=statistics.median(own),
               answers=runs[0]["answers"])
    return out


@dataclass(frozen=True)
class ColdTrees:
    """What a cold start runs from (`cold_trees`): the layer and the runtime, compiled and bare (no bytecode),
    each function's folder both ways, the python of the layer's bytecode, and where the layer came from."""

    layer: Path
    runtime: Path
    bare_layer: Path
    bare_runtime: Path
    functions: dict[tuple[str, str], Path]  # (function, "compiled" or "bare") -> its folder
    python: str
    source: str


def cold_trees(log: Callable[[str], None] = lambda s: None, *, work: Path = WORK) -> ColdTrees:
    """Lay out in `work` (.aws-sam/bench) the trees `cold_imports` runs from (`bench_layer`, copies without
    bytecode, each function's folder): no timing here, so it may run beside anything."""
    layer, runtime, python, source = bench_layer(log, work=work)
    bare_layer, bare_runtime = work / "layer-bare", work / "runtime-bare"
    for src, dst in ((layer, bare_layer), (runtime, bare_runtime)):
        if dst.exists():
            shutil.rmtree(dst)
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    functions = {}
    for name in ("webhook", "sweep"):
        for flavour in ("compiled", "bare"):
            fdir = work / f"function-{name}-{flavour}"
            if fdir.exists():
                shutil.rmtree(fdir)
            fdir.mkdir(parents=True)
            shutil.copy2(ROOT / "functions" / name / "app.py", fdir / "app.py")
            if flavour == "compiled":
                _compile(python, fdir)
            functions[(name, flavour)] = fdir
    return ColdTrees(layer, runtime, bare_layer, bare_runtime, functions, python, source)


def cold_imports(repeats: int = 7, log: Callable[[str], None] = lambda s: None, *, pem: str | None = None,
                 work: Path = WORK, trees: ColdTrees | None = None) -> dict[str, Any]:
    """A cold start of each function in a fresh interpreter, median of `repeats`: the import of its
    module, then its first invocation (building the clients, reading the secrets from Parameter Store,
    parsing the app's private key, the lazy imports, and the event's own work against the table, GitHub
    and Telegram on loopback), then a second, warm invocation of the same kind; from the compiled
    layer, and from a copy without __pycache__ run with -B. Then the webhook function's cold start for a
    delivery pager ignores, both `WAYS` in alternating runs (`ignored_deployed`, `ignored_local`), and the
    secrets' read through boto3 alone, run between them (`secret_read`: botocore's import, boto3's on top,
    the SSM client, the GetParameter). The trees are `trees`, laid out before, or else `cold_trees` in
    `work` (.aws-sam/bench)."""
    trees = trees or cold_trees(log, work=work)
    layer, runtime, python, functions = trees.layer, trees.runtime, trees.python, trees.functions
    bare_layer, bare_runtime = trees.bare_layer, trees.bare_runtime
    pem = pem or private_key()
    out: dict[str, Any] = {"python": subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip(),
                           "source": trees.source, "repeats": repeats, "first_event": FIRST_EVENT,
                           "ignored_event": ".".join(IGNORED)}
    events = _Events(fleet.tiny_trace(hours=1))
    with cold_world(pem) as (env, busy, _):
        for name in ("webhook", "sweep"):
            for flavour, paths, flags in (("compiled", [str(functions[(name, "compiled")]), str(layer), str(runtime)], ["-I", "-S"]),
                                          ("bare", [str(functions[(name, "bare")]), str(bare_layer), str(bare_runtime)], ["-I", "-S", "-B"])):
                code = _TIMER.format(paths=paths, name=name, mark=_COLD_MARK)
                runs = [_child(python, flags, code, env, events(name), busy) for _ in range(repeats)]
                out[f"{name}_{flavour}"] = measured = _medians(runs)
                log(f"cold start {name} ({flavour}): import {measured['module'] * 1000:.0f} ms, first invocation "
                    f"{measured['first'] * 1000:.0f} ms, a warm one {measured['warm'] * 1000:.0f} ms")
        paths = [str(functions[("webhook", "compiled")]), str(layer), str(runtime)]
        ways = {"deployed": env, "local": secrets_in_environment(env, pem)}
        out.update(ignored_cold_starts(python, paths, ways, events, busy, repeats, log))
    return out


def ignored_cold_starts(python: str, paths: list[str], envs: dict[str, dict[str, str]], events: _Events,
                        busy: _Intervals, repeats: int, log: Callable[[str], None]) -> dict[str, Any]:
    """The webhook function's cold start for an ignored delivery each way of `envs` and the secrets' read
    alone, `repeats` rounds, each round in the order of the last reversed, so that a noisy machine weighs
    on each alike; medians."""
    flags = ["-I", "-S"]
    timer = _TIMER.format(paths=paths, name="webhook", mark=_COLD_MARK)
    reader = _SECRET_READ.format(paths=paths, name=SECRET_ID, mark=_COLD_MARK)
    runs: dict[str, list[dict[str, Any]]] = {way: [] for way in envs}
    reads: list[dict[str, float]] = []
    order = [*envs, "secret_read"]
    for _ in range(repeats):
        for step in order:
            if step == "secret_read":
                reads.append(_run_child(python, flags, reader, envs["deployed"]))
            else:
                runs[step].append(_child(python, flags, timer, envs[step], events("ignored"), busy))
        order.reverse()
    out: dict[str, Any] = {f"ignored_{way}": _medians(r) for way, r in runs.items()}
    out["secret_read"] = {key: statistics.median(r[key] for r in reads) for key in reads[0]}
    for way in envs:
        m = out[f"ignored_{way}"]
        log(f"cold start of an ignored delivery, {WAYS[way]}: import {m['module'] * 1000:.0f} ms, first invocation "
            f"{m['first'] * 1000:.0f} ms")
    return out
