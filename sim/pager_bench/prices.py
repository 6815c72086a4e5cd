"""AWS list prices the benchmark turns counts into dollars with, in one place: US East (N. Virginia),
x86, the first tier of each (pager's volumes never leave it). Each price names its pricing page.

The free tier is left out of every price, so that a figure holds for an account that already uses
it; `FREE_TIER` lists what the always-free allowances (per account and month, never expiring) and
the offers for new accounts would cover, and the report says so beside each line.
"""

HOURS_PER_MONTH = 730  # how AWS prorates a monthly price by the hour
HOURS_PER_WEEK = 7 * 24
WEEKS_PER_MONTH = HOURS_PER_MONTH / HOURS_PER_WEEK

# -- AWS Lambda (aws.amazon.com/lambda/pricing/) ------------------------------------------------------
LAMBDA_REQUEST = 0.20 / 1_000_000  # $ per request (invocation)
LAMBDA_GB_SECOND = 0.0000166667  # $ per GB-second, x86, first 6 billion GB-seconds a month
# Duration is billed in 1 ms increments; since 2025-08-01 the INIT phase of a cold start is billed as
# duration for ZIP functions on managed runtimes too (aws.amazon.com/blogs/compute/
# aws-lambda-standardizes-billing-for-init-phase/).
LAMBDA_BILLING_MS = 1.0
# Lambda's CPU share grows with memory: "at 1,769 MB, a function has the equivalent of one vCPU"
# (docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
LAMBDA_ONE_VCPU_MB = 1769

# -- Amazon API Gateway, HTTP APIs (aws.amazon.com/api-gateway/pricing/) -----------------------------
HTTP_API_REQUEST = 1.00 / 1_000_000  # $ per request, first 300 million a month
HTTP_API_METERED_BYTES = 512 * 1024  # "HTTP APIs are metered in 512 KB increments"

# -- Amazon DynamoDB, on-demand (aws.amazon.com/dynamodb/pricing/on-demand/; the November 2024 prices)
DYNAMODB_WRITE_UNIT = 0.625 / 1_000_000  # $ per write request unit: a standard write of up to 1 KB
DYNAMODB_READ_UNIT = 0.125 / 1_000_000  # $ per read request unit: a strongly consistent read of up to 4 KB
DYNAMODB_WRITE_UNIT_BYTES = 1024
DYNAMODB_READ_UNIT_BYTES = 4096
DYNAMODB_STORAGE_GB_MONTH = 0.25  # $ per GB-month of table storage (the first 25 GB a month are free)
DYNAMODB_PITR_GB_MONTH = 0.20  # $ per GB-month of continuous backups (point-in-time recovery)
# Encryption at rest: DynamoDB's AWS owned key (the template's SSEEnabled: false) costs neither a monthly fee nor
# a usage fee ("DynamoDB encryption at rest: How it works"); with the AWS managed key aws/dynamodb "AWS KMS
# charges apply" ("Managing encrypted tables in DynamoDB"): KMS's price per request below.
DYNAMODB_OWNED_KEY = 0.0

# -- AWS Secrets Manager (aws.amazon.com/secrets-manager/pricing/), for a template that has a secret ---
SECRET_MONTH = 0.40  # $ per secret and month, prorated by the hour
SECRETS_API_CALL = 0.05 / 10_000  # $ per API call (GetSecretValue)

# -- AWS Systems Manager Parameter Store (docs.aws.amazon.com/systems-manager/latest/userguide/
# parameter-store-advanced-parameters.html): a standard parameter, "no additional charge", and the
# standard throughput of GetParameter too; a SecureString encrypted with the AWS managed key aws/ssm,
# whose storage is free, each decryption a KMS request (aws.amazon.com/kms/pricing/) -----------------
PARAMETER_API_CALL = 0.0  # $ per GetParameter, standard throughput
KMS_REQUEST = 0.03 / 10_000  # $ per KMS request (a Decrypt of the SecureString)

# -- Amazon CloudWatch (aws.amazon.com/cloudwatch/pricing/) ------------------------------------------
CUSTOM_METRIC_MONTH = 0.30  # $ per custom metric and month (first 10,000), prorated by the hour it gets data
ALARM_METRIC_MONTH = 0.10  # $ per metric of a standard-resolution alarm and month (a metric-math alarm: each metric)
DASHBOARD_MONTH = 3.00  # $ per custom dashboard and month
LOGS_INGESTED_GB = 0.50  # $ per GB ingested: Standard class, and the first tier of Lambda's vended logs
LOGS_STORED_GB_MONTH = 0.03  # $ per GB-month archived

# -- Amazon EventBridge (aws.amazon.com/eventbridge/pricing/) ----------------------------------------
# A scheduled rule's events come from AWS itself (source aws.events) on the default bus: events that
# AWS services publish are not charged. (Were they charged as custom events, $1.00 per million.)
EVENTBRIDGE_SCHEDULED_EVENT = 0.0

# What the free tier would cover, per account and month: (allowance, unit, whether it never expires).
FREE_TIER = {
    "lambda_requests": (1_000_000, "requests", True),
    "lambda_gb_seconds": (400_000, "GB-seconds", True),
    "http_api_requests": (1_000_000, "requests", False),  # the first 12 months of an account opened before
    # 15 July 2025 only; one opened since gets sign-up credits instead (AWS's Free Tier, since that day)
    "dynamodb_storage_gb": (25, "GB", True),
    "secrets": (1, "secret for its first 30 days", False),  # a free trial per secret
    "kms_requests": (20_000, "requests", True),
    "custom_metrics": (10, "metrics", True),
    "alarm_metrics": (10, "alarm metrics", True),
    "dashboards": (3, "dashboards", True),
    "logs_gb": (5, "GB ingested, archived and scanned", True),
}


# The pricing pages the prices above come from, and what the report lists of each.
SOURCES = [
    ("Lambda", "aws.amazon.com/lambda/pricing", f"${LAMBDA_REQUEST * 1e6:.2f} per million requests, "
     f"${LAMBDA_GB_SECOND:.10f} per GB-second (x86), billed per {LAMBDA_BILLING_MS:g} ms, the INIT phase included"),
    ("API Gateway", "aws.amazon.com/api-gateway/pricing", f"${HTTP_API_REQUEST * 1e6:.2f} per million HTTP API requests, "
     f"metered in {HTTP_API_METERED_BYTES // 1024} KB increments"),
    ("DynamoDB", "aws.amazon.com/dynamodb/pricing/on-demand", f"${DYNAMODB_WRITE_UNIT * 1e6:.3f} per million write "
     f"request units, ${DYNAMODB_READ_UNIT * 1e6:.3f} per million read request units, ${DYNAMODB_STORAGE_GB_MONTH:.2f} "
     f"per GB-month stored, ${DYNAMODB_PITR_GB_MONTH:.2f} per GB-month of point-in-time recovery; encryption at rest "
     "with the AWS owned key: no charge (with the AWS managed key aws/dynamodb: KMS requests)"),
    ("Parameter Store", "docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html",
     "standard parameters and standard throughput: no additional charge"),
    ("KMS", "aws.amazon.com/kms/pricing", f"${KMS_REQUEST * 1e4:.2f} per 10,000 requests; the AWS managed key "
     "aws/ssm: no monthly charge"),
    ("Secrets Manager (the choice not taken)", "aws.amazon.com/secrets-manager/pricing", f"${SECRET_MONTH:.2f} per "
     f"secret-month, ${SECRETS_API_CALL * 1e4:.2f} per 10,000 API calls"),
    ("CloudWatch", "aws.amazon.com/cloudwatch/pricing", f"${CUSTOM_METRIC_MONTH:.2f} per custom metric-month, "
     f"${ALARM_METRIC_MONTH:.2f} per alarm metric-month (standard resolution), ${DASHBOARD_MONTH:.2f} per "
     f"dashboard-month, ${LOGS_INGESTED_GB:.2f} per GB of logs ingested, ${LOGS_STORED_GB_MONTH:.2f} per GB-month archived"),
    ("EventBridge", "aws.amazon.com/eventbridge/pricing", "scheduled rules' events (AWS's own events): no charge"),
]


def metric_hours_cost(metric_hours: float) -> float:
    """$ for custom metrics that got data in this many (metric, hour) pairs."""
    return metric_hours * CUSTOM_METRIC_MONTH / HOURS_PER_MONTH
