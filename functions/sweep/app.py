"""SweepFunction: every 15 minutes, ask GitHub to deliver again what failed (SPEC §7)."""

from pager.bootstrap import sweep_handler


def lambda_handler(event, context):
    return sweep_handler(event, context)
