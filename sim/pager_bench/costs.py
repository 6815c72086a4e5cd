"""What a delivery costs the webhook function, and what starting either function costs.

- `handler_cost`: `pager.webhook.handle_github` per delivery next to the floor (HMAC check plus JSON
  parse of the same body), for an event pager ignores and for a contribution, with the HTTP calls,
  table writes and table round trips (loads and writes: each one a DynamoDB request) per delivery;
- `ignored_delivery_modules`: the modules a fresh interpreter loads to answer one delivery pager
  ignores through `functions/webhook/app.py:lambda_handler`, and which of the heavy ones are among them;
- `cold_imports`: the cold import of both functions from the built layer, with and without
  compiled bytecode.

`BEFORE` keeps the figures of the hot path before it was made lean, measured the same way.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from pager_world.clock import Clock
from pager_world.events import github_event
from pager_world.faults import Faults
from pager_world.github import FakeGitHub
from pager_world.http import HttpRequest, HttpResponse, session_for
from pager_world.payloads import example
from pager_world.store import FaultyStore
from pager_world.telegram import FakeTelegram

from . import fleet
from .simulate import (GITHUB_API, TELEGRAM_API, WEBHOOK_SECRET, bench_settings, install_on_fleet, make_services, private_key, quiet,
                       register_signals)

ROOT = Path(__file__).resolve().parents[2]

HEAVY = ("requests", "urllib3", "jwt", "cryptography", "boto3", "botocore")  # what an ignored delivery should not need
# The target: none of these. botocore's top-level package comes anyway: Powertools imports it for its user agent.
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


def handler_cost(n: int = 2000, *, pem: str | None = None) -> dict[str, Any]:
    """Time `handle_github` per delivery next to the floor (HMAC compare + json.loads of the same body),
    interleaved, for an event the pager ignores and for a contribution (through the fake GitHub and
    Telegram); count its HTTP calls, table writes and table round trips per delivery."""
    from pager.routing import verify_signature
    from pager.webhook import handle_github

    register_signals()
    pem = pem or private_key()
    trace = fleet.tiny_trace(hours=1)
    clock = Clock(time.time())
    faults = Faults(record=False)
    github = FakeGitHub(clock=clock, faults=faults, api_url=GITHUB_API, keep_requests=False)
    telegram = FakeTelegram(faults=faults, keep_requests=False)
    store = FaultyStore(faults)
    inside = [0.0]

    def timed(fake: Callable[[HttpRequest], HttpResponse]) -> Callable[[HttpRequest], HttpResponse]:
        def call(request: HttpRequest) -> HttpResponse:
            t0 = time.perf_counter()
            try:
                return fake(request)
            finally:
                inside[0] += time.perf_counter() - t0
        return call

    session = session_for({GITHUB_API: timed(github), TELEGRAM_API: timed(telegram)})
    settings = bench_settings(pem)
    install_on_fleet(github, trace, settings)
    services = make_services(settings, store, session, clock)
    ignored = next(e for e in trace.events if e.event == "check_run")
    base = next(e for e in trace.events if e.event == "workflow_job")
    contribution_template = fleet.payload(next(e for e in trace.events if e.event == "issues" or e.event == "issue_comment"), trace)

    def contribution(k: int) -> tuple[str, bytes]:
        p = json.loads(json.dumps(contribution_template))
        p["action"] = "opened"
        issue = p["issue"]
        issue.update(number=10_000 + k, title=f"Bench issue {k}", author_association="NONE")
        issue["user"] = dict(issue["user"], login="alice-out", type="User")
        p["sender"] = dict(issue["user"])
        p.pop("comment", None)
        return "issues", json.dumps(p, separators=(",", ":")).encode()

    cases = {
        "ignored": [(ignored.event, fleet.render(ignored, trace)), (base.event, fleet.render(base, trace))],
        "contribution": [contribution(k) for k in range(n)],
    }
    out: dict[str, Any] = {"n": n}
    with quiet():
        for name, bodies in cases.items():
            floor, handler, faked = [], [], []
            calls: list[int] = []
            writes: list[int] = []
            trips: list[int] = []
            loads: list[int] = []
            outcomes: Counter[str] = Counter()
            for k in range(n):
                event, body = bodies[k % len(bodies)]
                apigw = github_event(event, body, guid=f"bench-{name}-{k}", secret=WEBHOOK_SECRET)
                signature = apigw["headers"]["x-hub-signature-256"]
                order = (0, 1) if k % 2 == 0 else (1, 0)
                for which in order:
                    if which == 0:
                        t0 = time.perf_counter()
                        raw = apigw["body"].encode()
                        verify_signature(raw, signature, WEBHOOK_SECRET)
                        json.loads(raw)
                        floor.append(time.perf_counter() - t0)
                    else:
                        inside[0] = 0.0
                        calls_before = services.github.calls + services.telegram.calls
                        writes_before, loads_before = sum(store.writes.values()), store.loads
                        trips_before = store.round_trips
                        t0 = time.perf_counter()
                        status, answer = handle_github(apigw, services)
                        handler.append(time.perf_counter() - t0)
                        faked.append(inside[0])
                        calls.append(services.github.calls + services.telegram.calls - calls_before)
                        writes.append(sum(store.writes.values()) - writes_before)
                        trips.append(store.round_trips - trips_before)
                        loads.append(store.loads - loads_before)
                        outcomes[f"{status} {answer.get('outcome', answer.get('error', ''))}"[:60]] += 1
            warm = slice(min(50, n // 10), None)  # the first calls warm caches (JWT, installation token)
            f_med = statistics.median(floor[warm])
            h_med = statistics.median(handler[warm])
            own = [h - e for h, e in zip(handler[warm], faked[warm])]
            out[name] = {
                "body_bytes": statistics.median(len(b) for _, b in bodies),
                "floor_us": f_med * 1e6,
                "handler_us": h_med * 1e6,
                "own_us": statistics.median(own) * 1e6,
                "ratio": h_med / f_med,
                "own_ratio": statistics.median(own) / f_med,
                "outcomes": dict(outcomes.most_common(3)),
                "calls": statistics.median(calls[warm]),
                "writes": statistics.median(writes[warm]),
                "round_trips": statistics.median(trips[warm]),
                "round_trips_loads": statistics.median(loads[warm]),
                "round_trips_max": max(trips),
            }
    return out


# ------------------------------------------------------------------ the modules of an ignored delivery

_MODULES = """
import json, sys
sys.path[:0] = {paths!r}
event = json.loads(sys.stdin.read())
import app
answer = app.lambda_handler(event, None)
heavy = {heavy!r}
print({mark!r} + json.dumps({{
    "modules": len(sys.modules),
    "loaded": [name for name in heavy if name in sys.modules],
    "botocore": sorted(m for m in sys.modules if m == "botocore" or m.startswith("botocore.")),
    "status": answer.get("statusCode"),
    "body": answer.get("body"),
}}))
"""
_MARK = "pager-bench-modules: "


def ignored_delivery_modules(event: str = "star", action: str = "created", *, pem: str | None = None,
                             root: Path = ROOT, python: str = sys.executable) -> dict[str, Any]:
    """The modules a fresh interpreter (`-I`) has loaded once `functions/webhook/app.py` (imported as
    Lambda imports it) answered one signed delivery of an event pager ignores: how many, and which of
    `HEAVY`. The repository's layers/pager and sim are first on its path; the settings are in its
    environment, without a secret id (so Secrets Manager is never asked). The event is built here and
    handed over on stdin, so that building it loads nothing there."""
    from pager.signals import acts_on

    if acts_on(event, action):
        raise ValueError(f"pager acts on {event}.{action}: not an ignored delivery")
    apigw = github_event(event, example(event, action), guid="bench-ignored-1", secret=WEBHOOK_SECRET)
    paths = [str(root / "functions" / "webhook"), str(root / "layers" / "pager"), str(root / "sim")]
    env = {
        "PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "AWS_DEFAULT_REGION": "us-east-1",
        "PAGER_TABLE": "pager-bench", "GITHUB_APP_ID": "4242", "GITHUB_APP_SLUG": "pager-bench",
        "GITHUB_PRIVATE_KEY": pem or private_key(), "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
        "TELEGRAM_BOT_TOKEN": "4242:bench-token", "TELEGRAM_WEBHOOK_SECRET": "bench-telegram-secret",
        "TELEGRAM_CHAT_ID": "-1004242", "CONTROL_REPOSITORY": fleet.CONTROL_REPOSITORY,
    }
    code = _MODULES.format(paths=paths, heavy=list(HEAVY), mark=_MARK)
    done = subprocess.run([python, "-I", "-c", code], input=json.dumps(apigw), capture_output=True, text=True,
                          env=env, timeout=120)
    line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(_MARK)), None)
    if done.returncode != 0 or line is None:
        raise RuntimeError(f"an ignored delivery in a fresh interpreter failed: {done.stderr.strip()[-800:]}")
    out = json.loads(line[len(_MARK):])
    answer = json.loads(out.pop("body") or "{}")
    out.update(event=f"{event}.{action}", outcome=f"{out.pop('status')} {answer.get('outcome', answer.get('error', ''))}",
               python=subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip())
    return out


# ------------------------------------------------------------------------------------- cold import


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


def bench_layer(log: Callable[[str], None], built: Path | None = None) -> tuple[Path, Path, str, str]:
    """(layer, runtime, python, where from): the layer's dependencies with the current `pager`, compiled,
    and boto3 as the Lambda runtime brings it, in .aws-sam/bench.

    The dependencies come from `make build`'s layer (.aws-sam/build/PagerLayer/python) when it is
    there and an interpreter of its bytecode version is found; else they are installed from the
    layer's requirements with the current python."""
    work = ROOT / ".aws-sam" / "bench"
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


FIRST_INVOCATION = {
    "webhook": ["pager.webhook", "pager.signals", "pager.github", "pager.telegram", "pager.store", "boto3", "botocore.config"],
    "sweep": ["pager.sweep", "pager.signals.alarm", "pager.github", "pager.telegram", "pager.store", "boto3", "botocore.config"],
}

_TIMER = """
import importlib, sys, time
sys.path[:0] = {paths!r}
t0 = time.perf_counter()
import app
t1 = time.perf_counter()
for name in {lazy!r}:
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
t2 = time.perf_counter()
print(t1 - t0, t2 - t0)
"""


def cold_imports(repeats: int = 7, log: Callable[[str], None] = lambda s: None) -> dict[str, Any]:
    """Median seconds to import each function's module (and then what its first invocation imports) in
    a fresh interpreter: from the compiled layer, and from a copy without __pycache__ run with -B."""
    layer, runtime, python, source = bench_layer(log)
    work = ROOT / ".aws-sam" / "bench"
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
    env = {"PATH": os.environ.get("PATH", ""), "AWS_DEFAULT_REGION": "us-east-1", "LANG": "C.UTF-8"}
    out: dict[str, Any] = {"python": subprocess.run([python, "--version"], capture_output=True, text=True).stdout.strip(),
                           "source": source, "repeats": repeats}
    for name in ("webhook", "sweep"):
        for flavour, paths, flags in (("compiled", [str(functions[(name, "compiled")]), str(layer), str(runtime)], ["-I", "-S"]),
                                      ("bare", [str(functions[(name, "bare")]), str(bare_layer), str(bare_runtime)], ["-I", "-S", "-B"])):
            module_times, total_times = [], []
            code = _TIMER.format(paths=paths, lazy=FIRST_INVOCATION[name])
            for _ in range(repeats):
                done = subprocess.run([python, *flags, "-c", code], capture_output=True, text=True, env=env, timeout=120)
                if done.returncode != 0:
                    raise RuntimeError(f"importing the {name} function failed: {done.stderr.strip()[-500:]}")
                module, total = (float(x) for x in done.stdout.split())
                module_times.append(module)
                total_times.append(total)
            out[f"{name}_{flavour}"] = {"module": statistics.median(module_times), "first_invocation": statistics.median(total_times)}
            log(f"cold import {name} ({flavour}): {statistics.median(module_times) * 1000:.0f} ms")
    return out
