"""The redelivery sweep (SPEC §7, the decision as amended): `plan` decides, `run` reads and acts."""

from .run import run_sweep

__all__ = ["run_sweep"]
