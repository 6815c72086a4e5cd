"""The failure matrix: a step failed at each of its calls in turn, then done again, ends as undisturbed.

`failure_matrix` runs a scenario undisturbed, then once for every call of its last step (`act`) and
every fault that call can meet (`faults.FAULTS_BY_SERVICE`): the step must answer 500 (or, for the
table's trouble at recording an effect, absorb it by trying again), leave no claim behind, and,
done again, end in exactly the undisturbed state: the same records, chat, dispatches and merges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .faults import FAULTS_BY_SERVICE
from .world import World


@dataclass
class Scenario:
    """A signal's case: `setup` brings the state before, `act` is the delivery (or press) under test.

    `act` returns the answer's status. `again` does it once more after a failure (by default `act`
    itself); a press failed at its action is pressed anew, so it has its own `again`. `faults`: the faults
    each service's calls meet, when not all of `FAULTS_BY_SERVICE` (a command's answer gives way to pages at
    Telegram's flood limit, by design: its own test says what then happens).
    """

    name: str
    setup: Callable[[World], Any]
    act: Callable[[World], int]
    again: Callable[[World, int], int] | None = None
    presses: bool = True  # compare press records too (not when a press is made anew)
    faults: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: FAULTS_BY_SERVICE)


@dataclass
class MatrixReport:
    calls: list[tuple[str, str]] = field(default_factory=list)
    failed: list[tuple[int, str, tuple[str, str]]] = field(default_factory=list)
    absorbed: list[tuple[int, str, tuple[str, str]]] = field(default_factory=list)


def delivering(event: str, body: dict[str, Any]) -> Callable[[World], int]:
    """A scenario's act: deliver this body; the webhook's status."""
    return lambda w: w.deliver(event, body)[0]


def undisturbed(make: Callable[..., World], scenario: Scenario) -> tuple[World, list[tuple[str, str]]]:
    w = make()
    scenario.setup(w)
    start = len(w.faults.log)
    status = scenario.act(w)
    assert status == 200, f"{scenario.name}: the undisturbed delivery answered {status}"
    assert not w.pending_claims()
    return w, w.faults.log[start:]


def failure_matrix(make: Callable[..., World], scenario: Scenario) -> MatrixReport:
    """Fail each call of `scenario.act` in turn with each fault it can meet, then do it again."""
    base, calls = undisturbed(make, scenario)
    expected = base.snapshot(presses=scenario.presses)
    report = MatrixReport(calls=calls)
    assert calls, f"{scenario.name}: the step made no external call"
    for index, (service, name) in enumerate(calls):
        for kind in scenario.faults[service]:
            w = make()
            scenario.setup(w)
            fired = len(w.faults.fired)
            w.faults.fail_call(index, kind)
            status = scenario.act(w)
            assert w.faults.fired[fired:] == [(service, name)], (
                f"{scenario.name}: call {index} was {(service, name)} undisturbed, the fault met {w.faults.fired[fired:]}"
            )
            where = f"{scenario.name}: {kind} at call {index} ({service} {name})"
            if status == 200:
                # Only the table's trouble at recording an effect may be absorbed (it is tried again).
                assert service == "store", f"{where} answered 200"
                report.absorbed.append((index, kind, (service, name)))
            else:
                assert status == 500, f"{where} answered {status}"
                report.failed.append((index, kind, (service, name)))
                assert not w.pending_claims(), f"{where} left a claim behind"
                again = scenario.again or (lambda ww, _status: scenario.act(ww))
                assert again(w, status) == 200, f"{where}: doing it again did not pass"
            assert w.snapshot(presses=scenario.presses) == expected, f"{where}: the end state differs from an undisturbed run"
    return report
