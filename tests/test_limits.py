"""The limits a busy fleet meets, as their owners document them (sim/pager_world/limits.py), and pager under them.

GitHub's secondary rate limits (docs.github.com, "Rate limits for the REST API"): 900 points a minute to one
endpoint (a GET 1, a POST 5), content-generating requests 80 a minute and 500 an hour, a 403 with
`retry-after` over them. API Gateway's throttle ("Throttle requests to your HTTP APIs"): a token bucket.
Through the real GitHub client and the real sweep: a limit is held like an outage, asked again after its
retry-after, and spends no event's attempt.
"""

from __future__ import annotations

import pytest

from pager.errors import GitHubUnavailable
from pager_world.limits import CONTENT, REDELIVERY, SecondaryLimits, Throttle, endpoint

START = 1_800_000_000.0


def test_points_are_counted_per_endpoint_a_post_five_and_a_get_one():
    limits = SecondaryLimits()
    assert endpoint("POST", "/app/hook/deliveries/123/attempts") == endpoint("POST", "/app/hook/deliveries/9/attempts")
    for k in range(180):  # 180 POSTs: 900 points
        assert limits.check("POST", f"/app/hook/deliveries/{k}/attempts", START + k / 10) is None
    refused = limits.check("POST", "/app/hook/deliveries/999/attempts", START + 20)
    assert refused is not None and refused.status == 403 and "secondary rate limit" in refused.body["message"]
    assert 0 < int(refused.headers["retry-after"]) <= 60  # until the oldest leaves the minute
    assert limits.check("GET", "/app/hook/deliveries", START + 20) is None  # another endpoint: its own points
    assert limits.check("POST", "/app/hook/deliveries/999/attempts", START + 60.5) is None  # the minute moved on


def test_an_endpoint_is_its_route_whatever_owner_repository_ref_or_login_it_names():
    limits = SecondaryLimits()
    for k in range(900):  # 900 GETs: 900 points, over two repositories and as many commits
        assert limits.check("GET", f"/repos/o{k % 2}/r{k % 2}/commits/{k:040x}/check-runs", START) is None
    assert limits.check("GET", "/repos/other/repo/commits/abc/check-runs", START + 1) is not None
    assert limits.check("GET", "/repos/other/repo/collaborators/ana", START + 1) is None  # another route
    assert endpoint("GET", "/repos/a/b/collaborators/ana") == endpoint("GET", "/repos/c/d/collaborators/bob")


def test_a_refused_request_is_not_counted():
    limits = SecondaryLimits()
    for k in range(180):
        limits.check("POST", f"/app/hook/deliveries/{k}/attempts", START)
    for _ in range(50):
        assert limits.check("POST", "/app/hook/deliveries/1/attempts", START + 30) is not None
    assert limits.check("POST", "/app/hook/deliveries/1/attempts", START + 60) is None
    assert limits.refused == 50


def test_content_generating_requests_are_limited_to_80_a_minute_and_500_an_hour():
    limits = SecondaryLimits(content=CONTENT + (REDELIVERY,))
    at = START
    for k in range(80):
        assert limits.check("POST", f"/app/hook/deliveries/{k}/attempts", at) is None
    minute = limits.check("POST", "/repos/o/r/dispatches", at + 1)  # a dispatch is content too: the same count
    assert minute is not None and int(minute.headers["retry-after"]) == 59
    sent = 80
    while sent < 500:  # 80 a minute until the hour's 500
        at += 60
        for _ in range(min(80, 500 - sent)):
            assert limits.check("POST", f"/app/hook/deliveries/{sent}/attempts", at) is None
            sent += 1
    hour = limits.check("POST", "/app/hook/deliveries/501/attempts", at + 60)
    assert hour is not None and int(hour.headers["retry-after"]) == pytest.approx(START + 3600 - (at + 60), abs=1)
    assert limits.check("POST", "/app/hook/deliveries/501/attempts", START + 3600) is None  # the first 80 left the hour


def test_a_redelivery_is_not_content_unless_the_world_says_so():
    limits = SecondaryLimits()
    for k in range(100):
        assert limits.check("POST", f"/app/hook/deliveries/{k}/attempts", START) is None


def test_api_gateways_bucket_passes_its_burst_at_once_and_its_rate_after():
    gate = Throttle(rate=50, burst=200)
    assert sum(gate.take(START) for _ in range(250)) == 200
    assert sum(gate.take(START + 1) for _ in range(100)) == 50  # a second refills 50
    assert sum(gate.take(START + 100) for _ in range(300)) == 200  # never above the burst
    assert gate.refused == 50 + 50 + 100


def test_pagers_client_reads_the_secondary_limits_403_as_a_wait_of_its_retry_after(world):
    world.github.limits = SecondaryLimits()
    for k in range(180):
        world.github.limits.check("POST", f"/app/hook/deliveries/{k}/attempts", world.now)
    delivery = world.github.deliver("workflow_run", _payload(), guid="g-limited")
    with pytest.raises(GitHubUnavailable) as raised:
        world.services.github.redeliver(delivery["id"])
    assert raised.value.status == 403 and 0 < raised.value.retry_after <= 60


def test_without_retry_after_pagers_client_waits_the_minute_githubs_docs_ask(world):
    world.github.limits = SecondaryLimits(retry_after=False)
    for k in range(180):
        world.github.limits.check("POST", f"/app/hook/deliveries/{k}/attempts", world.now)
    delivery = world.github.deliver("workflow_run", _payload(), guid="g-limited")
    with pytest.raises(GitHubUnavailable) as raised:
        world.services.github.redeliver(delivery["id"])
    assert raised.value.status == 403 and raised.value.retry_after == 60


def _payload():
    from pager_world.payloads import example

    return example("workflow_run", "completed")


def test_the_sweep_holds_a_content_limit_and_asks_again_after_its_retry_after_spending_no_attempt(make_sweeps):
    """GitHub counting a redelivery as content-generating (its docs do not say), 480 dispatches in the half hour
    before: 90 events failed; a quarter hour later GitHub refuses the 21st redelivery with a retry-after of a quarter
    hour (until the first dispatches leave the hour), the sweep
    holds GitHub's redeliveries until then (asking for none meanwhile) and asks again: each event passes, none
    is named, none is attempted more than three times."""
    sweeps = make_sweeps()
    limits = sweeps.github.limits = SecondaryLimits(content=CONTENT + (REDELIVERY,))
    sweeps.sweep()
    for minute in range(6):  # 80 a minute, 480 in the hour
        for _ in range(80):
            assert limits.check("POST", "/repos/o/r/dispatches", sweeps.now - 1800 + 60 * minute) is None
    sweeps.advance(1)
    sweeps.answer = lambda guid, redelivery: 200 if redelivery else 502
    failed = [sweeps.deliver("workflow_run", "completed", 100 + k) for k in range(90)]
    sweeps.advance(14)
    sweeps.sweep()
    taken = len(sweeps.github.redelivery_requests)
    assert limits.refused == 1 and taken == 20
    summaries = sweeps.minutes(12)  # within the quarter hour GitHub said to wait: nothing asked
    assert len(sweeps.github.redelivery_requests) == taken and limits.refused == 1
    assert {s["outcome"] for s in summaries} == {"waiting: retry later"}
    sweeps.minutes(10)
    sweeps.advance(15)
    sweeps.sweep()
    sweeps.minutes(5)
    for guid in failed:
        codes = [a["status_code"] for a in sweeps.attempts(guid)]
        assert codes[-1] == 200 and len(codes) <= 3, (guid, codes)
    assert sweeps.entries() == {}


def test_a_wait_githubs_rate_limit_names_past_half_an_hour_is_not_said_in_the_chat(make_sweeps):
    """GitHub's hour of content-generating requests already full: the first redelivery is refused with a
    retry-after of about 45 minutes. pager waits as told without a word (a hold is said only half an hour
    past the wait its service named), then brings every event back."""
    sweeps = make_sweeps()
    limits = sweeps.github.limits = SecondaryLimits(content=CONTENT + (REDELIVERY,))
    sweeps.sweep()
    for k in range(500):  # the hour's 500, 80 a minute, from a minute before the events fail
        assert limits.check("POST", "/repos/o/r/dispatches", sweeps.now + 60 * (k // 80)) is None
    sweeps.advance(7)
    sweeps.answer = lambda guid, redelivery: 200 if redelivery else 502
    failed = [sweeps.deliver("workflow_run", "completed", 100 + k) for k in range(5)]
    sweeps.advance(8)
    summary = sweeps.sweep()
    assert summary["recovery"] == "waiting: redelivery" and limits.refused == 1
    for _ in range(4):  # an hour and a quarter: the wait (about 45 minutes), then the run that brings them back
        sweeps.minutes(14)
        sweeps.advance(1)
        sweeps.sweep()
    assert all(sweeps.attempts(g)[-1]["status_code"] == 200 for g in failed)
    assert not [m.text for m in sweeps.telegram.chat()], "a wait GitHub named is nothing to say"
