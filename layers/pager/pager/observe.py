"""Structured logs and EMF metrics, through Powertools; and logs that never carry a secret.

One logger and one metrics object for the package; both only write to stdout (CloudWatch picks it
up), so creating them at import does no I/O. The entry points in `pager.bootstrap` are decorated as
Powertools' users expect: `logger.inject_lambda_context` (the request id and cold start on every line)
and `metrics.log_metrics` (flushed once per invocation).

Importing this module installs `pager.redact` at the root of logging: every record of every logger
(pager's, urllib3's, botocore's, requests', the root's) is redacted when it is made, its message, its
exception and its `extra=` fields, before any filter or handler sees it: the bot token (`POST
/bot[redacted]/sendMessage`), the webhook secrets and the private key once the settings are read, and
by their form JWTs, GitHub's tokens, Authorization headers, webhook signatures and Telegram's secret
token. It is done in logging's record factory rather than by a filter because a logger's filters do not
see its children's records and a handler's only cover that handler, while Lambda's runtime, Powertools
or an operator may add handlers at any time; each of them only ever gets records made by the factory.
So a logger set to DEBUG by hand (`logging.getLogger("urllib3").setLevel(logging.DEBUG)`, LogLevel=DEBUG,
`make serve`, `pager setup` or `pager doctor` with logging configured) shows no secret. What `warnings`
shows is a record of logging's too (logger `py.warnings`, at WARNING), so redacted: in Lambda a line of
the function's log with its level, where nothing is configured (the command line) on stderr as before.
The functions, the command line and `make serve` import this module before they do anything else.

Whatever level Lambda or the root logger is set to (LogLevel=DEBUG included), the HTTP and AWS
libraries are still held at WARNING (`quiet_libraries`): at DEBUG, botocore logs whole answers (the
table's items, the secret's parameter among them) and urllib3 each request line. The redaction keeps
secrets out of those lines; holding the libraries back keeps the volume, the cost and the rest of
what those answers hold (repositories, events, the table's content) out of CloudWatch. A library set
to DEBUG after pager is imported logs at DEBUG, redacted. pager's own lines are written never to hold a
secret in the first place; the redaction is the guard behind that, and behind every library.
"""

from __future__ import annotations

import logging
import os
import warnings

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from . import redact

# Before the logger below is made: every record from now on, its own included, is redacted.
redact.install()

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "pager"))
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Pager"), service="pager")

__all__ = ["logger", "metrics", "MetricUnit", "count", "quiet_libraries", "METRICS"]

# Most invocations publish no metric (only what is not zero is published): Powertools' `log_metrics`
# would warn of each such flush, a `py.warnings` line in the function's log on every invocation (the
# filter acts before the warning is shown, whether on stderr or through logging).
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)

# Every custom metric pager publishes, and what it is for: each feeds an alarm of the template (the
# second channel, when Telegram is the problem). CloudWatch bills a custom metric for each hour it gets
# data, so only `SweepCompleted` (the dead man's switch: its absence is the signal) is published every
# run; the others only when they are not zero. What API Gateway and Lambda measure for free (requests,
# 4xx, 5xx, errors, durations) is not published again; the dashboard reads the rest from the logs.
METRICS = {
    "SweepCompleted": "a sweep run that read GitHub's lists and committed its plan (alarm: none for an hour)",
    "ReachGaps": "lists a sweep run could not read back far enough (alarm: any)",
    "AlarmNotChanged": "a sweep run whose change of ⚙️ pager Telegram did not take (alarm: any)",
    "DeliveriesRefusedUpstream": "a delivery whose signal GitHub or Telegram refused for good (alarm: any)",
}

QUIET_LIBRARIES = ("botocore", "boto3", "s3transfer", "urllib3", "requests")


def quiet_libraries() -> None:
    """Hold the HTTP and AWS libraries at WARNING or above, whatever the root logger's level."""
    for name in QUIET_LIBRARIES:
        library = logging.getLogger(name)
        if library.level == logging.NOTSET or library.level < logging.WARNING:
            library.setLevel(logging.WARNING)


quiet_libraries()


def count(name: str, value: float = 1) -> None:
    """Add to one of `METRICS`; zero publishes nothing."""
    if name not in METRICS:
        raise ValueError(f"not a metric of pager's: {name}")
    if value:
        metrics.add_metric(name=name, unit=MetricUnit.Count, value=value)
