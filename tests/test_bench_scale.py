"""The bench at a busy fleet's size (sim/pager_bench: scale, held, scale_report).

A tiny scale replay, on worlds where the answer is known: with no sweep every failed event pager acts on
is lost without a word; with the real sweep each one has exactly one fate. The outages the sweep must
hold through, short, counted on invariants; the report's section renders. Never timings, and never the
sweep's targets themselves (the section states them as met or not).
"""

from __future__ import annotations

import pytest

from pager.signals import acts_on, subscribed_events
from pager_bench import held, scale, scale_report, simulate

TINY = scale.Scenario("a 10-minute outage", "outage", before=900.0, trouble=600.0, after=2100.0)
PER_DAY = 20_000  # about 830 deliveries in the tiny scenario's hour


@pytest.fixture(scope="module")
def pem():
    return simulate.private_key()


def no_sweep(services, what, *, now, run_id, event_id=None):
    """A sweep that does nothing: nothing is ever delivered again, nor named."""
    return {}


@pytest.fixture(scope="module")
def unswept(pem):
    return scale.scale(PER_DAY, TINY, pem=pem, sweep=no_sweep)


@pytest.fixture(scope="module")
def swept(pem):
    replay = scale.ScaleReplay(PER_DAY, TINY, pem=pem)
    return replay, replay.run()


def test_the_traffic_is_a_poisson_stream_of_the_subscribed_events_sorted_in_time():
    mix = scale.fleet_mix()
    assert {event for (event, _), _ in mix} <= set(subscribed_events())
    deliveries = scale.traffic(48_000, 3600, start=0.0)  # 2,000 expected
    assert 1800 < len(deliveries) < 2200
    assert [d.at for d in deliveries] == sorted(d.at for d in deliveries) and deliveries[-1].at < 3600
    assert len({d.guid for d in deliveries}) == len(deliveries)
    assert len({d.repository_id for d in deliveries}) == scale.REPOSITORIES
    assert any(acts_on(d.event, d.action) for d in deliveries) and not all(acts_on(d.event, d.action) for d in deliveries)
    assert [d.guid for d in scale.traffic(48_000, 3600, start=0.0)] == [d.guid for d in deliveries]


def test_a_failure_rate_is_drawn_per_guid_and_attempt():
    draws = [scale.draw(1, f"guid-{k}", 0) for k in range(2000)]
    assert 60 < sum(d < 0.05 for d in draws) < 140
    assert draws == [scale.draw(1, f"guid-{k}", 0) for k in range(2000)]
    assert draws != [scale.draw(1, f"guid-{k}", 1) for k in range(2000)]


def test_without_a_sweep_every_failed_event_pager_acts_on_is_neither_passed_nor_named(unswept):
    c = unswept["counts"]
    assert c["failed"] > 0 and c["ignored"] > 0
    assert c["passed"] == c["named"] == c["said"] == 0 and c["neither"] == c["failed"]
    assert unswept["failed_in_it"] == c["failed"] and unswept["passed_in_it"] == 0 and not unswept["all_within"]
    assert unswept["last_pass_minutes"] is None and unswept["redeliveries"] == 0
    assert unswept["calls_max"] == 0 and unswept["writes"] == 0 and unswept["largest_bytes"] == 0
    # with nothing delivered again, the failed events are exactly those delivered in the outage
    assert c["failed"] + c["ignored"] == unswept["deliveries_in_trouble"]
    assert any("neither passed nor named" in note for note in unswept["breaks"])


def test_with_the_real_sweep_each_failed_event_has_exactly_one_fate(swept, unswept):
    replay, row = swept
    c = row["counts"]
    assert c["passed"] + c["named"] + c["said"] + c["neither"] == c["failed"] > 0
    assert c["failed"] >= unswept["counts"]["failed"]  # a redelivery in the outage may fail an event that had passed
    assert c["passed"] > 0 and row["redeliveries"] > 0
    start, end = replay.trouble
    assert row["deliveries_in_trouble"] == sum(1 for d in replay.deliveries if start <= d.at < end)
    assert row["deliveries"] == len(replay.deliveries) == unswept["deliveries"]  # the same traffic


def test_the_runs_and_checks_keep_their_schedules_and_are_counted(swept):
    replay, row = swept
    span = replay.end - replay.start
    assert row["runs"] == len([t for t, what in replay.schedule() if what == "sweep"]) == int((span - 60) // 900) + 1
    assert row["checks"] == int((span - 90) // 60) + 1
    assert 0 < row["calls_max"] and row["seconds_max"] > 0 and row["deadline"] == scale.run_seconds()
    assert row["largest_key"].startswith("sweep") and row["largest_bytes"] > 0
    assert row["writes"] >= 0 and row["redeliveries_per_minute_max"] <= row["redeliveries"]
    assert 1 <= row["attempts_max"] and row["again_after_pass"] >= 0


def test_a_redelivery_of_an_event_that_had_passed_is_counted_and_named_where_it_breaks(pem):
    replay = scale.ScaleReplay(PER_DAY, TINY, pem=pem, sweep=no_sweep)
    replay.run()
    guid = replay.deliveries[0].guid  # passed, before the outage
    for _ in range(3):
        replay.world.github.record(guid, "check_suite", "completed", 70_000, 200, redelivery=True)
    row = scale.measure(replay)
    assert row["again_after_pass"] == 3 and row["attempts_max"] == 4 > row["max_attempts"]
    assert any("3 redeliveries of events that had passed already" in note for note in row["breaks"])


def test_a_steady_failure_rate_fails_about_its_share_of_first_attempts(pem):
    rate = scale.Scenario("5%", "rate", before=0.0, trouble=3600.0, after=0.0, rate=0.05)
    replay = scale.ScaleReplay(PER_DAY, rate, pem=pem, sweep=no_sweep)
    row = replay.run()
    failed = row["counts"]["failed"] + row["counts"]["ignored"]
    assert 0.02 * len(replay.deliveries) < failed < 0.08 * len(replay.deliveries)


@pytest.fixture(scope="module")
def held_short(pem):
    return {"github": {"1 h": held.github_outage(pem=pem, hours=1.0, every_hours=0.5)},
            "endpoint": held.endpoint_outage(pem=pem, hours=0.5, after=1800.0),
            "broken": {1.0: held.endpoint_outage(pem=pem, hours=1.0, every_hours=held.BROKEN_EVERY, after=held.BROKEN_AFTER)}}


def test_the_held_outages_count_each_comment_once(held_short):
    g = held_short["github"]["1 h"]
    assert g["comments"] == g["kept"] == 2
    assert g["drafts"] <= g["comments"] and g["as_page"] <= g["comments"] and g["lost"] <= g["comments"]
    e = held_short["endpoint"]
    assert e["pages"] == 5  # a comment every 6 minutes from 10 minutes in, the outage 30 minutes from 5 minutes in
    assert e["exhausted"] <= e["named"] <= e["pages"] and e["as_page"] <= e["pages"]
    assert e["attempts"] >= e["pages"] and e["attempts_max"] >= 1
    b = held_short["broken"][1.0]  # a page every 30 minutes from 10 minutes in, down an hour from 5 minutes in
    assert b["pages"] == 2 and b["as_page"] == 2 and b["named"] == 0 and b["attempts_max"] <= 3


def test_the_section_renders_the_tables_the_breaks_and_the_targets(swept, unswept, held_short):
    table = {TINY.label: {PER_DAY: swept[1]}, "no sweep": {PER_DAY: unswept}}
    lines: list[str] = []
    scale_report.section(lines.append, {"table": table, "held": held_short})
    text = "\n".join(lines)
    assert text.startswith("## At a busy fleet's size")
    assert f"| {TINY.label} | {PER_DAY:,} |" in text and "| no sweep | 20,000 |" in text
    assert "Where it breaks:" in text and "no sweep, 20,000 a day" in text
    assert "0 events neither passed nor named" in text and "**not met**" in text
    assert "GitHub down 1 h" in text and "pager's endpoint down 0.5 h" in text
    assert "A deployment broken from its first delivery" in text and "down 1 h, 30 minutes after the fix" in text
    assert "Replay times" in text
    empty: list[str] = []
    scale_report.section(empty.append, {})
    assert empty[0] == "## At a busy fleet's size"


def test_the_sweeps_ping_finds_pagers_outage_so_no_event_is_named_and_none_asked_for_in_it(swept):
    replay, row = swept
    c = row["counts"]
    assert c["named"] == c["neither"] == c["waiting"] == 0 and c["passed"] == c["failed"]
    start, end = replay.trouble
    asked_in_it = [at for attempts in replay.world.github.log.values() for at, _, again in attempts
                   if again and start <= at < end]
    assert asked_in_it == []  # held by the ping's 502: no attempt spent while pager failed
    assert row["attempts_max"] <= row["max_attempts"]


def test_the_busiest_quarter_hour_replaces_the_stream_in_its_quarter_scaled_to_the_size():
    shape, fleet_day = scale.busiest_quarter()
    assert len(shape) > 30 * fleet_day / 96  # far busier than a mean quarter hour
    per_day = 4 * fleet_day  # four copies of each of its events
    deliveries = scale.traffic(per_day, 3 * 3600, start=0.0, burst=3600.0)
    inside = [d for d in deliveries if 3600.0 <= d.at < 3600.0 + 900]
    assert len(inside) == 4 * len(shape)
    assert {d.at - 3600.0 for d in inside} == {offset for offset, _, _ in shape}
    assert [d.at for d in deliveries] == sorted(d.at for d in deliveries)


def test_api_gateways_throttle_fails_deliveries_the_sweep_brings_back(pem):
    """A throttle small enough to fail much of the busiest quarter hour, whose burst still takes a minute's asks
    (as the template's 200 does): every event it failed passes later, none named."""
    burst = scale.Scenario("a burst", "burst", before=900.0, trouble=900.0, after=3 * 3600.0)
    replay = scale.ScaleReplay(5_000, burst, pem=pem)
    replay.world.gateway = scale.Throttle(rate=1, burst=50)
    row = replay.run()
    c = row["counts"]
    assert row["throttled"] > 0 and c["failed"] > 0
    assert c["passed"] + c["waiting"] == c["failed"] and c["named"] == c["neither"] == 0
    assert any(f"API Gateway answered {row['throttled']:,} requests 429 (its throttle, 1 a second, a burst of 50)" in note
               for note in row["breaks"])


def test_an_event_still_followed_when_the_replay_ends_is_waiting_not_lost(pem):
    short = scale.Scenario("an outage to the end", "outage", before=900.0, trouble=1800.0, after=60.0)
    row = scale.ScaleReplay(PER_DAY, short, pem=pem).run()
    c = row["counts"]
    assert c["waiting"] > 0 and c["neither"] == 0
    assert any("still waiting their turn" in note for note in row["breaks"])
