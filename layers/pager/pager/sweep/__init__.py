"""The redelivery sweep (README, "Operating the sweep"): `plan` decides, `run` reads and acts."""

from .run import read_and_plan, run_sweep

__all__ = ["read_and_plan", "run_sweep"]
