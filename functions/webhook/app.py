"""WebhookFunction: POST /github (the GitHub App's webhook) and POST /telegram (button presses)."""

from pager.bootstrap import webhook_handler


def lambda_handler(event, context):
    return webhook_handler(event, context)
