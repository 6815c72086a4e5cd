"""The bench's replays side by side: each replay is a job, and the jobs run in a pool of processes, as
many as asked for (`make bench`: one per CPU), each job whole in one process.

A job is a module-level function and its arguments (both sent to the worker by name and value), a key
its result is filed under, and a weight: about how long it takes, so that the longest start first and
the short ones fill in at the end. What many jobs read and would be slow to send (the week's traces) is
`shared`: set here before the workers are forked, so each inherits it, and read with `shared(name)`.

A replay builds its own world (the fakes, the table, the clock) and its seeds are its own (the trace's
seed, each guid's draws), so its figures do not depend on which process runs it nor on what that
process ran before: the handlers' module-level caches (the parsed key, the redaction's forms) only
save time. Where the platform cannot fork, or one process is asked for, the jobs run one after
another in this process, with the same results.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

_SHARED: dict[str, Any] = {}


@dataclass(frozen=True)
class Job:
    key: Hashable  # where its result is filed
    run: Callable[..., Any]  # a module-level function: a worker finds it by name
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    weight: float = 1.0  # about how long it takes, in any unit common to all jobs: the heaviest start first
    label: str = ""  # for the progress lines


def shared(name: str) -> Any:
    """What the caller of `side_by_side` shared under `name` (in a worker: inherited at the fork)."""
    return _SHARED[name]


def forks() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def processes(jobs: int, work: int) -> int:
    """How many processes `side_by_side` runs `work` jobs in when asked for `jobs`."""
    return max(1, min(jobs, work)) if forks() else 1


def _timed(run: Callable[..., Any], args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[Any, float]:
    began = time.process_time()
    return run(*args, **kwargs), time.process_time() - began


def side_by_side(work: Sequence[Job], *, jobs: int, shared: Mapping[str, Any] | None = None,
                 progress: Callable[[str], None] | None = None) -> dict[Hashable, Any]:
    """Each job's result by its key, run in `processes(jobs, len(work))` processes, the heaviest first;
    `progress` (in this process) hears of each job done, with the CPU seconds it took."""
    keys = [job.key for job in work]
    if len(set(keys)) != len(keys):
        raise ValueError("two jobs with the same key")
    ordered = sorted(work, key=lambda job: -job.weight)  # a stable sort: equal weights keep the caller's order
    done: dict[Hashable, Any] = {}

    def finished(job: Job, result: Any, cpu: float) -> None:
        done[job.key] = result
        if progress:
            progress(f"done ({len(done)} of {len(work)}): {job.label or job.key} ({cpu:.1f} s CPU)")

    _SHARED.update(shared or {})
    try:
        n = processes(jobs, len(work))
        if n == 1:
            for job in ordered:
                finished(job, *_timed(job.run, job.args, job.kwargs))
        else:
            with ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context("fork")) as pool:
                futures = {pool.submit(_timed, job.run, job.args, job.kwargs): job for job in ordered}
                try:
                    for future in as_completed(futures):
                        finished(futures[future], *future.result())
                except BaseException:
                    pool.shutdown(wait=False, cancel_futures=True)  # a job failed: the others not started never start
                    raise
    finally:
        _SHARED.clear()
    return {key: done[key] for key in keys}
