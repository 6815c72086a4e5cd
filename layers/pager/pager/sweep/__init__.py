"""The redelivery sweep (docs/sweep.md): three units, each gathering, planning with no I/O, and folding what
happened into its own item: `deliveries` (the decision), `health` (pager's own), `recovery` (holds); `run`
gathers, performs and saves, every 15 minutes and at once after an outage; `run.check` every minute."""

from .run import check, run_sweep

__all__ = ["check", "run_sweep"]
