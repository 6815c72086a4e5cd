"""Structured logs and EMF metrics, through Powertools; and the libraries kept from logging secrets.

One logger and one metrics object for the package; both only write to stdout (CloudWatch picks it
up), so creating them at import does no I/O. Metrics are flushed once per invocation by the entry
points in `pager.bootstrap`.

Whatever level Lambda or the root logger is set to (LogLevel=DEBUG included), the HTTP and AWS
libraries are held at WARNING: at DEBUG, botocore logs whole answers (GetSecretValue's among them)
and urllib3 each request line, whose path carries the Telegram bot token. pager's own lines never
hold a secret, a token or a signature.
"""

from __future__ import annotations

import logging
import os

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "pager"))
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Pager"), service="pager")

__all__ = ["logger", "metrics", "MetricUnit", "flush_metrics", "quiet_libraries"]

QUIET_LIBRARIES = ("botocore", "boto3", "s3transfer", "urllib3", "requests")


def quiet_libraries() -> None:
    """Hold the HTTP and AWS libraries at WARNING or above, whatever the root logger's level."""
    for name in QUIET_LIBRARIES:
        library = logging.getLogger(name)
        if library.level == logging.NOTSET or library.level < logging.WARNING:
            library.setLevel(logging.WARNING)


quiet_libraries()


def flush_metrics() -> None:
    """Print this invocation's EMF metrics, if it recorded any."""
    if metrics.provider.metric_set:
        metrics.flush_metrics()
