"""WebhookFunction: POST /github (the GitHub App's webhook) and POST /telegram (button presses)."""

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from pager.bootstrap import webhook_handler


def lambda_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    return webhook_handler(event, context)
