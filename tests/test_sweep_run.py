"""The sweep's shell in scenarios (pager.sweep.run_sweep): runs 15 minutes apart against GitHub's list.

The state lives in MemoryStore; GitHub is the real client on a `responses` mock that serves the
emulated list of the app's deliveries page by page (Link headers, `status=failure` filtering) and
turns each redelivery into a new attempt answered by the scripted pager; the control repository's
alarm is a fake that records the entries it was given. Every run goes through `World.sweep`, the one
place that invokes the sweep; `make_world(through_handler=True)` runs it through
functions/sweep/app.py:lambda_handler instead, with the real alarm on the emulated Telegram chat.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from datetime import datetime, timezone
from typing import Any, Callable

import pytest
import requests
import responses

from pager.errors import TelegramUnavailable
from pager.github import GitHub
from pager.observe import metrics
from pager.services import Services
from pager.settings import Settings
from pager.store import MemoryStore
from pager.sweep import run_sweep
from pager.sweep.run import STATE_KEY
from pager.telegram import Telegram
from pager import bootstrap
from pager_sim.emulators import GitHubEmulator, TelegramEmulator, responses_callback

from conftest import BOT_TOKEN, TEST_ENV, load_payload

API = TEST_ENV["GITHUB_API_URL"]
START = datetime(2026, 11, 12, 8, 0, tzinfo=timezone.utc).timestamp()
ADVANCED_PAGE = "https://github.com/settings/apps/pager-test/advanced"
ROOT = Path(__file__).resolve().parents[1]


def load_sweep_function():
    spec = importlib.util.spec_from_file_location("sweep_function", ROOT / "functions" / "sweep" / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Context:
    def __init__(self, request_id: str) -> None:
        self.aws_request_id = request_id
        self.function_name = "SweepFunction"

    def get_remaining_time_in_millis(self) -> int:
        return 170_000


class FakeAlarm:
    """The control repository's alarm as `pager.signals.alarm.update_alarm` keeps it: one Telegram call a change."""

    def __init__(self) -> None:
        self.open: dict[str, dict[str, str]] = {}
        self.changes: list[tuple[str, dict[str, dict[str, str]], list[str]]] = []
        self.failures = 0  # the next changes that fail in Telegram

    def __call__(self, services: Services, repository: str, *, opened, closed) -> bool:
        services.telegram.calls += 1
        if self.failures:
            self.failures -= 1
            raise TelegramUnavailable("telegram edit message: Telegram answered 502", status=502)
        self.changes.append((repository, dict(opened), list(closed)))
        before = dict(self.open)
        self.open.update(opened)
        for key in closed:
            self.open.pop(key, None)
        return self.open != before


class World:
    """GitHub with its list of deliveries, the pager answering them as scripted, and the sweep's services."""

    def __init__(self, rsps: responses.RequestsMock, private_key: str, *, through_handler: bool = False, **env: str) -> None:
        self.now = START
        self.answer: Callable[[str, bool], int] = lambda guid, redelivery: 200  # 0: no answer in time
        self.github = GitHubEmulator(clock=lambda: self.now, endpoint=self._pager, api_url=API)
        self.telegram = TelegramEmulator()
        for method in (responses.GET, responses.POST):
            rsps.add_callback(method, re.compile(re.escape(API) + r"/.*"), callback=responses_callback(self.github))
            rsps.add_callback(method, re.compile(re.escape(TEST_ENV["TELEGRAM_API_URL"]) + r"/.*"),
                              callback=responses_callback(self.telegram))
        self.handler = load_sweep_function().lambda_handler if through_handler else None
        session = requests.Session()
        settings = Settings.from_env(dict(TEST_ENV, GITHUB_PRIVATE_KEY=private_key, **env))
        self.store = MemoryStore()
        self.alarm = FakeAlarm()
        self.services = Services(
            settings=settings,
            store=self.store,
            github=GitHub(session, app_id=settings.github_app_id, private_key=settings.github_private_key,
                          api_url=settings.github_api_url, clock=lambda: self.now),
            telegram=Telegram(session, token=BOT_TOKEN, api_url=settings.telegram_api_url, sleep=lambda s: None),
            clock=lambda: self.now,
        )
        self.runs = 0

    def _pager(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> int:
        code = self.answer(guid, redelivery)
        if code == 0:
            raise TimeoutError
        return code

    def deliver(self, event: str, action: str, repository_id: int) -> str:
        """GitHub sends one event to the pager; its guid."""
        payload = load_payload(event, action)
        payload["repository"]["id"] = repository_id
        return self.github.deliver(event, payload)["guid"]

    def redeliver_by_hand(self, guid: str) -> None:
        """The maintainer presses Redeliver on the app's Advanced page."""
        event, payload = self.github.payloads[guid]
        self.github.deliver(event, payload, guid=guid, redelivery=True)

    def sweep(self, run_id: str | None = None) -> dict[str, Any]:
        """One scheduled run; GitHub then carries out the redeliveries it accepted, seconds later."""
        self.runs += 1
        run_id = run_id or f"run-{self.runs}"
        if self.handler is None:
            summary = run_sweep(self.services, now=self.now, run_id=run_id, update_alarm=self.alarm)
        else:
            bootstrap.use(self.services)
            try:
                summary = self.handler({"id": run_id, "detail-type": "Scheduled Event", "source": "aws.events"}, Context(run_id))
            finally:
                bootstrap.use(None)
        self.now += 20
        self.github.deliver_pending()
        return summary

    def advance(self, minutes: float) -> None:
        self.now += minutes * 60

    def attempts(self, guid: str) -> list[dict[str, Any]]:
        return [d for d in self.github.deliveries if d["guid"] == guid]

    def requests_since(self, count: int) -> list[Any]:
        return self.github.requests[count:]


@pytest.fixture
def make_world(private_key_pem):
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield lambda **env: World(rsps, private_key_pem, **env)


@pytest.fixture
def world(make_world) -> World:
    return make_world()


def json_lines(out: str) -> list[dict[str, Any]]:
    """The JSON objects printed to stdout (EMF metrics)."""
    lines = []
    for line in out.splitlines():
        try:
            parsed = json.loads(line)
        except ValueError:
            continue
        if isinstance(parsed, dict):
            lines.append(parsed)
    return lines


def test_a_quiet_run_makes_two_list_calls_with_one_jwt(world):
    for i in range(250):  # a long list from before: the first run reads it back to the window's start
        world.deliver("workflow_run", "completed", 1 + i % 5)
        world.now += 10
    first = world.sweep()
    assert first["pages"] == {"failures": 1, "all": 3}
    for repo in (1, 2, 3):
        world.deliver("workflow_run", "completed", repo)
    world.advance(15)
    seen = len(world.github.requests)
    calls = world.services.github.calls
    summary = world.sweep()
    assert world.services.github.calls - calls == 2
    assert summary["pages"] == {"failures": 1, "all": 1}
    assert summary["redeliveries"] == 0 and summary["calls_used"] == 2 and summary["reach_gaps"] == []
    listed = world.requests_since(seen)
    assert [r.query.get("status") for r in listed] == ["failure", None]
    assert len({r.headers["Authorization"] for r in listed}) == 1
    assert world.store.load(STATE_KEY).exists


def test_an_outages_failures_come_back_on_the_next_run_and_once(world):
    world.sweep()
    world.answer = lambda guid, redelivery: 502  # Telegram is down: every handler answers 500
    failed = [world.deliver("issue_comment", "created", 10 + i) for i in range(6)]
    failed += [world.deliver("workflow_run", "completed", 20 + i) for i in range(3)]
    world.answer = lambda guid, redelivery: 0  # then the pager does not answer in time
    failed.append(world.deliver("issues", "opened", 30))
    world.answer = lambda guid, redelivery: 200  # the outage is over
    world.advance(15)
    summary = world.sweep()
    assert summary["redeliveries"] == len(failed) == 10
    for guid in failed:
        attempts = world.attempts(guid)
        assert [a["redelivery"] for a in attempts] == [False, True] and attempts[-1]["status_code"] == 200
    world.advance(15)
    again = world.sweep()
    assert again["redeliveries"] == 0 and world.alarm.changes == []
    assert all(len(world.attempts(guid)) == 2 for guid in failed)


def test_a_third_failure_opens_an_entry_and_a_manual_redelivery_that_passes_closes_it(world):
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issue_comment", "created", 10)
    for _ in range(2):
        world.advance(15)
        assert world.sweep()["redeliveries"] == 1
    assert [a["status_code"] for a in world.attempts(guid)] == [500, 500, 500]
    world.advance(15)
    summary = world.sweep()
    assert summary["redeliveries"] == 0 and summary["entries_opened"] == 1
    key = f"delivery:{guid}"
    repository, opened, closed = world.alarm.changes[-1]
    assert repository == "maintainer/pager" and closed == []
    assert opened[key]["url"] == ADVANCED_PAGE
    assert opened[key]["title"].startswith("issue_comment.created of repository 10: 3 attempts failed (last: 500)")
    assert opened[key]["order"] == world.attempts(guid)[-1]["delivered_at"]

    world.advance(15)
    assert world.sweep()["redeliveries"] == 0 and len(world.alarm.changes) == 1
    assert len(world.attempts(guid)) == 3

    world.answer = lambda guid, redelivery: 200
    world.redeliver_by_hand(guid)
    world.advance(15)
    summary = world.sweep()
    assert summary["entries_closed"] == 1 and world.alarm.changes[-1][2] == [key] and world.alarm.open == {}


def test_a_busy_day_logs_a_reach_gap_for_the_every_outcome_list_while_every_5xx_is_still_found(world, log_lines):
    cursor = world.github.deliver("ping", {"zen": "x"})
    world.sweep()
    world.advance(0.5)
    failed = []
    for i in range(2100):  # 2,100 deliveries and 9 failures in the 15 minutes to the next run
        if i % 260 == 5:
            world.answer = lambda guid, redelivery: 502
            failed.append(world.deliver("issue_comment", "created", 77))
            world.answer = lambda guid, redelivery: 200
        world.deliver("workflow_run", "completed", 1000 + i % 10)
        world.now += 0.4
    summary = world.sweep()

    assert summary["pages"] == {"failures": 1, "all": 20}
    (gap,) = summary["reach_gaps"]
    newest_first = sorted(world.github.deliveries[: -len(failed)], key=lambda d: -d["id"])
    assert gap == {"list": "all", "reached": newest_first[1999]["delivered_at"],
                   "wanted": cursor["delivered_at"], "pages": 20}
    logged = [line for line in log_lines() if line["message"] == "reach gap"]
    assert [(line["list"], line["reached"], line["wanted"]) for line in logged] == [("all", gap["reached"], gap["wanted"])]

    hidden = [g for g in failed if world.attempts(g)[0]["id"] < newest_first[1999]["id"]]
    assert hidden, "some failures lie in the part of the list the pages did not reach"
    assert summary["redeliveries"] == len(failed)
    assert all(world.attempts(g)[-1]["redelivery"] for g in failed)
    assert summary["calls_used"] == 1 + 20 + len(failed) <= 50


def test_overlapping_runs_never_both_redeliver(world):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.answer = lambda guid, redelivery: 200
    world.advance(5)
    first = run_sweep(world.services, now=world.now, run_id="a", update_alarm=world.alarm)
    calls = world.services.github.calls
    second = run_sweep(world.services, now=world.now + 1, run_id="b", update_alarm=world.alarm)
    assert first["redeliveries"] == 1
    assert second["outcome"].startswith("skipped: a run saved the state") and world.services.github.calls == calls
    world.github.deliver_pending()
    world.advance(15)
    assert world.sweep()["outcome"] == "done"


def test_a_telegram_failure_of_the_alarm_stops_no_redelivery_and_the_change_waits_for_the_next_run(world):
    world.answer = lambda guid, redelivery: 500
    doomed = world.deliver("issue_comment", "created", 10)
    world.advance(15)
    world.sweep()
    world.advance(15)
    world.sweep()
    fresh = world.deliver("issue_comment", "created", 11)
    world.alarm.failures = 1
    world.advance(15)
    summary = world.sweep()
    assert summary["redeliveries"] == 1 and world.attempts(fresh)[-1]["redelivery"]
    assert summary["alarm"] == "waiting: TelegramUnavailable" and world.alarm.open == {}
    world.advance(15)
    summary = world.sweep()
    assert summary["alarm"] == "applied" and f"delivery:{doomed}" in world.alarm.open


def test_a_run_without_room_for_a_page_of_every_outcome_asks_for_nothing_and_leaves_alarm_and_cursor(make_world, log_lines):
    world = make_world(SWEEP_CALL_BUDGET="12")
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    summary = world.sweep()
    assert summary["outcome"] == "no room for the every-outcome list"
    assert summary["pages"] == {"failures": 1, "all": 0} and summary["redeliveries"] == 0
    assert world.store.load(STATE_KEY).data["cursor"] is None and world.alarm.changes == []
    assert any(line["message"] == "no room for the every-outcome list" for line in log_lines())


def test_a_redelivery_that_github_refuses_is_logged_and_the_run_goes_on(world):
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    world.answer = lambda guid, redelivery: 200
    world.github.fail(r"/attempts$", 404, count=1, body={"message": "Not Found"})
    world.advance(5)
    summary = world.sweep()
    assert (summary["redeliveries"], summary["redeliveries_refused"]) == (2, 1)
    assert [len(world.attempts(g)) for g in guids] == [1, 2, 2]


def test_a_redelivery_that_github_answers_with_a_rate_limit_counts_as_failed_not_refused(world):
    world.answer = lambda guid, redelivery: 502
    guids = [world.deliver("issue_comment", "created", 10 + i) for i in range(3)]
    world.answer = lambda guid, redelivery: 200
    world.github.fail(r"/attempts$", 429, count=1, body={"message": "API rate limit exceeded"})
    world.advance(5)
    summary = world.sweep()
    assert (summary["redeliveries"], summary["redeliveries_refused"], summary["redeliveries_failed"]) == (2, 0, 1)
    assert [len(world.attempts(g)) for g in guids] == [1, 2, 2]


def test_a_list_github_does_not_serve_ends_the_run_before_any_redelivery_and_keeps_the_state(world):
    world.sweep()
    saved = world.store.load(STATE_KEY)
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    read_failures = world.services.github.list_deliveries

    def failures_then_an_outage(**kwargs):
        page = read_failures(**kwargs)
        world.github.fail(r"/app/hook/deliveries$", 503)  # GitHub fails right after the failure list
        return page

    world.services.github.list_deliveries = failures_then_an_outage
    world.advance(15)
    summary = world.sweep()
    assert summary["outcome"] == "aborted: every-outcome list: GitHubUnavailable"
    assert not any(r.path.endswith("/attempts") for r in world.github.requests)
    assert world.store.load(STATE_KEY) == saved


def test_the_state_is_saved_only_on_the_version_the_run_read(world):
    class Racing(MemoryStore):
        def load(self, key):
            record = super().load(key)
            if key == STATE_KEY:
                super().save(record, {"written": "by someone else"})
            return record

    world.services.store = world.store = Racing()
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    summary = world.sweep()
    assert summary["outcome"] == "skipped: another run committed first"
    assert summary["state"] == "not saved: another run wrote it first"
    assert not any(r.path.endswith("/attempts") for r in world.github.requests)
    assert world.store.load(STATE_KEY).data == {"written": "by someone else"}


def test_a_run_logs_one_summary_line_and_emits_its_metrics(world, capsys, log_lines):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    metrics.clear_metrics()
    capsys.readouterr()
    world.sweep()
    metrics.flush_metrics()
    (summary,) = [line for line in log_lines() if line["message"] == "sweep run"]
    assert summary["service"] == "pager" and summary["redeliveries"] == 1 and summary["calls_used"] == 3
    assert summary["pages"] == {"failures": 1, "all": 1} and summary["reach_gaps"] == []
    assert "entries_opened" in summary and "entries_closed" in summary and "deliveries_seen" in summary
    emf = [line for line in json_lines(capsys.readouterr().out) if "_aws" in line]
    names = {m["Name"] for line in emf for d in line["_aws"]["CloudWatchMetrics"] for m in d["Metrics"]}
    assert {"Redeliveries", "EntriesOpened", "EntriesClosed", "CallsUsed", "ReachGap"} <= names
    gaps = {line["list"]: line["ReachGap"] for line in emf if "ReachGap" in line}
    assert gaps == {"failures": [0.0], "all": [0.0]}
    main = next(line for line in emf if "Redeliveries" in line)
    assert main["Redeliveries"] == [1.0] and main["CallsUsed"] == [3.0]


def test_an_unreadable_state_item_is_logged_and_the_run_reads_like_a_first_run(world, log_lines):
    record = world.store.load(STATE_KEY)
    world.store.save(record, {"v": 1, "cursor": "not a cursor", "remembered": [[1]]})
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    world.advance(5)
    summary = world.sweep()
    assert summary["redeliveries"] == 1 and summary["state"] == "saved"
    assert any(line["message"] == "sweep state unreadable, starting afresh" for line in log_lines())


def test_past_its_deadline_a_run_starts_no_call_and_keeps_the_state(world):
    world.answer = lambda guid, redelivery: 502
    world.deliver("issue_comment", "created", 10)
    summary = run_sweep(world.services, now=world.now, run_id="late", update_alarm=world.alarm, seconds=0)
    assert summary["outcome"] == "aborted: failure list: DeadlineExceeded"
    assert world.services.github.calls == 0 and not world.store.load(STATE_KEY).exists


def test_through_the_lambda_handler_a_third_failure_pages_once_in_the_control_repositorys_alarm(make_world):
    world = make_world(through_handler=True)
    world.answer = lambda guid, redelivery: 500
    guid = world.deliver("issues", "opened", 10)
    for _ in range(3):
        world.advance(15)
        world.sweep()
    assert len(world.attempts(guid)) == 3
    (message,) = world.telegram.chat()
    assert "maintainer/pager" in message.text and guid in message.text and ADVANCED_PAGE in message.text
    assert message.buttons == []  # no Start fix for failed deliveries
    world.advance(15)
    world.sweep()
    assert len(world.telegram.chat()) == 1 and world.telegram.chat()[0].edits == 0

    world.answer = lambda guid, redelivery: 200
    world.redeliver_by_hand(guid)
    world.advance(15)
    summary = world.sweep()
    assert summary["entries_closed"] == 1 and summary["alarm"] == "applied"
    assert "all clear" in world.telegram.chat()[0].text


def test_a_run_writes_the_table_once_and_once_more_only_when_the_alarm_changes(world):
    saves = []

    class Counting(MemoryStore):
        def save(self, record, data, **kw):
            saves.append(record.key)
            return super().save(record, data, **kw)

    world.services.store = world.store = Counting()
    world.sweep()
    assert saves == [STATE_KEY]
    world.answer = lambda guid, redelivery: 500
    world.deliver("issue_comment", "created", 10)
    for _ in range(3):
        world.advance(15)
        saves.clear()
        summary = world.sweep()
    assert summary["alarm"] == "applied" and saves == [STATE_KEY, STATE_KEY]
    world.advance(15)
    saves.clear()
    world.sweep()
    assert saves == [STATE_KEY]
