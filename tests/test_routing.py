"""The signals table and the two lists the sweep reads: SUPERSEDED and ALWAYS_AGAIN."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from pager.signals import ALWAYS_AGAIN, SIGNALS, SUPERSEDED, acts_on, handlers, subscribed_events


def test_every_subscribed_event_is_in_exactly_one_of_superseded_and_always_again():
    events = set(subscribed_events())
    assert events, "the signals table is empty"
    unplaced = events - SUPERSEDED - ALWAYS_AGAIN
    assert not unplaced, f"put each of {sorted(unplaced)} into SUPERSEDED or ALWAYS_AGAIN in pager/signals/__init__.py"
    assert not SUPERSEDED & ALWAYS_AGAIN


def test_the_deploy_page_lists_exactly_the_events_the_app_must_subscribe_to():
    readme = (Path(__file__).resolve().parents[1] / "docs" / "deploy.md").read_text()
    section = readme.split("<!-- events -->")[1].split("<!-- /events -->")[0]
    listed = set(re.findall(r"`([a-z_]+)`", section))
    assert listed == set(subscribed_events())


def test_check_suite_completed_runs_the_alarm_then_the_release_and_an_unknown_action_nothing():
    from pager.signals import alarm, release

    assert handlers("check_suite", "completed") == (alarm.check_suite, release.check_suite)
    assert handlers("issues", "labeled") == () and handlers("push", None) == ()
    assert acts_on("issues", "opened") and not acts_on("workflow_run", "in_progress")


def test_the_table_is_complete_whatever_is_imported_first():
    # A fresh interpreter that imports the webhook alone sees every signal (no import for side effects).
    code = "import pager.webhook, pager.signals as s; print(len(s.SIGNALS))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert int(out) == len(SIGNALS) > 20
