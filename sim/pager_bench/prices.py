"""AWS list prices the benchmark turns counts into dollars with, in one place (us-east-1, the
CloudWatch pricing page at aws.amazon.com/cloudwatch/pricing; the free tier left out, so that a figure
holds for an account that already uses it).
"""

HOURS_PER_MONTH = 730  # how AWS prorates a monthly price by the hour

CUSTOM_METRIC_MONTH = 0.30  # $ per custom metric and month (first 10,000), prorated by the hour it gets data
ALARM_METRIC_MONTH = 0.10  # $ per metric of a standard-resolution alarm and month


def metric_hours_cost(metric_hours: float) -> float:
    """$ for custom metrics that got data in this many (metric, hour) pairs."""
    return metric_hours * CUSTOM_METRIC_MONTH / HOURS_PER_MONTH
