"""The signals: what pager does with each webhook event it subscribes to (SPEC §5).

Importing this package registers every handler in `pager.routing.registry`:

    contribution   outside contributions: one message, one pager-draft dispatch; closed or answered edits it
    alarm          one message per repository with its failing entries; 🛠 Start fix; `update_alarm` for the sweep
    release        release pull requests: one message, 🔀 Merge once ready, the merge and its tag recorded once

All of them follow one pattern (`records`): the record of the thing, a pure decision, each external
effect claimed before and recorded right after it happens, so a delivery may come twice and late.
"""

from . import alarm, contribution, release  # noqa: F401
