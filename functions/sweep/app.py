"""SweepFunction: every 15 minutes, ask GitHub to deliver again what failed."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from pager.bootstrap import sweep_handler


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return sweep_handler(event, context)
