"""The benchmark behind `make bench` (sim/pager_bench: fleet, alternatives, simulate, measure, costs, report).

The trace's shape, the two comparison sweeps' decisions on hand-made delivery lists, the fake GitHub's
pages over a long list, one replay of a tiny trace per sweep through the real webhook handler and
the real sweep, and the hot path's round trips and modules, checked on invariants (never on timings).
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter

import pytest

from pager.errors import Conflict
from pager.signals import SUPERSEDED
from pager.values import iso
from pager_bench import alternatives, costs, fleet, report, simulate
from pager_world.clock import Clock
from pager_world.faults import Faults
from pager_world.github import RETENTION, FakeGitHub
from pager_world.http import HttpRequest
from pager_world.store import FaultyStore


def _item(id: int, guid: str, code: int, *, event: str = "workflow_run", repo: int = 1, redelivery: bool = False,
          at: str = "2026-11-09T10:00:00Z") -> dict:
    return {"id": id, "guid": guid, "delivered_at": at, "redelivery": redelivery, "status_code": code,
            "status": "OK" if 200 <= code < 400 else ("timed out" if code == 0 else f"Invalid HTTP Response: {code}"),
            "event": event, "action": "completed", "installation_id": 1, "repository_id": repo}


NOW = fleet.WEEK_START + 10 * 3600 + 600  # 10 minutes after the items' time


# ------------------------------------------------------------------------------------------ the trace


def test_the_weeks_trace_has_the_amended_decisions_bursts():
    trace = fleet.make_trace(days=7)
    assert max(trace.runs_per_quarter) == 431
    assert sum(1 for runs in trace.runs_per_quarter if runs >= 100) == 24
    assert len(trace.repos) == 10
    kinds = dict(fleet.iter_kinds(trace))
    # three deliveries of its own per run (release pull requests add a few runs, the week's end cuts a few)
    assert abs(kinds["workflow_run"] - 3 * sum(trace.runs_per_quarter)) < 0.01 * kinds["workflow_run"]
    assert kinds["workflow_job"] > kinds["workflow_run"] > kinds["issues"] > 0
    assert [e.at for e in trace.events] == sorted(e.at for e in trace.events)
    assert len({e.guid for e in trace.events}) == len(trace.events)


def test_the_same_seed_makes_the_same_trace_and_another_seed_another():
    one, again, other = fleet.make_trace(days=0.5), fleet.make_trace(days=0.5), fleet.make_trace(days=0.5, seed=2)
    assert [(e.guid, e.at, e.event) for e in one.events] == [(e.guid, e.at, e.event) for e in again.events]
    assert [e.guid for e in one.events] != [e.guid for e in other.events]


def test_a_rendered_payload_is_the_fixture_changed_to_the_event():
    trace = fleet.tiny_trace()
    event = next(e for e in trace.events if e.event == "workflow_run" and e.action == "completed")
    body = fleet.render(event, trace)
    payload = json.loads(body)
    repo = trace.repos[event.repo]
    assert payload["action"] == "completed"
    assert payload["repository"]["id"] == repo.id and payload["repository"]["full_name"] == repo.full_name
    assert payload["workflow_run"]["id"] == event.fields["run_id"]
    assert payload["workflow_run"]["conclusion"] == event.fields["conclusion"]
    assert payload["workflow_run"]["head_branch"] == "main"
    assert "workflow" in payload and "sender" in payload  # the rest of GitHub's example is kept
    assert fleet.render(event, trace) == body


def test_every_kind_in_a_trace_renders_with_its_own_repository():
    trace = fleet.make_trace(days=1)
    seen = set()
    for event in trace.events:
        if (event.event, event.action) in seen:
            continue
        seen.add((event.event, event.action))
        payload = json.loads(fleet.render(event, trace))
        assert payload["repository"]["id"] == trace.repos[event.repo].id
        assert payload["action"] == event.action
    assert len(seen) >= 12


def test_an_attempt_without_an_answer_is_decided_by_guid_and_attempt_only():
    trace = fleet.tiny_trace()
    timeout = next(f for f in trace.faults if f.kind == "timeout")
    inside = [trace.no_answer(f"guid-{k}", 0, timeout.start + 1) for k in range(400)]
    assert 100 < sum(inside) < 300  # half of them, give or take
    assert inside == [trace.no_answer(f"guid-{k}", 0, timeout.start + 1) for k in range(400)]
    assert sum(trace.no_answer(f"guid-{k}", 0, timeout.end + 1) for k in range(400)) < 5


# -------------------------------------------------------------------------------------- the harness


def test_the_counting_store_counts_a_lost_conditional_write_by_kind():
    store = FaultyStore(Faults(record=False))
    first = store.load("alarm#fleet/a")
    store.save(first, {"n": 1})
    with pytest.raises(Conflict):
        store.save(first, {"n": 2})
    store.save(store.load("sweep#state"), {})
    assert store.writes == Counter({"alarm": 2, "sweep": 1})
    assert store.conflicts == Counter({"alarm": 1})
    assert store.round_trips == 2 + 3  # two loads, three writes (the lost one is billed too)


@pytest.mark.parametrize("status", [None, "failure"])
def test_the_fake_githubs_pages_over_a_long_list_are_a_plain_newest_first_slicing(status):
    clock = Clock(fleet.WEEK_START)
    github = FakeGitHub(clock=clock, keep_requests=False)
    for k in range(1257):
        clock.set(fleet.WEEK_START + k * 300)
        code = (200, 502, 0, 200, 500)[k % 5]
        github.record(f"guid-{k % 90}", "check_run", "completed", 1, code, redelivery=k >= 90)
    github.prune(clock())  # the first days fall out of the list, as GitHub keeps three
    kept = [d for d in github.deliveries if status is None or 400 <= d["status_code"] <= 599]
    assert 0 < len(github.deliveries) < 1257 and github.deliveries[0]["delivered_at"] >= iso(clock() - RETENTION)

    def pages():
        url, out = "https://api.github.com/app/hook/deliveries?per_page=40" + ("&status=failure" if status else ""), []
        while url:
            answer = github(HttpRequest("GET", url, {}))
            out.append([d["id"] for d in answer.body])
            link = answer.headers.get("Link")
            url = link[1:link.index(">")] if link else None
        return out

    newest_first = [d["id"] for d in reversed(kept)]
    assert pages() == [newest_first[i:i + 40] for i in range(0, len(newest_first), 40)]
    assert len(pages()) > 5


# ----------------------------------------------------------------------------- the comparison sweeps


def test_the_script_asks_again_for_the_newest_attempt_of_each_guid_without_an_ok():
    items = [  # newest first, as GitHub lists them
        _item(9, "a", 502, redelivery=True), _item(8, "b", 200, redelivery=True), _item(7, "c", 0),
        _item(6, "b", 502), _item(5, "a", 502), _item(4, "d", 200),
    ]
    assert alternatives.plan_script(items) == [9, 7]


def test_the_first_design_skips_a_superseded_event_and_alarms_after_three_attempts():
    items = [
        _item(20, "newer", 200, event="workflow_run", repo=1),
        _item(12, "old-run", 502, event="workflow_run", repo=1),  # superseded by "newer"
        _item(11, "comment", 502, event="issue_comment", repo=1, redelivery=True),
        _item(10, "comment", 502, event="issue_comment", repo=1, redelivery=True),
        _item(9, "other-repo", 0, event="workflow_run", repo=2),
        _item(8, "comment", 502, event="issue_comment", repo=1),
        _item(7, "orphan", 502, event="issue_comment", repo=1, redelivery=True),  # first delivery not seen
    ]
    redeliver, opened, closed, superseded = alternatives.plan_first_design(items, now=NOW)
    assert [i["id"] for i in redeliver] == [9]
    assert opened == {"delivery:comment": "comment"}
    assert "delivery:old-run" in closed and superseded == 1


def test_the_first_design_forgets_what_is_older_than_its_window():
    items = [_item(5, "late", 502, at="2026-11-09T06:00:00Z")]
    assert alternatives.plan_first_design(items, now=NOW) == ([], {}, [], 0)


# ---------------------------------------------------------------------------------- the replays


@pytest.fixture(scope="module")
def pem():
    return simulate.private_key()


@pytest.fixture(scope="module")
def replays(pem):
    trace = fleet.tiny_trace()
    return trace, {design: simulate.simulate(trace, design, pem=pem, drain=3 * 3600) for design in simulate.DESIGNS}


@pytest.fixture(scope="module")
def cost(pem):
    return costs.handler_cost(30, pem=pem)


@pytest.fixture(scope="module")
def modules(pem):
    return costs.ignored_delivery_modules(pem=pem)


def test_a_tiny_replay_sees_failures_of_every_fault_kind(replays):
    trace, results = replays
    pager = results["pager"]
    assert pager["counts"]["failed"] > 0
    assert pager["counts"].get("failed_no_answer", 0) > 0
    assert sum(o["failed"] for o in pager["outages"] if o["kind"] == "telegram") > 0
    assert pager["handler_status"].get(500, 0) > 0  # the outages made the real handler answer 500
    assert pager["handler_status"][200] > 0.9 * len(trace.events)


def test_every_failed_event_is_recovered_alarmed_superseded_ignored_or_lost_exactly_once(replays):
    _, results = replays
    for result in results.values():
        c = result["counts"]
        parts = c.get("recovered", 0) + c.get("alarmed", 0) + c.get("superseded", 0) + c.get("ignored", 0) + c.get("lost", 0)
        assert parts == c["failed"]
        assert c.get("lost", 0) == c.get("lost_5xx", 0) + c.get("lost_no_answer", 0)


def test_pager_loses_no_5xx_failure_stays_in_budget_and_applies_no_stale_redelivery(replays):
    _, results = replays
    pager = results["pager"]
    assert pager["counts"].get("lost_5xx", 0) == 0
    assert pager["calls_max"] <= 50
    assert pager["counts"].get("stale_applied", 0) == 0
    assert pager["counts"].get("recovered", 0) > 0


def test_the_script_recovers_everything_but_applies_stale_redeliveries(replays):
    _, results = replays
    script, pager = results["script"], results["pager"]
    assert script["counts"].get("recovered", 0) == script["counts"]["failed"]
    assert script["counts"].get("stale_applied", 0) > pager["counts"].get("stale_applied", 0)
    assert script["writes"].get("script", 0) == script["runs"]  # its one value: the time of its last run


def test_the_report_states_every_target_as_met_or_not_met(replays, cost, modules):
    trace, results = replays
    args = argparse.Namespace(days=trace.days, seed=trace.seed)
    text = report.report(trace, results, cost, None, modules, args=args, handled=["issues"], elapsed=1.0)
    section = text.split("## Targets", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.search(r"\| (met|\*\*not met\*\*|–) \|$", line)]
    assert len(rows) == len(report.targets(results, cost, None, modules, 50)) == 9
    assert "lost silently" in text and "Recovery after each fault" in text and "## A lean hot path" in text
    assert "a contribution takes at most 4 round trips to the table" in section
    assert "an ignored delivery loads none of requests, jwt, cryptography, boto3" in section
    assert cost["ignored"]["outcomes"] and all(k.startswith("200") for k in cost["ignored"]["outcomes"])
    assert any(k.startswith("200") for k in cost["contribution"]["outcomes"])
    assert cost["ignored"]["ratio"] > 0 and cost["contribution"]["own_us"] > 0
    assert cost["ignored"]["calls"] == 0 and cost["contribution"]["calls"] >= 2  # a message and a draft dispatch


def test_an_ignored_delivery_makes_no_round_trip_and_a_contribution_at_most_four(cost):
    assert cost["ignored"]["round_trips"] == 0 and cost["ignored"]["round_trips_max"] == 0
    assert 0 < cost["contribution"]["round_trips"] <= cost["contribution"]["round_trips_max"] <= 4
    assert cost["contribution"]["round_trips_loads"] >= 1 and cost["contribution"]["writes"] >= 1


def test_an_ignored_delivery_in_a_fresh_interpreter_loads_none_of_the_clients_libraries(modules):
    assert modules["outcome"] == "200 ignored"
    assert not set(modules["loaded"]) & {"requests", "urllib3", "jwt", "cryptography", "boto3"}
    assert modules["botocore"] in ([], ["botocore"])  # Powertools' user agent imports the top-level package only
    assert 0 < modules["modules"] < costs.BEFORE["modules"]["modules"]


def test_the_superseded_kinds_are_the_ones_the_measures_use():
    # "stale" and "superseded" in the report follow routing.SUPERSEDED; comments are never stale
    assert "workflow_run" in SUPERSEDED and "issue_comment" not in SUPERSEDED
