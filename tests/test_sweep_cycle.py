"""A sweep run's whole plan (pager.sweep.cycle.plan_cycle), pure: its phases together keep the decision's
caps. Hypothesis generates what a run gathered: failed events to ask for again, a ↻ job of refused
deliveries with its next page, ↻ all waiting over the alarm's failed-delivery entries, calls used already.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from pager.settings import Settings
from pager.sweep import cycle
from pager.sweep import health as own
from pager.sweep import plan as planner
from pager.sweep.plan import ALARM_CALLS, Attempt, ListRead, State
from pager.values import iso

NOW = 1_800_000_000.0


def settings(budget: int) -> Settings:
    return Settings(table="t", github_app_id="1", github_app_slug="s", github_private_key="k", github_webhook_secret="w",
                    telegram_bot_token="b", telegram_webhook_secret="x", telegram_chat_id="-1001",
                    control_repository="maintainer/pager", sweep_call_budget=budget)


def gathered(failed: int, refused: int, entries: int, calls_used: int, again_all: bool, works: bool) -> cycle.Gathered:
    failures = tuple(Attempt(1000 + n, f"f{n}", NOW - 600 - n, False, 502, "issues", "opened", 1) for n in range(failed))
    page = tuple(Attempt(500 + n, f"r{n}", NOW - 3000 - n, False, 401, "issues", "opened", 1) for n in range(refused))
    shown = {f"delivery:e{n}": {"state": "open", "title": "t", "order": iso(NOW - 7200 - n), "delivery_id": 100 + n}
             for n in range(entries)}
    health = own.Health(secret_count=refused, secret_first=NOW - 4000, secret_last=NOW - 3000, secret_works=works)
    state = State(cursor=(999, NOW - 900), health=health.to_data())
    reading = planner.Reading(planner.FAILURES, "failure", 3, NOW - 3 * 3600)
    job = own.Job(since=NOW - 5000, asked_at=NOW - 100)
    return cycle.Gathered(
        state=state, failures=ListRead(failures, 1), failure_reading=reading, outcomes=ListRead(failures, 1),
        all_reading=planner.Reading(planner.ALL, None, 20, NOW - 3 * 3600, 999), shown=shown, refusals=(),
        refusers_answer=False, job=job, job_page=cycle.JobPage(page, None), again_all=again_all, moved=None,
        waiting=None, hold=False, event_id=None, calls_used=calls_used)


@hypothesis_settings(max_examples=150, deadline=None)
@given(failed=st.integers(0, 25), refused=st.integers(0, 25), entries=st.integers(0, 25), calls_used=st.integers(0, 40),
       budget=st.integers(15, 60), again_all=st.booleans(), works=st.booleans())
def test_the_plans_redeliveries_the_jobs_picks_and_all_again_stay_within_the_cap_and_the_budget(
        failed, refused, entries, calls_used, budget, again_all, works):
    config = settings(budget)
    out = cycle.plan_cycle(gathered(failed, refused, entries, calls_used, again_all, works), settings=config, now=NOW,
                           acts_on=lambda event, action: True)
    asked = len(out.plan.redeliver) + len(out.picked) + len(out.again_all)
    assert asked <= config.sweep_max_redeliveries
    assert not (out.picked or out.again_all) or calls_used + asked + ALARM_CALLS <= budget
    assert not out.picked or works  # nothing refused is asked for while it would be refused again
    assert not out.again_all or again_all
    guids = [r.guid for r in out.plan.redeliver] + [a.guid for a in out.picked]
    assert len(guids) == len(set(guids))  # no event asked for twice in a run
    if out.picked:  # each pick followed from now on, and awaited
        assert {a.guid for a in out.picked} <= {a.guid for a in out.plan.state.followed}
        assert {a.guid for a in out.picked} <= {g for g, _, _ in out.plan.state.asked}


def test_the_phases_share_one_run_s_ten_redeliveries_in_their_order():
    out = cycle.plan_cycle(gathered(failed=4, refused=5, entries=6, calls_used=0, again_all=True, works=True),
                           settings=settings(50), now=NOW, acts_on=lambda event, action: True)
    # the failed events first, then the ↻ job's refused ones, then ↻ all's entries with what is left
    assert (len(out.plan.redeliver), len(out.picked), len(out.again_all)) == (4, 5, 1)
    assert out.again_all_pending and out.job is not None and out.job.done == 5
