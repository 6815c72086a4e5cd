"""Structured logs and EMF metrics, through Powertools.

One logger and one metrics object for the package; both only write to stdout (CloudWatch picks it
up), so creating them at import does no I/O. Metrics are flushed once per invocation by the entry
points in `pager.bootstrap`.
"""

from __future__ import annotations

import os

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

logger = Logger(service=os.environ.get("POWERTOOLS_SERVICE_NAME", "pager"))
metrics = Metrics(namespace=os.environ.get("POWERTOOLS_METRICS_NAMESPACE", "Pager"), service="pager")

__all__ = ["logger", "metrics", "MetricUnit", "flush_metrics"]


def flush_metrics() -> None:
    """Print this invocation's EMF metrics, if it recorded any."""
    if metrics.provider.metric_set:
        metrics.flush_metrics()
