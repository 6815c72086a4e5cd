"""`make bench`: a busy fleet's week on a virtual clock, through the real webhook handler and the real sweep.

    python -m pager_bench [--days 7] [--seed 1] [--jobs N] [--traces full,subscribed] [--out docs/benchmarks.md]

    fleet         the fleet's trace: every event GitHub sends in the week, and the faults around them; its
                  copy with only the events the app subscribes to (`only`)
    alternatives  the two sweeps pager's is compared with: the decision's first design, GitHub's script
    simulate      replaying a trace with one sweep design (pager with and without the every-minute
                  recovery check, or an alternative) through the real handler and sweep, on the fake world
                  of `pager_world` (FakeGitHub, FakeTelegram, the in-memory table counted)
    measure       the figures of one replay, from GitHub's attempts, the table and the runs (definitions
                  in its docstring)
    bill          what AWS would bill for a replay, from the requests counted in it
    prices        the AWS list prices, in one place, with their pages
    costs         the webhook handler's cost and table round trips per delivery, the modules an ignored
                  delivery loads, and the cold start of both functions (first invocation included)
    replays       every replay of the run (the designs, quiet hours and each rest, the long outages, the
                  burst, the scale table) as one list of jobs, which `jobs` runs side by side, a process
                  each, one per CPU (`--jobs`); the measures of time run after them, alone
    report        docs/benchmarks.md: the tables, and each target with its measured value, met or not met;
                  `report.report` puts the sections in order, each a module `*_report` of its own (the
                  trace, what users feel, the sweeps compared, each fault, long outages, custom metrics,
                  the bill, the targets, the phone, the hot path, the handler's cost, the cold start, how
                  to read it, a busy fleet's size), and `markdown` holds what they share
    __main__      the command line

Never deployed: like `pager_world`, it only stands around pager's real code.
"""
