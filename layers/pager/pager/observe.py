"""Structured logs and EMF metrics, through Powertools; and the libraries kept from logging secrets.

One logger and one metrics object for the package; both only write to stdout (CloudWatch picks it
up), so creating them at import does no I/O. The entry points in `pager.bootstrap` are decorated as
Powertools' users expect: `logger.inject_lambda_context` (the request id and cold start on every line)
and `metrics.log_metrics` (flushed once per invocation).

Whatever level Lambda or the root logger is set to (LogLevel=DEBUG included), the HTTP and AWS
libraries are held at WARNING: at DEBUG, botocore logs whole answers (GetSecretValue's among them)
and urllib3 each request line, whose path carries the Telegram bot token. pager's own lines never
hold a secret, a token or a signature.
"""

from __future__ import annotations

import logging
import os
import warnings

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "pager"))
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Pager"), service="pager")

__all__ = ["logger", "metrics", "MetricUnit", "count", "quiet_libraries", "METRICS"]

# Most invocations publish no metric (only what is not zero is published): Powertools' `log_metrics`
# would warn of each such flush on stderr, a line with no level that the JSON logs do not filter.
warnings.filterwarnings("ignore", message="No application metrics to publish", category=UserWarning)

# Every custom metric pager publishes, and what it is for: each feeds an alarm of the template (the
# second channel, when Telegram is the problem). CloudWatch bills a custom metric for each hour it gets
# data, so only `SweepCompleted` (the dead man's switch: its absence is the signal) is published every
# run; the others only when they are not zero. What API Gateway and Lambda measure for free (requests,
# 4xx, 5xx, errors, durations) is not published again; the dashboard reads the rest from the logs.
METRICS = {
    "SweepCompleted": "a sweep run that read GitHub's lists and committed its plan (alarm: none for an hour)",
    "ReachGaps": "lists a sweep run could not read back far enough (alarm: any)",
    "AlarmNotChanged": "a sweep run whose change of the control repository's alarm Telegram did not take (alarm: any)",
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
