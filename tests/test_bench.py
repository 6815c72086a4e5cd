"""The benchmark behind `make bench` (sim/pager_bench: fleet, alternatives, simulate, measure, phone, bill, costs,
report).

The trace's shape, the two comparison sweeps' decisions on hand-made delivery lists, the fake GitHub's
pages over a long list, one replay of a tiny trace per sweep through the real webhook handler and
the real sweep (and of its subscribed events, with quiet hours too), what the maintainer's phone lives
through and the grace's model, the bill's model, and the hot path's round trips and modules, checked on
invariants (never on timings).
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import sys
import sysconfig
from collections import Counter

import jwt
import pytest

from pager.attention import NOW_AGAIN_SECONDS
from pager.errors import Conflict
from pager.observe import METRICS
from pager.settings import BUZZ_GAP_MINUTES
from pager.signals import SUPERSEDED
from pager.values import iso
from pager_bench import (
    alternatives,
    bill,
    cold_report,
    costs,
    fleet,
    measure,
    outages,
    phone,
    phone_report,
    report,
    scale,
    simulate,
)
from pager_bench.jobs import forks
from pager_bench.replays import Plan, replay_all
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


@pytest.fixture(scope="module")
def week():
    return fleet.make_trace(days=7)


def test_the_weeks_trace_has_the_amended_decisions_bursts(week):
    trace = week
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
    one, again, other = fleet.make_trace(days=0.25), fleet.make_trace(days=0.25), fleet.make_trace(days=0.25, seed=2)
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


@pytest.fixture(scope="module")
def day():
    return fleet.make_trace(days=1)


def test_every_kind_in_a_trace_renders_with_its_own_repository(day):
    trace = day
    seen = set()
    for event in trace.events:
        if (event.event, event.action) in seen:
            continue
        seen.add((event.event, event.action))
        body = fleet.render(event, trace)
        assert body == json.dumps(fleet.payload(event, trace), separators=(",", ":")).encode()  # its repository spliced in
        payload = json.loads(body)
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


def test_the_weeks_faults_include_a_three_hour_telegram_outage_and_none_overlaps_another(week):
    trace = week
    assert any(f.kind == "telegram" and f.end - f.start == 3 * 3600 for f in trace.faults)
    ordered = sorted(trace.faults, key=lambda f: f.start)
    assert all(a.end <= b.start for a, b in itertools.pairwise(ordered))
    assert all(trace.start <= f.start and f.end <= trace.end for f in trace.faults)


def test_each_event_is_about_the_thing_pager_keys_its_record_by(day):
    trace = day
    by_kind = {}
    for e in trace.events:
        by_kind.setdefault(e.event, []).append(e)
    run = by_kind["workflow_run"][0]
    same_run = [e for e in by_kind["workflow_run"] if e.fields["run_id"] == run.fields["run_id"]]
    assert [e.action for e in same_run] == ["requested", "in_progress", "completed"]
    assert {fleet.thing(e) for e in same_run} == {("workflow_run", run.repo, run.fields["workflow_id"], run.fields["branch"])}
    # comments and reviews: each one a thing of its own
    for kind in ("issue_comment", "discussion_comment", "pull_request_review"):
        events = by_kind[kind]
        assert len({fleet.thing(e) for e in events}) == len(events) > 1
    # an issue opened and closed: one thing
    closed = next(e for e in by_kind["issues"] if e.action == "closed")
    opened = next(e for e in by_kind["issues"]
                  if e.action == "opened" and (e.repo, e.fields["number"]) == (closed.repo, closed.fields["number"]))
    assert fleet.thing(opened) == fleet.thing(closed) == ("issues", closed.repo, closed.fields["number"])
    # an app's suites on one branch are one thing; a release's suite is its pull request's head
    suites = by_kind["check_suite"]
    main = [e for e in suites if e.fields["branch"] == "main" and e.fields["app"] == fleet.EXTERNAL_APP and e.repo == suites[0].repo]
    assert len({fleet.thing(e) for e in main}) == 1
    releases = [e for e in suites if e.fields["branch"] == fleet.RELEASE_BRANCH]
    assert releases and all(fleet.thing(e)[2:] == ("release", e.fields["sha"]) for e in releases)
    assert {fleet.thing(e)[:2] for e in trace.events} == {(e.event, e.repo) for e in trace.events}


def test_the_subscribed_trace_keeps_only_the_readmes_events_with_the_same_guids_and_faults(week):
    handled = simulate.register_signals()
    subscribed = fleet.only(week, handled)
    kinds = dict(fleet.iter_kinds(subscribed))
    assert set(kinds) <= set(handled) and "workflow_job" not in kinds and "check_run" not in kinds
    assert kinds["workflow_run"] == dict(fleet.iter_kinds(week))["workflow_run"]
    assert subscribed.faults == week.faults and subscribed.start == week.start and subscribed.end == week.end
    by_guid = week.by_guid()
    assert all(by_guid[e.guid] is e for e in subscribed.events)
    assert len(subscribed.events) < len(week.events) / 2  # two thirds of the week are workflow_job and check_run


def test_a_workflow_run_is_newer_by_its_number_not_by_when_it_completes():
    later_run = fleet.Event(seq=1, at=100.0, guid="b", event="workflow_run", action="completed", repo=0,
                            fields={"workflow_id": 9001, "branch": "main", "run_number": 6})
    earlier_run = fleet.Event(seq=2, at=200.0, guid="a", event="workflow_run", action="completed", repo=0,
                              fields={"workflow_id": 9001, "branch": "main", "run_number": 5})
    assert fleet.thing(later_run) == fleet.thing(earlier_run)
    assert fleet.order(later_run) > fleet.order(earlier_run)
    comment = fleet.Event(seq=3, at=300.0, guid="c", event="issue_comment", action="created", repo=0, fields={"comment_id": 7})
    assert fleet.order(comment) > fleet.order(fleet.Event(seq=0, at=1.0, guid="d", event="issue_comment",
                                                          action="created", repo=0, fields={"comment_id": 8}))


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
def test_the_fake_githubs_pages_over_a_long_list_are_a_plain_newest_first_slicing(status, pem):
    clock = Clock(fleet.WEEK_START)
    github = FakeGitHub(clock=clock, keep_requests=False)
    for k in range(1257):
        clock.set(fleet.WEEK_START + k * 300)
        code = (200, 502, 0, 200, 500)[k % 5]
        github.record(f"guid-{k % 90}", "check_run", "completed", 1, code, redelivery=k >= 90)
    github.prune(clock())  # the first days fall out of the list, as GitHub keeps three
    kept = [d for d in github.deliveries if status is None or 400 <= d["status_code"] <= 599]
    assert 0 < len(github.deliveries) < 1257 and github.deliveries[0]["delivered_at"] >= iso(clock() - RETENTION)

    now = int(clock())
    auth = {"Authorization": "Bearer " + jwt.encode({"iat": now - 60, "exp": now + 540, "iss": "4242"}, pem, algorithm="RS256")}

    def pages():
        url, out = "https://api.github.com/app/hook/deliveries?per_page=40" + ("&status=failure" if status else ""), []
        while url:
            answer = github(HttpRequest("GET", url, auth))
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


# ---------------------------------------------------------------------------------- the measures


def _run(seq: int, guid: str, workflow_id: int, number: int, *, branch: str = "main", repo: int = 0) -> fleet.Event:
    return fleet.Event(seq=seq, at=fleet.WEEK_START + 60.0 * seq, guid=guid, event="workflow_run", action="completed",
                       repo=repo, fields={"workflow_id": workflow_id, "branch": branch, "run_number": number})


def _comment(seq: int, guid: str, comment_id: int, *, repo: int = 0) -> fleet.Event:
    return fleet.Event(seq=seq, at=fleet.WEEK_START + 60.0 * seq, guid=guid, event="issue_comment", action="created",
                       repo=repo, fields={"comment_id": comment_id, "number": 1})


def _measure(events, log, *, changed=None, alarmed=(), faults=(), recovery_writes=(), runs=()):
    trace = fleet.Trace(seed=0, start=fleet.WEEK_START, end=fleet.WEEK_START + fleet.DAY,
                        repos=[fleet.Repo(1, "a"), fleet.Repo(2, "b")], events=events, faults=list(faults), pulls={})
    at = lambda seq, minutes=0: fleet.WEEK_START + 60.0 * seq + 60.0 * minutes  # noqa: E731
    attempts = {guid: [(at(seq, minutes), code, again) for minutes, code, again in rows] for guid, seq, rows in log}
    return measure.measure(trace, attempts, FaultyStore(Faults(record=False)), list(runs), set(alarmed), changed=changed,
                           recovery_writes=recovery_writes)


def _fault(kind, start_minute, minutes):
    return fleet.Fault(kind, fleet.WEEK_START + 60.0 * start_minute, fleet.WEEK_START + 60.0 * (start_minute + minutes))


def test_a_failed_event_is_superseded_only_by_a_newer_pass_about_the_same_thing():
    events = [
        _run(0, "ci-old", 9001, 1), _run(1, "lint-old", 9002, 1), _run(2, "ci-new", 9001, 2),
        _comment(3, "comment-old", 11), _comment(4, "comment-new", 12),
    ]
    result = _measure(events, [
        ("ci-old", 0, [(0, 502, False)]),
        ("lint-old", 1, [(0, 0, False)]),  # only CI passed after it: another thing of the kind and repository
        ("ci-new", 2, [(0, 200, False)]),
        ("comment-old", 3, [(0, 502, False)]),  # another comment passed: comments are never superseded
        ("comment-new", 4, [(0, 200, False)]),
    ])
    c = result["counts"]
    assert c["failed"] == 3 and c["superseded"] == 1
    assert c["lost"] == 2 and c["dropped_other"] == 1 and c.get("alarmed", 0) == 0
    assert {x["guid"] for x in result["lost_examples"]} == {"lint-old", "comment-old"}
    assert [x["guid"] for x in result["dropped_examples"]] == ["lint-old"]
    assert result["dropped_kinds"] == {"workflow_run": 1} and result["lost_kinds"] == {"workflow_run": 1, "issue_comment": 1}


def test_a_run_that_completed_late_is_not_superseded_by_an_older_run_that_passed():
    # run 6 completed first and failed; run 5 completed after it and passed: run 6 still says the newest
    events = [_run(0, "run-6", 9001, 6), _run(1, "run-5", 9001, 5)]
    c = _measure(events, [("run-6", 0, [(0, 502, False)]), ("run-5", 1, [(0, 200, False)])])["counts"]
    assert c.get("superseded", 0) == 0 and c["lost"] == 1


def test_an_alarmed_event_is_neither_superseded_nor_dropped():
    events = [_run(0, "ci-old", 9001, 1), _run(1, "lint-old", 9002, 1), _run(2, "ci-new", 9001, 2)]
    log = [("ci-old", 0, [(0, 502, False)]), ("lint-old", 1, [(0, 502, False)]), ("ci-new", 2, [(0, 200, False)])]
    c = _measure(events, log, alarmed={"ci-old", "lint-old"})["counts"]
    assert c["alarmed"] == 2 and c.get("superseded", 0) == c.get("lost", 0) == c.get("dropped_other", 0) == 0


def test_a_stale_redelivery_that_wrote_nothing_is_not_counted_as_changing_state():
    events = [_run(0, "ci-old", 9001, 1), _run(1, "ci-new", 9001, 2), _run(2, "lint", 9002, 1)]
    log = [
        ("ci-old", 0, [(0, 502, False), (15, 200, True)]),  # delivered again after run 2 passed: stale
        ("ci-new", 1, [(0, 200, False)]),
        ("lint", 2, [(0, 502, False), (15, 200, True)]),  # nothing newer about its workflow: not stale
    ]
    harmless = {"ci-old": [True, False], "ci-new": [True], "lint": [True, True]}
    c = _measure(events, log, changed=harmless)["counts"]
    assert c["stale_redeliveries"] == 1 and c.get("stale_changed", 0) == 0
    assert c["recovered"] == 2 and c["attempts_changed"] == 4
    c = _measure(events, log, changed={**harmless, "ci-old": [True, True]})["counts"]
    assert c["stale_redeliveries"] == 1 and c["stale_changed"] == 1
    # without the replay's record, a stale redelivery counts as changing state
    assert _measure(events, log)["counts"]["stale_changed"] == 1
    with pytest.raises(ValueError):
        _measure(events, log, changed={**harmless, "ci-old": [True]})


def test_the_wait_runs_from_a_faults_end_to_the_passing_attempt_and_is_zero_when_it_passed_before():
    events = [_comment(0, "late", 11), _comment(1, "early", 12), _comment(2, "never", 13)]
    outage = _fault("telegram", 0, 30)  # minutes 0 to 30
    result = _measure(events, [
        ("late", 0, [(0, 502, False), (31.5, 200, True)]),  # passed 90 s after the end
        ("early", 1, [(0, 502, False), (15, 200, True)]),  # passed inside the outage
        ("never", 2, [(0, 502, False)]),
    ], faults=[outage])
    assert sorted(result["outages"][0]["to_pass"]) == [0.0, 90.0]
    assert result["to_pass"]["outage"]["n"] == 2 and result["to_pass"]["outage"]["max"] == 90.0
    assert result["to_pass"]["no_answer"]["n"] == 0


def test_an_alarmed_event_whose_attempts_were_all_spent_inside_an_outage_is_counted_against_it():
    events = [_comment(0, "spent", 11), _comment(1, "before", 12)]
    short, long = _fault("telegram", 0, 60), _fault("github", 400, 200)
    result = _measure(events, [
        ("spent", 0, [(0, 502, False), (15, 502, True), (30, 502, True)]),  # three attempts inside the first hour
        ("before", 1, [(0, 502, False), (500, 502, True), (520, 502, True)]),  # its third attempt in the long one
    ], alarmed={"spent", "before"}, faults=[short, long])
    c = result["counts"]
    assert c["alarmed"] == 2 and c["spent_alarmed"] == 2 and c["spent_alarmed_short"] == 1
    assert [o["spent_alarmed"] for o in result["outages"]] == [1, 1]


def test_the_notes_of_what_waits_count_for_the_outage_they_follow():
    outages = [_fault("telegram", 0, 30), _fault("timeout", 40, 10), _fault("github", 100, 15)]
    at = lambda minute: fleet.WEEK_START + 60.0 * minute  # noqa: E731
    result = _measure([_comment(0, "a", 1)], [("a", 0, [(0, 200, False)])], faults=outages,
                      recovery_writes=[at(1), at(31), at(101), at(117)])
    assert [o["recovery_writes"] for o in result["outages"]] == [2, None, 2]
    assert result["recovery"]["max"] == 2 and result["recovery"]["noted"] == 2
    assert result["recovery"]["total_max"] == 2  # no run the check started here


def test_a_run_the_check_starts_counts_for_the_fault_it_follows_a_period_without_answers_its_own():
    """The ping gets no answer in a period without answers: pager's own endpoint is held, and the run the check
    starts when it answers again writes for that period, not for the outage before it."""
    outages = [_fault("telegram", 0, 30), _fault("timeout", 40, 10), _fault("github", 100, 15)]
    at = lambda minute: fleet.WEEK_START + 60.0 * minute  # noqa: E731
    run = {"calls": 3, "redeliveries": 0, "gaps": 0, "outcome": "done"}
    runs = [{**run, "at": at(31), "kind": "check", "writes": 4}, {**run, "at": at(51), "kind": "check", "writes": 4},
            {**run, "at": at(60), "kind": "scheduled", "writes": 3}]
    result = _measure([_comment(0, "a", 1)], [("a", 0, [(0, 200, False)])], faults=outages,
                      recovery_writes=[at(1)], runs=runs)
    assert [o["check_run_writes"] for o in result["outages"]] == [4, 4, 0]
    assert result["recovery"]["total_max"] == 5 and result["recovery"]["own_holds"] == 1
    assert result["recovery"]["own_max"] == 4


# ------------------------------------------------------------------------------------------ the bill


def test_request_units_follow_the_items_size():
    small = bill.item_bytes("contribution#fleet/a#issue#1", "", '{"message_id":1}', 1)
    assert 40 < small < 200 and bill.read_units(small) == bill.write_units(small) == 1
    assert bill.write_units(2500) == 3 and bill.read_units(4096) == 1 and bill.read_units(4097) == 2
    assert bill.read_units(0) == 1  # an absent item still costs a read


def test_the_metered_store_counts_a_unit_for_each_load_and_write_and_bills_a_lost_write():
    store = bill.MeteredStore(Faults(record=False))
    record = store.load("alarm#fleet/a")
    store.save(record, {"n": 1})
    with pytest.raises(Conflict):
        store.save(record, {"n": 2})
    store.save(store.load("sweep#state"), {"big": "x" * 3000})
    assert store.read_units == 2 and store.write_units == 1 + 1 + 3
    assert 3000 < store.stored_bytes() < 3200


def test_the_metered_store_counts_a_query_by_each_items_size_now_as_often_as_it_reads_them():
    store = bill.MeteredStore(Faults(record=False))
    big = store.save(store.load("attention#fleet", "entry:1"), {"text": "x" * 5000})
    store.save(store.load("attention#fleet", "entry:2"), {"text": "y"})
    store.items("attention#fleet")
    store.items("attention#fleet")
    assert store.read_units == 2 + 2 * 2  # the two loads before the writes; each query 5 KB and a few bytes
    store.save(big, {"text": "x" * 9000})  # a newer version, larger
    store.items("attention#fleet")
    assert store.read_units == 2 + 2 * 2 + 3
    size = sum(bill.item_bytes(r.key, r.item, bill.encode(r.data), r.version) for r in store.inner.items("attention#fleet"))
    assert bill.read_units(size) == 3


def test_environments_start_cold_when_all_are_busy_or_reclaimed_and_read_the_secret_again_later():
    envs = bill.Environments(refresh=300.0, idle=600.0)
    assert envs.start(0.0) and envs.cold_starts == 1  # the first: cold, reads the secret
    assert envs.start(0.0) and envs.cold_starts == 2  # the first is still busy: a second environment
    envs.end(0.5)
    envs.start(10.0)
    envs.end(10.1)
    assert envs.cold_starts == 2 and envs.secret_reads == 2
    assert envs.start(400.0) and envs.secret_reads == 3  # warm, but its settings are read again
    envs.end(400.1)
    envs.start(2000.0)
    assert envs.cold_starts == 3  # idle too long: reclaimed


def test_the_template_bills_six_alarms_on_seven_metrics_and_by_default_no_dashboard_nor_secret(tmp_path):
    t = bill.template_resources()
    assert (t["alarms"], t["alarm_metrics"], t["dashboards"], t["secrets"]) == (6, 7, 0, 0)
    assert t["memory_mb"] == {"webhook": 512, "sweep": 256} and t["table_key"] == bill.OWNED_KEY
    # asked for, the dashboard is billed: the conditions are read with the parameters' defaults
    text = (bill.ROOT / "template.yaml").read_text()
    with_dashboard = text.replace('Default: "false"\n    AllowedValues: ["true", "false"]', 'Default: "true"\n    AllowedValues: ["true", "false"]')
    assert with_dashboard != text
    (tmp_path / "template.yaml").write_text(with_dashboard)
    assert bill.template_resources(tmp_path / "template.yaml")["dashboards"] == 1


def test_the_secrets_cost_a_kms_request_per_read_and_nothing_a_month():
    aws = {"span_seconds": 7 * 86_400, "lambda": {f: {"invocations": 1, "billed_ms": 1, "cold_starts": 0, "secret_reads": 10_000}
                                                  for f in bill.FUNCTIONS},
           "http_api_units": 0, "dynamodb": {"read_units": 0, "write_units": 0, "stored_bytes": 0}, "log_bytes": {},
           "metric_hours": 0, "scheduled_events": 0}
    lines = {line.service: line for line in bill.weekly(aws)}
    assert "Secrets Manager" not in lines and lines["Parameter Store"].dollars == 0
    assert lines["KMS"].usage == 20_000 and lines["KMS"].dollars == pytest.approx(0.06)
    assert lines["KMS"].always_free and lines["KMS"].after_always_free < 0.06  # 20,000 requests a month are free


def test_the_tables_encryption_is_a_free_line_with_the_aws_owned_key_and_kms_requests_with_the_managed_one(tmp_path):
    aws = {"span_seconds": 7 * 86_400, "lambda": {f: {"invocations": 1, "billed_ms": 1, "cold_starts": 0, "secret_reads": 5_000}
                                                  for f in bill.FUNCTIONS},
           "http_api_units": 0, "dynamodb": {"read_units": 0, "write_units": 0, "stored_bytes": 0}, "log_bytes": {},
           "metric_hours": 0, "scheduled_events": 0}
    owned = {line.item: line for line in bill.weekly(aws)}
    encryption = next(line for item, line in owned.items() if item.startswith("encryption at rest"))
    assert bill.OWNED_KEY in encryption.item and encryption.service == "DynamoDB"
    assert encryption.usage == 0 and encryption.dollars == 0
    assert owned["Decrypt requests (the SecureString, key aws/ssm)"].usage == 10_000  # the secret's reads alone
    # SSEEnabled: true, the AWS managed key: DynamoDB's requests for the table key join the secret's on one KMS line
    text = (bill.ROOT / "template.yaml").read_text()
    managed = text.replace("SSESpecification:\n        SSEEnabled: false", "SSESpecification:\n        SSEEnabled: true")
    assert managed != text
    (tmp_path / "template.yaml").write_text(managed)
    template = bill.template_resources(tmp_path / "template.yaml")
    assert template["table_key"] == bill.MANAGED_KEY
    lines = bill.weekly(aws, template=template)
    kms = [line for line in lines if line.service == "KMS"]
    assert len(kms) == 1 and kms[0].item == "Decrypt requests (the SecureString, key aws/ssm; the table's key aws/dynamodb)"
    assert kms[0].usage == 20_000 and kms[0].dollars == pytest.approx(0.06)
    encryption = next(line for line in lines if line.item.startswith("encryption at rest"))
    assert bill.MANAGED_KEY in encryption.item and encryption.usage == 10_000 and encryption.dollars == 0


# ---------------------------------------------------------------------------------- the replays


@pytest.fixture(scope="module")
def pem():
    return simulate.private_key()


DRAIN = 3 * 3600


@pytest.fixture(scope="module")
def replays(pem):
    trace = fleet.tiny_trace()
    return trace, {design: simulate.simulate(trace, design, pem=pem, drain=DRAIN) for design in simulate.DESIGNS}


@pytest.fixture(scope="module")
def subscribed(pem, replays):
    trace = fleet.only(replays[0], simulate.register_signals())
    return trace, {"pager": simulate.simulate(trace, "pager", pem=pem, drain=DRAIN)}


TINY_QUIET = "01:00-02:00"  # the tiny trace's second hour (it starts at midnight, the maintainer's clock UTC)


@pytest.fixture(scope="module")
def quiet(pem, subscribed):
    """The phone of the tiny trace's subscribed events replayed again, with quiet hours over its second hour."""
    return simulate.simulate(subscribed[0], "pager", pem=pem, drain=DRAIN, quiet_hours=TINY_QUIET)["phone"]


@pytest.fixture(scope="module")
def restless(pem, subscribed):
    """The phone of the tiny trace's subscribed events replayed again without the phone's rest (BUZZ_GAP_MINUTES=0)."""
    return simulate.simulate(subscribed[0], "pager", pem=pem, drain=DRAIN, buzz_gap=0)["phone"]


@pytest.fixture(scope="module")
def cost(pem):
    return costs.handler_cost(30, pem=pem)


@pytest.fixture(scope="module")
def modules(pem):
    return costs.ignored_delivery_modules(pem=pem)


@pytest.fixture(scope="module")
def long_outage(pem):
    """Telegram down for 75 hours, a page every 6 hours (the first ones GitHub forgets before it returns), with
    pager and the first design; and a burst of 40 failures on one repository."""
    scenario = (("75 h, a page every 6 h", 75.0, 6.0),)
    return (outages.long_outages(["pager", "first"], pem=pem, scenarios=scenario),
            outages.burst(pem=pem, n=40))


def test_after_a_long_telegram_outage_what_github_keeps_comes_back_as_pages_and_what_it_forgot_is_said(long_outage):
    [(label, by_design)] = long_outage[0].items()
    pager, first = by_design["pager"], by_design["first"]
    assert pager["pages"] == first["pages"] == 13
    # Of the pages GitHub keeps when Telegram returns (its three days less its last minutes), every one a page
    kept = sum(1 for n in range(13) if 75 * 3600 - (600 + n * 6 * 3600) < 72 * 3600 - 300)
    assert pager["as_page"] == kept and pager["to_press"] == 0 and pager["lost"] == 0
    assert pager["forgotten"] == pager["said_forgotten"] == 13 - kept > 0  # the chat counts what GitHub forgot
    assert pager["back_minutes"] is not None and pager["back_minutes"] <= 30 and pager["attempts_max"] <= 3
    assert first["to_press"] > 0 and first["as_page"] < kept  # the first design spends the attempts meanwhile


def test_a_burst_of_failures_on_one_repository_answers_no_500_and_shows_one_alarm_of_them_all(long_outage):
    bursting = long_outage[1]
    assert bursting == {"deliveries": 40, "telegram_seconds": 0.3, "first_500": 0, "messages_sent": 1, "entries_shown": 40}


def test_a_replay_counts_first_answers_of_5xx_by_quarter_hour(replays):
    trace, results = replays
    first = results["pager"]["first_answers"]
    assert 0 < first["busiest"] <= len(trace.events) and first["busiest_5xx"] <= first["max_5xx"] <= first["all_5xx"]
    answered_5xx = sum(n for status, n in results["pager"]["handler_status"].items() if status >= 500)
    assert 0 < first["all_5xx"] <= answered_5xx  # the tiny trace's outages fail first deliveries; redeliveries too


def test_a_tiny_replay_sees_failures_of_every_fault_kind(replays):
    trace, results = replays
    pager = results["pager"]
    assert pager["counts"]["failed"] > 0
    assert pager["counts"].get("failed_no_answer", 0) > 0
    assert sum(o["failed"] for o in pager["outages"] if o["kind"] == "telegram") > 0
    assert pager["handler_status"].get(500, 0) > 0  # the outages made the real handler answer 500
    assert pager["handler_status"][200] > 0.9 * len(trace.events)


def test_the_replay_counts_the_custom_metrics_published_now_and_by_the_code_before(replays):
    trace, results = replays
    published = results["pager"]["metrics"]
    before, after = published["before"], published["after"]
    assert {"Deliveries", "CallsUsed", "ReachGap list=all"} <= set(before["names"])
    assert "SweepCompleted" in after["names"] and set(after["names"]) <= set(METRICS)
    weeks = (trace.end + 3 * 3600 - trace.start) / (7 * 24 * 3600)
    hours = (trace.end + 3 * 3600 - trace.start) / 3600
    # now: SweepCompleted every hour a run completed, the rest only when not zero
    assert after["metric_hours_per_week"] * weeks <= hours * len(after["names"])
    assert after["metric_hours_per_week"] < before["metric_hours_per_week"] / 3
    assert "metric" not in results["first"] and "metrics" not in results["script"]


def test_every_failed_event_is_recovered_alarmed_superseded_ignored_or_lost_exactly_once(replays):
    _, results = replays
    for result in results.values():
        c = result["counts"]
        parts = c.get("recovered", 0) + c.get("alarmed", 0) + c.get("superseded", 0) + c.get("ignored", 0) + c.get("lost", 0)
        assert parts == c["failed"]
        assert c.get("lost", 0) == c.get("lost_5xx", 0) + c.get("lost_no_answer", 0)
        assert c.get("dropped_other", 0) <= c.get("lost", 0)
        assert c.get("stale_changed", 0) <= c.get("stale_redeliveries", 0)


def test_a_replay_records_for_every_attempt_whether_it_changed_state(replays):
    _, results = replays
    for result in results.values():
        c = result["counts"]
        # measure refuses flags that do not match the attempts; some attempts wrote or sent, most did not
        assert 0 < c["attempts_changed"] < c["attempts"]


def test_pager_loses_no_5xx_failure_drops_none_for_another_thing_and_no_stale_redelivery_changes_state(replays):
    _, results = replays
    pager = results["pager"]
    assert pager["counts"].get("lost_5xx", 0) == 0
    assert pager["counts"].get("dropped_other", 0) == 0
    assert pager["calls_max"] <= 50
    assert pager["counts"].get("stale_changed", 0) == 0
    assert pager["counts"].get("recovered", 0) > 0


def test_the_script_recovers_everything_and_its_stale_redeliveries_change_nothing(replays):
    _, results = replays
    script = results["script"]
    assert script["counts"].get("recovered", 0) == script["counts"]["failed"]
    assert script["counts"].get("stale_redeliveries", 0) > 0  # it asks again for what a newer event overtook
    assert script["counts"].get("stale_changed", 0) == 0  # and the handlers answer it without changing anything
    assert script["writes"].get("script", 0) == script["runs"]  # its one value: the time of its last run


def test_after_a_three_hour_telegram_outage_pager_has_delivered_every_event_that_got_a_502_and_alarmed_none(pem):
    trace = fleet.tiny_trace(hours=4)
    trace.faults = [fleet.Fault("telegram", trace.start + 20 * 60, trace.start + 200 * 60)]
    result = simulate.simulate(trace, "pager", pem=pem, drain=3 * 3600)
    c, outage = result["counts"], result["outages"][0]
    assert outage["failed"] > 0 and c.get("lost_5xx", 0) == 0
    # no attempt spent while Telegram still failed: none used up its three inside the outage
    assert outage["alarmed"] == 0
    assert outage["in_time"] + outage.get("late", 0) + outage["superseded"] == outage["failed"]


def test_fast_recovery_redelivers_within_minutes_of_an_outages_end_and_the_quarter_hour_runs_within_fifteen(replays):
    _, results = replays
    fast, slow = results["pager"]["to_pass"]["outage"], results["pager-15"]["to_pass"]["outage"]
    assert fast["n"] > 0 and slow["n"] > 0
    assert fast["median"] <= 2 * simulate.CHECK_EVERY and fast["max"] <= 5 * 60
    assert fast["median"] < slow["median"] <= simulate.SWEEP_EVERY + simulate.SWEEP_OFFSET
    for design in simulate.DESIGNS:  # no design spends an event's attempts inside the tiny trace's short outages
        assert results[design]["counts"].get("spent_alarmed_short", 0) == 0


def test_the_recovery_check_runs_every_minute_and_only_with_fast_recovery(replays):
    trace, results = replays
    pager, slow = results["pager"], results["pager-15"]
    minutes = (trace.end + DRAIN - trace.start - simulate.CHECK_OFFSET) / simulate.CHECK_EVERY
    assert abs(pager["checks"] - minutes) <= 1 and slow["checks"] == 0
    assert pager["check_runs"] >= 1 and slow["check_runs"] == 0  # a run as soon as the outage was over
    assert pager["scheduled_runs"] == slow["scheduled_runs"] == slow["runs"]
    assert pager["held_runs"] >= 1  # a scheduled run during an outage asked GitHub for nothing
    # noted once when an outage starts; then the run the check starts (its lease taken, its commit, the note
    # cleared, its lease given back): no write more, whatever the outage's size (the checks that carry out the
    # drain write a lease a minute, counted with the sweep's own writes)
    for result in (pager, slow):
        assert 1 <= result["recovery"]["noted"] and result["recovery"]["max"] == 1
    assert pager["recovery"]["total_max"] <= 5
    # the sweep's own records counted by key and item: the lease, taken and given back by every run
    runs_per_day = pager["runs_per_day"]
    assert 2 * runs_per_day <= pager["lease_writes_per_day"] and pager["sweep_keys"]["sweep [deliveries]"] >= 1


def test_no_design_goes_over_the_call_budget_on_the_tiny_trace(replays):
    _, results = replays
    for result in results.values():
        assert result["over_budget"] == 0 and result["calls_max"] <= result["call_budget"]
        assert result["checks_calls_max"] <= result["call_budget"]


def test_a_scheduled_run_is_invoked_with_its_events_id_as_eventbridge_does(pem):
    trace = fleet.tiny_trace(hours=0.5)
    replay = simulate.Replay(trace, "pager-15", pem=pem, drain=0)
    replay.run()
    assert replay.store.inner.load("sweep", "deliveries").data["last_event"] == f"pager-15-{replay.scheduled}"


def test_the_replay_counts_what_aws_bills(replays):
    _, results = replays
    for design in simulate.PAGER_DESIGNS:
        aws = results[design]["aws"]
        lam = aws["lambda"]
        pings = results[design]["pings"]  # the sweep's pings of pager's own endpoint reach the function too
        assert pings["sent"] > 0 and pings["sent"] == pings["answered"] + pings["down"]
        assert lam["webhook"]["invocations"] == aws["http_api_units"] == results[design]["counts"]["attempts"] + pings["answered"]
        assert lam["sweep"]["invocations"] == aws["scheduled_events"] == results[design]["runs"] - results[design]["check_runs"] + results[design]["checks"]
        for function in bill.FUNCTIONS:
            f = lam[function]
            assert f["billed_ms"] >= f["invocations"] and f["cpu_seconds"] > 0 and 1 <= f["cold_starts"] <= f["invocations"]
            assert f["cold_starts"] <= f["secret_reads"] <= f["invocations"]
        db = aws["dynamodb"]
        assert db["read_units"] >= db["loads"] and db["write_units"] >= db["writes"] > 0 and db["stored_bytes"] > 0
        assert aws["log_bytes"]["webhook"] > 200 * lam["webhook"]["invocations"]  # a JSON line per delivery
        assert aws["log_bytes"]["sweep"] > 0 and aws["metric_hours"] > 0
    # the every-minute check: one invocation a minute, and the sweep function stays warm
    assert results["pager"]["aws"]["lambda"]["sweep"]["invocations"] > 10 * results["pager-15"]["aws"]["lambda"]["sweep"]["invocations"]
    assert results["pager"]["aws"]["lambda"]["sweep"]["cold_starts"] < results["pager-15"]["aws"]["lambda"]["sweep"]["cold_starts"]


def test_the_weekly_bill_has_a_line_per_service_from_listed_prices(replays):
    _, results = replays
    lines = bill.weekly(results["pager"]["aws"])
    assert {line.service for line in lines} == {"Lambda", "API Gateway", "DynamoDB", "Parameter Store", "KMS", "CloudWatch",
                                                "EventBridge"}
    assert all(line.dollars >= 0 and line.after_always_free <= line.dollars for line in lines)
    by_item = {line.item: line for line in lines}
    dashboard = by_item["dashboard"]  # not in a default deployment: nothing to pay
    assert dashboard.dollars == 0 and dashboard.covered
    assert 0 < bill.total_after_always_free(lines) < bill.total(lines)
    assert bill.total(lines) == pytest.approx(sum(line.dollars for line in lines))
    weeks = results["pager"]["aws"]["span_seconds"] / (7 * 86_400)
    api = by_item["HTTP API requests (512 KB each)"]
    assert api.usage == pytest.approx(results["pager"]["aws"]["http_api_units"] / weeks)


def test_the_report_states_every_target_as_met_or_not_met(replays, subscribed, quiet, restless, cost, modules,
                                                         long_outage):
    trace, results = replays
    traces = {"full": trace, "subscribed": subscribed[0]}
    gaps = {0: restless, BUZZ_GAP_MINUTES: subscribed[1]["pager"]["phone"]}
    both = {"full": results, "subscribed": {"pager": {**subscribed[1]["pager"], "phone_quiet": quiet, "phone_gaps": gaps}}}
    args = argparse.Namespace(days=trace.days, seed=trace.seed)
    text = report.report(traces, both, cost, None, modules, args=args, handled=["issues"], elapsed=1.0,
                         outages=long_outage[0], burst=long_outage[1])
    section = text.split("## Targets", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if re.search(r"\| (met|\*\*not met\*\*|–) \|$", line)]
    bills = {"full": bill.weekly(results["pager"]["aws"]), "subscribed": bill.weekly(subscribed[1]["pager"]["aws"])}
    assert len(rows) == len(report.targets(results, cost, None, modules, 50, bills)) + 3 == 19
    assert "a default deployment for the busy fleet (the subscribed events only) costs at most $1.50 a month" in section
    assert "... and $0 within AWS's always-free allowances" in section and "| **a month, list prices**" in text
    assert "## After long outages, and in a burst" in text and "First answers of 5xx in the busiest quarter hour" in text
    assert text.count("Like for like: every column replays the same events") == 2
    assert "what GitHub no longer keeps is said in the alarm: none lost silently" in section
    assert "lost silently" in text and "Recovery after each fault" in text and "## A lean hot path" in text
    assert "## Custom metrics published" in text and "| metric-hours per week |" in text
    assert "## What users feel" in text and "| **the subscribed events only** (" in text
    assert "## The stack's AWS cost per week" in text and "| **total, list prices** |" in text
    assert "no failed event dropped as superseded by another thing" in section
    assert "no stale redelivery changed state" in section
    assert "from an outage's end (Telegram 502, GitHub 5xx) to each of its events' passing redelivery" in section
    assert "no event alarmed because its attempts were spent during an outage shorter than 3 hours" in section
    assert "| stale redeliveries that changed state / in all |" in text
    assert "a contribution takes at most 4 round trips to the table" in section
    assert "an ignored delivery loads none of requests, jwt, cryptography, nor boto3 with the secrets in the" in section
    assert "as deployed (secret store set): boto3 for the secrets, " in section
    assert "secret in the environment (local runs): none of them, " in section
    # the modules of an ignored delivery, both ways: as every deployment runs, and with the secrets in the environment
    lean = text.split("## A lean hot path", 1)[1].split("\n## ", 1)[0]
    assert "| modules loaded to answer an ignored delivery (star.created) in a fresh interpreter, secret in the " \
           "environment (local runs) | 709 (at c47878a) |" in lean
    assert f"| the same, as deployed (secret store set) | – | {modules['deployed']['modules']} |" in lean
    assert "`lambda_handler`" in section
    assert cost["ignored"]["outcomes"] and all(k.startswith("200") for k in cost["ignored"]["outcomes"])
    assert set(cost["contribution"]["outcomes"]) <= {"200 sent, draft asked", "200 sent, kept for the summary, draft asked"}  # shown and drafted, never refused
    assert cost["ignored"]["ratio"] > 0 and cost["contribution"]["own_us"] > 0
    assert cost["ignored"]["app_ratio"] > 0 and cost["contribution"]["app_own_us"] > 0
    assert cost["contribution"]["bare_call_us"] > 0 and cost["ignored"]["bare_call_us"] > 0
    assert cost["ignored"]["calls"] == 0 and cost["contribution"]["calls"] >= 2  # a message and a draft dispatch
    phone_section = text.split("## What the maintainer's phone lives through (the subscribed events only", 1)[1]
    phone_section = phone_section.split("\n## ", 1)[0]
    attention = [line for line in phone_section.splitlines() if re.search(r"\| (met|\*\*not met\*\*) \|$", line)]
    # a red default branch within the minute (the hour), the week's buzzes, none in quiet hours, every call's first
    # line, none lost
    assert len(attention) == len(phone_report.targets(subscribed[1]["pager"]["phone"], quiet)) == 5
    assert "| 🚨 a default branch red past its grace | now |" in phone_section
    assert "| … within the hour of its repository's last buzz | |" in phone_section
    assert "| 💬 an outsider's first contact | soon |" in phone_section and "| 🔀 a release ready to merge | soon |" in phone_section
    assert "Targets of the model before, dropped or rewritten by design" in phone_section
    assert "| ALARM_GRACE_MINUTES | alarm buzzes in the week |" in phone_section
    assert "| **15** |" in phone_section and "the same, at the same times" in phone_section
    assert "| **the week, QUIET_HOURS=01:00-02:00** |" in phone_section and "| **the week** |" in phone_section
    assert "| BUZZ_GAP_MINUTES | buzzes in the week |" in phone_section and f"| **{BUZZ_GAP_MINUTES}** |" in phone_section


def test_an_ignored_delivery_makes_no_round_trip_and_a_contribution_at_most_four(cost):
    assert cost["ignored"]["round_trips"] == 0 and cost["ignored"]["round_trips_max"] == 0
    # its thread, its record and what turns a buzz down (its repository's mute and the phone's last call) read
    # together, its thread and its record claimed together, and everything it did written together (its record,
    # its thread, the phone's call): 3; one kept while the phone rests reads the summary's mark of the rest
    # first (whether its call is under way, so that a late note is never kept for nothing): 4
    assert 0 < cost["contribution"]["round_trips"] <= cost["contribution"]["round_trips_max"] <= 4
    assert cost["contribution"]["round_trips_loads"] >= 1 and cost["contribution"]["round_trips_writes"] == 2
    assert cost["contribution"]["writes"] >= 4  # the claims of two records, then those two and more


def test_an_ignored_delivery_in_a_fresh_interpreter_loads_none_of_the_clients_libraries(modules):
    local, deployed = modules["local"], modules["deployed"]
    assert local["outcome"] == deployed["outcome"] == "200 ignored"
    # the secrets in the environment (local runs): the store is never asked, and no client's library is loaded
    assert not set(local["loaded"]) & {"requests", "urllib3", "jwt", "cryptography", "boto3"}
    assert local["botocore"] in ([], ["botocore"])  # Powertools' user agent imports the top-level package only
    assert 0 < local["modules"] < costs.BEFORE["modules"]["modules"]
    # as deployed, the first request of an environment reads the secrets' SecureString through boto3: that and
    # nothing else of the clients
    assert {"boto3", "botocore"} <= set(deployed["loaded"]) and not set(deployed["loaded"]) & {"requests", "jwt", "cryptography"}
    assert deployed["modules"] > local["modules"] and sum(deployed["added"].values()) >= deployed["modules"] - local["modules"]
    assert {"boto3", "botocore"} <= set(deployed["added"])


def test_an_ignored_deliverys_cold_start_is_measured_both_ways_and_the_secrets_read_alone(pem):
    # the bench's layer is the repository's package with this virtualenv's libraries, on the path the bench gives
    paths = [str(costs.ROOT / "functions" / "webhook"), str(costs.ROOT / "layers" / "pager"), sysconfig.get_paths()["purelib"]]
    with costs.cold_world(pem) as (env, busy, _):
        ways = {"deployed": env, "local": costs.secrets_in_environment(env, pem)}
        assert "PAGER_SECRET_ID" not in ways["local"] and ways["local"]["GITHUB_PRIVATE_KEY"] == pem
        out = costs.ignored_cold_starts(sys.executable, paths, ways, costs._Events(fleet.tiny_trace(hours=1)), busy, 1,
                                        lambda line: None)
    assert out["ignored_deployed"]["answers"] == out["ignored_local"]["answers"] == [200, 200]
    assert out["ignored_deployed"]["fakes_first"] > 0 == out["ignored_local"]["fakes_first"]  # only it asked the store
    assert set(out["secret_read"]) == {"botocore", "boto3", "client", "call"}


def test_the_cold_start_section_has_an_ignored_delivery_both_ways_and_the_secrets_read_in_parts(modules):
    def measured(first: float) -> dict:
        return {"module": 0.1, "first": first, "warm": 0.001, "first_invocation": 0.1 + first, "one_time": first}

    imports = {"python": "Python 3.13.0", "source": "the layer built by `make build`", "repeats": 7, "first_event": costs.FIRST_EVENT,
               "webhook_compiled": measured(0.4), "webhook_bare": measured(0.9), "sweep_compiled": measured(0.4),
               "sweep_bare": measured(0.9), "ignored_event": "star.created", "ignored_deployed": measured(0.35),
               "ignored_local": measured(0.04), "secret_read": {"botocore": 0.15, "boto3": 0.02, "client": 0.1, "call": 0.01}}
    lines: list[str] = []
    cold_report.section(lines.append, imports, modules)
    text = "\n".join(lines)
    assert "| as deployed (secret store set) | 100 ms | 350 ms | 450 ms | 1.0 ms |" in text
    assert "| secret in the environment (local runs) | 100 ms | 40 ms | 140 ms | 1.0 ms |" in text
    assert "As deployed the first invocation takes 310 ms more and loads" in text
    assert "importing botocore 150 ms, boto3 on top 20 ms" in text and "89% of it botocore's import and its client" in text


def test_dropped_by_another_thing_counts_only_the_kinds_the_coarse_rule_dropped():
    # the first design's rule applied to signals.SUPERSEDED; a comment is a thing of its own, never overtaken
    assert "workflow_run" in SUPERSEDED and "issue_comment" not in SUPERSEDED
    assert fleet.COMMENTS.isdisjoint(SUPERSEDED)


def test_the_same_trace_replayed_again_gives_the_same_counts(replays, pem):
    trace, results = replays
    again = simulate.simulate(trace, "pager", pem=pem, drain=DRAIN)
    assert again["counts"] == results["pager"]["counts"] and again["redeliveries"] == results["pager"]["redeliveries"]
    assert again["to_pass"] == results["pager"]["to_pass"]


class Ticks:
    """A steady CPU clock, for replays compared across processes: each reading 1/1024 s after the last (a
    binary fraction: every difference is exact, whatever reading it starts from)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 2**-10
        return self.now


# Every kind of replay `make bench` makes, each as short as it goes: a tiny trace and its subscribed events with
# each design, with quiet hours and without the rest; a short Telegram outage, a small burst, a scale row, a short
# GitHub outage and pager's endpoint down.
TINY_PLAN = Plan(
    drain=3600.0, gaps=(0, BUZZ_GAP_MINUTES), long_outages=(("3 h, a page every hour", 3.0, 1.0),), burst=10,
    sizes=(20_000,), scenarios=(scale.Scenario("a 10-minute outage", "outage", before=900.0, trouble=600.0, after=2100.0),),
    github_down=(("1 h, a comment every 30 min", 1.0, 0.5),), modules=False, cold_trees=False)
# What a replay measures by the wall clock: its own time, and the log's bytes (each line says the handler's
# duration_ms, as Powertools says cold_start once a process).
WALL_CLOCK = ("seconds", "log_bytes")


def _steady(value):
    """`value` without what the wall clock measured."""
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in WALL_CLOCK}
    if isinstance(value, list | tuple):
        return [_steady(v) for v in value]
    return value


def _clock_as(value, other):
    """Set in `value` what the wall clock measured to `other`'s, the same replays'."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in WALL_CLOCK:
                value[k] = other[k]
            else:
                _clock_as(v, other[k])
    elif isinstance(value, list | tuple):
        for v, o in zip(value, other, strict=True):
            _clock_as(v, o)


@pytest.mark.skipif(not forks(), reason="the replays run side by side in forked processes only")
def test_the_replays_side_by_side_give_the_figures_and_report_they_give_one_after_another(pem):
    trace = fleet.tiny_trace(hours=2)
    traces = {"full": trace, "subscribed": fleet.only(trace, simulate.register_signals())}
    alone, side = (replay_all(traces, list(simulate.DESIGNS), TINY_PLAN, pem=pem, jobs=jobs, cpu=Ticks())
                   for jobs in (1, 2))
    assert (alone.processes, side.processes) == (1, 2)
    parts = ("results", "outages", "burst", "scale")
    for part in parts:
        assert _steady(getattr(alone, part)) == _steady(getattr(side, part)), part
    for part in parts:
        _clock_as(getattr(side, part), getattr(alone, part))
    args = argparse.Namespace(days=trace.days, seed=trace.seed)
    texts = [report.report(traces, r.results, None, None, None, args=args, handled=simulate.register_signals(), elapsed=60.0,
                           processes=r.processes, outages=r.outages, burst=r.burst, scale=r.scale).splitlines()
             for r in (alone, side)]
    assert len(texts[0]) == len(texts[1]) > 100 and "## At a busy fleet's size" in texts[0]
    assert [(n, a, b) for n, (a, b) in enumerate(zip(*texts, strict=True)) if a != b] == [(2, texts[0][2], texts[1][2])]
    assert "the whole run took 1.0 min, its replays one after another in one process" in texts[0][2]
    assert "the whole run took 1.0 min, its replays side by side in 2 processes" in texts[1][2]


# ---------------------------------------------------------------------------------- the phone


def test_the_phones_counts_add_up_by_day_and_kind_and_to_the_chat_and_every_moment_is_counted_once(subscribed):
    result = subscribed[1]["pager"]
    p = result["phone"]
    cells = [counts for kinds in p["days"].values() for counts in kinds.values()]
    assert sum(c["sends"] for c in cells) == p["sends"] > 0 and sum(c["buzzes"] for c in cells) == p["buzzes"] > 0
    assert all(c["buzzes"] <= c["sends"] for c in cells)
    deleted = sum(c["deletes"] for c in cells)
    assert p["sends"] - deleted == result["chat_messages"]  # what is left in the chat
    assert 0 < deleted <= p["reposts"] + p["own_calls"] and p["reposts"] == sum(p["reposts_by_kind"].values())
    assert p["night"] == sum(p["night_by_day"].values()) <= p["buzzes"]
    week: dict[str, Counter] = {}
    for kinds in p["days"].values():
        for kind, counts in kinds.items():
            week.setdefault(kind, Counter()).update(counts)
    assert set(week) <= {kind for kind, _, _ in phone.KINDS}  # every message is of a known kind
    moments = p["moments"]
    for t in moments.values():  # each moment buzzed, or was called by a call that held it, or it is said why not
        neither = sum(t.get(k, 0) for k in ("resolved", "pending", "uncalled", "between_checks", "telegram_down", "held", "silent"))
        assert t["n"] == t["buzzed"] + t["called"] + neither
        assert t["called"] == t["message"] + t["own"] + t["after"]  # by its 📬 message, its own message anew, or a now buzz
        assert t["lost"] == t["uncalled"] + t["silent"] == 0
    # every buzz is a moment of urgency now's, a soon moment's own, or a call's with a sound; a call's message is a
    # 📬 one here (the one thing's own message posted anew counts under its kind)
    calls = p["calls"]
    loud = [c for c in calls if c["loud"]]
    soon = moments["contact"]["buzzed"] + moments["release"]["buzzed"]
    assert p["buzzes"] == p["now_buzzes"] + soon + len(loud) and len(calls) == len(p["rest_calls"]) == week["rest"]["sends"]
    assert len([c for c in loud if c["form"] == "message"]) == week["rest"]["buzzes"] and calls
    assert 0 < p["now_buzzes"] == week["alarm"]["buzzes"] <= moments["alarm"]["buzzed"]
    assert week["contribution"]["buzzes"] == moments["contact"]["buzzed"] + sum(c["kind"] == "contribution" for c in loud)
    # the red default branch that buzzed while the phone rested ended its rest: what the rest kept followed in the
    # next minute without a sound, that buzz its call
    silent = [(c["how"], c["by"]) for c in calls if not c["loud"]]
    assert silent and set(silent) == {("after", "alarm")}
    assert moments["contact"]["after"] > 0 and moments["contact"]["kept"] == moments["contact"]["called"] > 0
    # a failure red past its grace within the hour of its repository's last buzz rang when that hour ended
    within = moments["alarm"]["rings_within_hour"]
    assert moments["alarm"]["within_hour"] == len(within) > 0 and all(0 < w <= NOW_AGAIN_SECONDS + 60 for w in within)
    assert all(w <= 60 for w in moments["alarm"]["rings_not_within_hour"] + moments["alarm"]["rings_after_outage"])


def test_the_grace_model_gives_the_chats_alarm_buzzes_at_the_replays_grace_and_fewer_with_a_longer_one(subscribed, restless):
    p = restless
    assert p["model"]["same_times"] and p["model"]["buzzes"] == p["model"]["phone"] > 0
    rows = p["grace"]
    assert [row["minutes"] for row in rows] == list(phone.GRACES)
    assert all(a["buzzes"] >= b["buzzes"] and a["flakes"] >= b["flakes"] for a, b in itertools.pairwise(rows))
    # no grace: at once, or when the hour of its repository's last buzz ends (a flapping repository rings once an
    # hour); 30 minutes: no flake
    assert 0 < rows[0]["delay_median"] <= NOW_AGAIN_SECONDS + 60 and rows[-1]["flakes"] == 0
    assert next(row for row in rows if row["minutes"] == 15)["buzzes"] == p["model"]["buzzes"]
    # the phone's rest does not change an alarm's buzzes (their urgency is now): the same with the default rest
    rested = subscribed[1]["pager"]["phone"]
    assert rested["model"] == p["model"] and rested["grace"] == rows


def test_quiet_hours_leave_no_buzz_inside_them_and_their_summary_buzzes_once_at_their_end(subscribed, quiet):
    trace, plain = subscribed[0], subscribed[1]["pager"]["phone"]
    assert quiet["quiet_hours"] == TINY_QUIET and quiet["inside_quiet"] == 0
    assert quiet["summaries"] == [trace.start + 2 * 3600 + 30]  # the first every-minute check after 02:00
    kept = {kind: t["kept"] for kind, t in quiet["moments"].items()}
    assert kept["contact"] > 0 and all(t["silent"] == 0 for t in quiet["moments"].values())
    assert quiet["buzzes"] > 0 and plain["buzzes"] > 0
    assert "grace" not in quiet  # the grace's model knows no quiet hours


def test_a_flake_within_the_grace_never_buzzes_and_a_failure_red_past_it_buzzes_once(pem):
    trace = fleet.red_trace([10 * 60, 40 * 60], start=fleet.WEEK_START + 10 * 3600)  # a flake, then red for 40 min
    p = simulate.simulate(trace, "pager", pem=pem, drain=3600, buzz_gap=0)["phone"]
    assert p["episodes"] == {"n": 2, "buzzed": 1, "kept": 0, "quiet_within_grace": 1, "quiet_longer": 0}
    [(_, kinds)] = p["days"].items()
    assert dict(kinds["alarm"]) == {"sends": 3, "buzzes": 1, "edits": 2, "deletes": 1}  # sent, sent, reposted
    assert p["moments"]["alarm"]["n"] == p["moments"]["alarm"]["buzzed"] == 1
    red = next(row for row in p["grace"] if row["minutes"] == 15)
    # the failure that stayed red buzzed at the first every-minute check past its 15 minutes
    assert red == {"minutes": 15, "buzzes": 1, "flakes": 0, "stayed_red": 1, "unheard": 0, "delay_median": 930.0}
    assert [row["buzzes"] for row in p["grace"]] == [2, 2, 1, 1, 1, 1]  # the flake closed 10 minutes in


def test_the_grace_model_rings_an_alarm_that_buzzed_within_the_hour_again_only_when_the_hour_ends():
    checks = phone.check_times(30.0, 60.0, 9000.0)
    steps = [("open", 100.0, "1", "workflow:1", 100.0, "CI failed"), ("render", 100.0, "1", "webhook"),
             ("close", 1500.0, "1", "workflow:1"), ("render", 1500.0, "1", "webhook"),  # all clear
             ("open", 1600.0, "1", "workflow:3", 1600.0, "Lint failed"), ("render", 1600.0, "1", "webhook"),
             ("open", 1700.0, "2", "workflow:1", 1700.0, "CI failed"), ("render", 1700.0, "2", "webhook")]
    # the first rings at the check after its grace; the second, red again within the hour of that buzz (its all
    # clear between), rings when the hour ends (1050 + 3600), at that check; another repository rings on its own
    assert [(b.at, b.ref, b.heard) for b in phone.grace_buzzes(steps, 900.0, checks)] == [
        (1050.0, "1", (("workflow:1", 100.0),)), (2610.0, "2", (("workflow:1", 1700.0),)),
        (4650.0, "1", (("workflow:3", 1600.0),))]
    # cleared before the hour ends: it never rings
    cleared = [*steps, ("close", 4000.0, "1", "workflow:3"), ("render", 4000.0, "1", "webhook")]
    assert [b.at for b in phone.grace_buzzes(cleared, 900.0, checks)] == [1050.0, 2610.0]


def test_the_grace_model_buzzes_once_per_failure_past_its_grace_and_never_for_one_that_closes_before():
    checks = phone.check_times(30.0, 60.0, 4000.0)
    steps = [("open", 100.0, "1", "workflow:1", 100.0, "CI failed"), ("render", 100.0, "1", "webhook"),
             ("open", 200.0, "1", "workflow:2", 200.0, "Lint failed"), ("render", 200.0, "1", "webhook"),
             ("close", 700.0, "1", "workflow:1"), ("render", 700.0, "1", "webhook")]
    assert phone.grace_buzzes(steps, 900.0, checks) == [phone.Buzz(1110.0, "1", (("workflow:2", 200.0),))]
    # no grace: the first at once, the second when the hour of that buzz ends (100 + 3600, at the next check)
    assert [b.at for b in phone.grace_buzzes(steps, 0.0, checks)] == [100.0, 3750.0]
    # the check's minute: Telegram down from the grace's end on, the repost waits for its return
    assert [b.at for b in phone.grace_buzzes(steps, 900.0, checks, [(1000.0, 1500.0)])] == [1530.0]
