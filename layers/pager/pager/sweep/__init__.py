"""The redelivery sweep (SPEC §7, the decision as amended): `plan` decides, `run` reads and acts."""

from .run import read_and_plan, run_sweep

__all__ = ["read_and_plan", "run_sweep"]
