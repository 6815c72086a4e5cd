"""The stack's AWS bill for a replay: what each service would charge, from the requests counted in it.

Counted in the replay (`pager_bench.simulate`), per Lambda function (`webhook`, `sweep`):
- Lambda: every invocation (a delivery through API Gateway; a scheduled run; a recovery check), and
  its billed duration, modelled: the CPU time the handler took here (time inside the fake GitHub and
  Telegram left out) scaled to the share of a vCPU a 512 MB function gets, plus one round trip per call
  to GitHub, Telegram, the table and the secrets' store (`ROUND_TRIP`, an assumption, not a measure), plus
  the virtual time the handler waited (a Telegram 429), rounded up to the millisecond; and the cold
  starts of an `Environments` model, priced with the cold start `costs.cold_imports` measures;
- API Gateway: a request per delivery, metered per 512 KB of its body;
- DynamoDB: read and write request units of each load, query and write, by the item's size
  (`MeteredStore`), and the table's size at the end (storage and point-in-time recovery); its encryption
  at rest as template.yaml chooses it: the AWS owned key, free and without KMS requests, or the AWS
  managed key aws/dynamodb, whose KMS requests are modelled (beside `MANAGED_KEY`);
- the secrets: a read per new execution environment and whenever a warm one reads its settings again
  (`pager.bootstrap.SETTINGS_REFRESH_SECONDS`; Powertools caches the secret for as long). The stack
  keeps them in a Parameter Store SecureString (no charge for the parameter nor the GetParameter; a KMS
  request for each decryption); a template with a Secrets Manager secret would pay for it and its calls;
- CloudWatch Logs: the bytes of every log line and EMF blob the functions wrote (`LogMeter`), kept for
  the template's retention; custom metrics: the (metric, hour) pairs published; alarms, alarm metrics
  and dashboards: read from template.yaml, as a deployment with the parameters' defaults has them (a
  resource whose condition is false by default, such as the dashboard, is not billed).

`weekly` turns those counts into dollars per week at the list prices of `prices`.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pager.store import ROOT_ITEM, encode
from pager_world.store import FaultyStore

from . import prices

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = ("webhook", "sweep")

# Modelled round trips from Lambda in us-east-1, in seconds: what a call waits for besides the CPU it
# takes. Assumptions, not measures (nothing here talks to the real services); they weigh little in the
# bill (see the report's duration line, which shows CPU and waiting apart).
ROUND_TRIP = {"github": 0.100, "telegram": 0.100, "table": 0.005, "secret": 0.030}

# With the AWS managed key aws/dynamodb, DynamoDB asks KMS to decrypt the table key for each connection, and
# again for one that comes back after five minutes ("How Amazon DynamoDB uses AWS KMS": table key caching; the
# DynamoDB guide's "Encryption at rest: How it works" says once every five minutes per caller with active
# traffic). Modelled as a request per environment when it starts and again at its first invocation five
# minutes later: the schedule `Environments` counts the secret's reads on while pager.bootstrap reads its
# settings every 300 seconds. An upper bound: an environment that only answered ignored deliveries never
# reached the table. With the AWS owned key (template.yaml's choice) there is no such request.
OWNED_KEY, MANAGED_KEY = "AWS owned key", "AWS managed key aws/dynamodb"

# Lambda keeps an idle execution environment for a while before it reclaims it; AWS does not say how
# long (observed: minutes). The model reclaims one idle this long.
ENVIRONMENT_IDLE_SECONDS = 600.0


# ------------------------------------------------------------------------------ Lambda, per function


@dataclass
class Environments:
    """Lambda's execution environments of one function, as a model: an invocation takes an idle warm
    environment (the one used last), or starts a new one (a cold start) when all are busy or reclaimed.
    Each environment reads the secret when it starts and again `refresh` seconds later, at its first
    invocation after that."""

    refresh: float
    idle: float = ENVIRONMENT_IDLE_SECONDS
    free_at: list[float] = field(default_factory=list)  # per environment: when its invocation ends
    read_at: list[float] = field(default_factory=list)  # per environment: when it last read the secret
    cold_starts: int = 0
    secret_reads: int = 0
    current: int = 0  # the environment of the invocation under way

    def start(self, at: float) -> bool:
        """An invocation begins at `at`: take an environment (busy until `end`); whether it reads the secret."""
        alive = [k for k, free in enumerate(self.free_at) if at - free <= self.idle]
        if len(alive) < len(self.free_at):
            self.free_at = [self.free_at[k] for k in alive]
            self.read_at = [self.read_at[k] for k in alive]
        idle = [k for k, free in enumerate(self.free_at) if free <= at]
        if not idle:
            self.cold_starts += 1
            self.secret_reads += 1
            self.free_at.append(math.inf)
            self.read_at.append(at)
            self.current = len(self.free_at) - 1
            return True
        self.current = max(idle, key=lambda k: self.free_at[k])
        self.free_at[self.current] = math.inf
        if at - self.read_at[self.current] >= self.refresh:
            self.read_at[self.current] = at
            self.secret_reads += 1
            return True
        return False

    def end(self, at: float) -> None:
        """The invocation under way ends at `at`: its environment is idle from then on."""
        self.free_at[self.current] = at


@dataclass
class Invocations:
    """One function's invocations: how many, their billed milliseconds, and what those are made of."""

    environments: Environments
    count: int = 0
    billed_ms: int = 0
    cpu_seconds: float = 0.0  # measured here, scaled to the function's share of a vCPU
    wait_seconds: float = 0.0  # modelled round trips, and waits on the virtual clock
    calls: Counter[str] = field(default_factory=Counter)

    def add(self, at: float, *, cpu: float, calls: Mapping[str, int], waited: float, memory_mb: int) -> None:
        secret = self.environments.start(at)
        scaled = cpu * max(1.0, prices.LAMBDA_ONE_VCPU_MB / memory_mb)
        trips = dict(calls, secret=int(secret))
        wait = waited + sum(n * ROUND_TRIP[name] for name, n in trips.items())
        seconds = scaled + wait
        self.count += 1
        self.billed_ms += max(1, math.ceil(seconds * 1000 / prices.LAMBDA_BILLING_MS))
        self.cpu_seconds += scaled
        self.wait_seconds += wait
        self.calls.update(trips)
        self.environments.end(at + seconds)

    def to_data(self) -> dict[str, Any]:
        return {"invocations": self.count, "billed_ms": self.billed_ms, "cpu_seconds": self.cpu_seconds,
                "wait_seconds": self.wait_seconds, "cold_starts": self.environments.cold_starts,
                "secret_reads": self.environments.secret_reads, "calls": dict(self.calls)}


class LogMeter:
    """A stream that counts the bytes written to it, per function (`function` says whose they are)."""

    def __init__(self) -> None:
        self.bytes: Counter[str] = Counter()
        self.function = "webhook"

    def write(self, text: str) -> int:
        self.bytes[self.function] += len(text.encode())
        return len(text)

    def flush(self) -> None:
        pass


# ------------------------------------------------------------------------------------------ DynamoDB


def _number_bytes(value: int) -> int:
    """A DynamoDB number's size: about one byte per two significant digits, plus one."""
    return (len(str(abs(int(value)))) + 1) // 2 + 1


def item_bytes(key: str, item: str, text: str, version: int, expires_at: int | None = None) -> int:
    """The size DynamoDB bills an item of pager's table by (pager.dynamo): the attribute names and
    values of `pk`, `sk`, `version`, `data` and `ttl`."""
    size = len("pk") + len(key.encode()) + len("sk") + len((item or ROOT_ITEM).encode())
    size += len("version") + _number_bytes(version) + len("data") + len(text.encode())
    if expires_at is not None:
        size += len("ttl") + _number_bytes(expires_at)
    return size


def read_units(size: int) -> int:
    """Read request units of a strongly consistent read (pager reads consistently) of `size` bytes."""
    return max(1, math.ceil(size / prices.DYNAMODB_READ_UNIT_BYTES))


def write_units(size: int) -> int:
    return max(1, math.ceil(size / prices.DYNAMODB_WRITE_UNIT_BYTES))


class MeteredStore(FaultyStore):
    """The replay's table, counting DynamoDB's request units besides FaultyStore's loads and writes: a
    load reads the item (an absent one still costs a unit), a query the items it returns (rounded up
    to 4 KB all together), a read of several (BatchGetItem) each item as a load does, a write the new item
    (a lost conditional write is billed too), a write of several (TransactWriteItems) twice each item, a
    check too (DynamoDB prepares and commits each item of a transaction: two of its writes; for a check,
    an upper bound)."""

    def __init__(self, faults: Any, inner: Any = None) -> None:
        super().__init__(faults, inner)
        self.read_units = 0
        self.write_units = 0
        # (key, item) -> (version, the size a read counts): a version's data never changes, so each is sized
        # once (from the text its write stored), not again at every read (a check reads every item of a key).
        self.sizes: dict[tuple[str, str], tuple[int, int]] = {}

    def _size(self, record: Any) -> int:
        known = self.sizes.get((record.key, record.item))
        if known is not None and known[0] == record.version:
            return known[1]
        size = item_bytes(record.key, record.item, encode(record.data), record.version)
        self.sizes[(record.key, record.item)] = (record.version, size)
        return size

    def load(self, key: str, item: str = "") -> Any:
        record = super().load(key, item)
        self.read_units += read_units(self._size(record) if record.version else 0)
        return record

    def items(self, key: str, after: str = ROOT_ITEM) -> list[Any]:
        records = super().items(key, after)
        self.read_units += read_units(sum(self._size(r) for r in records))
        return records

    def load_all(self, keys: Any) -> list[Any]:
        records = super().load_all(keys)
        for r in {(r.key, r.item): r for r in records}.values():
            self.read_units += read_units(item_bytes(r.key, r.item, encode(r.data), r.version) if r.version else 0)
        return records

    def save(self, record: Any, data: dict[str, Any], *, expires_at: int | None = None) -> Any:
        text = encode(data)
        self.write_units += write_units(item_bytes(record.key, record.item, text, record.version + 1, expires_at))
        saved = super().save(record, data, expires_at=expires_at)
        self.sizes[(saved.key, saved.item)] = (saved.version, item_bytes(saved.key, saved.item, text, saved.version))
        return saved

    def save_all(self, writes: Any) -> None:
        for w in writes:
            data = w.data if w.data is not None else w.record.data
            self.write_units += 2 * write_units(item_bytes(w.record.key, w.record.item, encode(data), w.record.version + 1, w.expires_at))
        super().save_all(writes)

    def stored_bytes(self) -> int:
        """The table's size now: every item as DynamoDB would count it (its key and item name, as the
        store names them together, within a few bytes)."""
        return sum(item_bytes(name, "", encode(data), 1) for name, data in self.inner.dump().items())


# --------------------------------------------------------------------------------- the template


@functools.lru_cache(maxsize=4)
def template_resources(path: Path = ROOT / "template.yaml") -> dict[str, Any]:
    """What template.yaml bills by the month: alarm metrics (a metric-math alarm counts each metric it
    reads), alarms, dashboards, secrets; the key the table is encrypted with (`OWNED_KEY` or `MANAGED_KEY`);
    and each function's memory and the logs' retention."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:  # `!Ref x` -> {"Ref": "x"}
        if isinstance(node, yaml.ScalarNode):
            return {suffix: loader.construct_scalar(node)}
        if isinstance(node, yaml.SequenceNode):
            return {suffix: loader.construct_sequence(node, deep=True)}
        return {suffix: loader.construct_mapping(node, deep=True)}

    Loader.add_multi_constructor("!", tagged)
    template = yaml.load(path.read_text(), Loader=Loader)
    defaults = {name: str(p.get("Default", "")) for name, p in (template.get("Parameters") or {}).items()}
    conditions = template.get("Conditions") or {}

    def holds(expression: Any) -> bool:
        """A condition of `Equals`, `Not`, `Ref` to a parameter and `Condition`, with the parameters' defaults."""
        (function, argument), = expression.items()
        if function == "Not":
            return not holds(argument[0])
        if function == "Condition":
            return holds(conditions[argument])
        if function == "Equals":
            left, right = (defaults[v["Ref"]] if isinstance(v, dict) else str(v) for v in argument)
            return left == right
        raise ValueError(f"a condition of {function} is not modelled")

    resources = {name: r for name, r in (template.get("Resources") or {}).items()
                 if "Condition" not in r or holds(conditions[r["Condition"]])}
    by_type = Counter(r.get("Type") for r in resources.values())
    alarm_metrics = 0
    for resource in resources.values():
        if resource.get("Type") == "AWS::CloudWatch::Alarm":
            queries = (resource.get("Properties") or {}).get("Metrics")
            alarm_metrics += sum(1 for q in queries if "MetricStat" in q) if queries else 1
    memory_default = int(template.get("Globals", {}).get("Function", {}).get("MemorySize", 128))
    memory = {f: int(resources.get(f"{f.capitalize()}Function", {}).get("Properties", {}).get("MemorySize", memory_default))
              for f in FUNCTIONS}
    retention = int(template.get("Parameters", {}).get("LogRetentionInDays", {}).get("Default", 30))
    return {"alarms": by_type["AWS::CloudWatch::Alarm"], "alarm_metrics": alarm_metrics,
            "dashboards": by_type["AWS::CloudWatch::Dashboard"], "secrets": by_type["AWS::SecretsManager::Secret"],
            "memory_mb": memory, "log_retention_days": retention, "table_key": _table_key(resources)}


def _table_key(resources: dict[str, Any]) -> str:
    """The key the table is encrypted at rest with: SSEEnabled true is the AWS managed key aws/dynamodb;
    false or no SSESpecification, the AWS owned key ("AWS::DynamoDB::Table SSESpecification")."""
    table = next((r for r in resources.values() if r.get("Type") == "AWS::DynamoDB::Table"), {})
    sse = (table.get("Properties") or {}).get("SSESpecification") or {}
    if sse.get("KMSMasterKeyId"):
        raise ValueError("a table encrypted with a customer managed key is not modelled")
    return MANAGED_KEY if str(sse.get("SSEEnabled", False)).lower() == "true" else OWNED_KEY


# ------------------------------------------------------------------------------------- the bill


@dataclass(frozen=True)
class Line:
    """One line of the weekly bill: its service, what it charges for, how much of it a week (in
    `unit`s), the price per unit, and the free-tier allowance that applies (a key of prices.FREE_TIER,
    and how many units a month it covers)."""

    service: str
    item: str
    usage: float
    unit: str
    price: float
    free: str | None = None
    free_per_month: float = 0.0

    @property
    def dollars(self) -> float:
        return self.usage * self.price

    @property
    def always_free(self) -> bool:
        return self.free is not None and prices.FREE_TIER[self.free][2]

    @property
    def covered(self) -> bool:
        """Whether the free tier would cover the whole line (a month of it within the allowance)."""
        return self.free is not None and self.usage * prices.WEEKS_PER_MONTH <= self.free_per_month

    @property
    def after_always_free(self) -> float:
        """$ per week once the never-expiring allowance is used for this line alone."""
        if not self.always_free:
            return self.dollars
        return max(0.0, self.usage * prices.WEEKS_PER_MONTH - self.free_per_month) / prices.WEEKS_PER_MONTH * self.price


def cold_start_seconds(imports: Mapping[str, Any] | None, function: str) -> float | None:
    """A cold start's billed seconds, from `costs.cold_imports`: the import of the function's module
    (the INIT phase) and what its first invocation does once (clients, secret read, key parse, lazy
    imports): the first invocation's own time less a warm one's."""
    if not imports or f"{function}_compiled" not in imports:
        return None
    measured = imports[f"{function}_compiled"]
    return measured["module"] + max(0.0, measured.get("one_time", 0.0))


def weekly(aws: Mapping[str, Any], *, imports: Mapping[str, Any] | None = None,
           template: Mapping[str, Any] | None = None) -> list[Line]:
    """The weekly bill of one replay's counts (`aws`, as `simulate` records them), at list prices."""
    template = template or template_resources()
    weeks = aws["span_seconds"] / (7 * 86_400)
    per_week = 1 / weeks
    lam = aws["lambda"]
    invocations = sum(lam[f]["invocations"] for f in FUNCTIONS)
    gb_seconds = 0.0
    for function in FUNCTIONS:
        cold = cold_start_seconds(imports, function) or 0.0
        gb_seconds += (lam[function]["billed_ms"] / 1000 + lam[function]["cold_starts"] * cold) * template["memory_mb"][function] / 1024
    secret_reads = sum(lam[f]["secret_reads"] for f in FUNCTIONS)
    month = prices.WEEKS_PER_MONTH
    kms: list[tuple[str, float]] = []  # what asks KMS, and how many requests a week: one line shares the free tier
    if template["secrets"]:  # a Secrets Manager secret: its month and its calls
        secret = [Line("Secrets Manager", "the secret", template["secrets"] / month, "secret-months", prices.SECRET_MONTH,
                       "secrets", 1.0),
                  Line("Secrets Manager", "GetSecretValue calls", secret_reads * per_week, "calls", prices.SECRETS_API_CALL)]
    else:  # the stack's: a SecureString parameter, each read a KMS decryption
        secret = [Line("Parameter Store", "the secrets' SecureString (a standard parameter), its GetParameter calls",
                       secret_reads * per_week, "calls", prices.PARAMETER_API_CALL)]
        kms.append(("the SecureString, key aws/ssm", secret_reads * per_week))
    if template["table_key"] == MANAGED_KEY:  # as many requests as the secret's reads (see MANAGED_KEY)
        kms.append(("the table's key aws/dynamodb", secret_reads * per_week))
        encryption = Line("DynamoDB", f"encryption at rest: the {MANAGED_KEY}, its KMS requests (priced on the KMS line)",
                          secret_reads * per_week, "requests", 0.0)
    else:
        encryption = Line("DynamoDB", f"encryption at rest: the {OWNED_KEY} (no charge), its KMS requests", 0.0,
                          "requests", prices.DYNAMODB_OWNED_KEY)
    if kms:
        secret.append(Line("KMS", f"Decrypt requests ({'; '.join(what for what, _ in kms)})", sum(n for _, n in kms),
                           "requests", prices.KMS_REQUEST, "kms_requests", prices.FREE_TIER["kms_requests"][0]))
    db = aws["dynamodb"]
    stored_gb = db["stored_bytes"] / 1e9
    logs_gb = sum(aws["log_bytes"].values()) / 1e9 * per_week
    kept_gb = logs_gb / 7 * template["log_retention_days"]  # in the group at any time, once the retention is full
    return [
        Line("Lambda", "requests (invocations of both functions)", invocations * per_week, "requests",
             prices.LAMBDA_REQUEST, "lambda_requests", prices.FREE_TIER["lambda_requests"][0]),
        Line("Lambda", "duration at " + " and ".join(f"{mb} MB ({f})" for f, mb in template["memory_mb"].items())
             + ", cold starts included", gb_seconds * per_week,
             "GB-seconds", prices.LAMBDA_GB_SECOND, "lambda_gb_seconds", prices.FREE_TIER["lambda_gb_seconds"][0]),
        Line("API Gateway", "HTTP API requests (512 KB each)", aws["http_api_units"] * per_week, "requests",
             prices.HTTP_API_REQUEST, "http_api_requests", prices.FREE_TIER["http_api_requests"][0]),
        Line("DynamoDB", "write request units", db["write_units"] * per_week, "units", prices.DYNAMODB_WRITE_UNIT),
        Line("DynamoDB", "read request units (strongly consistent)", db["read_units"] * per_week, "units",
             prices.DYNAMODB_READ_UNIT),
        Line("DynamoDB", "storage and point-in-time recovery (the table at the end)", stored_gb / month, "GB-months",
             prices.DYNAMODB_STORAGE_GB_MONTH + prices.DYNAMODB_PITR_GB_MONTH),
        encryption,
        *secret,
        Line("CloudWatch", "Logs ingested (every log line and EMF blob)", logs_gb, "GB", prices.LOGS_INGESTED_GB,
             "logs_gb", prices.FREE_TIER["logs_gb"][0]),
        Line("CloudWatch", f"Logs archived ({template['log_retention_days']} days kept)", kept_gb / month, "GB-months",
             prices.LOGS_STORED_GB_MONTH),
        Line("CloudWatch", "custom metrics (metric-hours)", aws["metric_hours"] * per_week, "metric-hours",
             prices.CUSTOM_METRIC_MONTH / prices.HOURS_PER_MONTH, "custom_metrics",
             prices.FREE_TIER["custom_metrics"][0] * prices.HOURS_PER_MONTH),
        Line("CloudWatch", f"alarms ({template['alarms']}, reading {template['alarm_metrics']} metrics)",
             template["alarm_metrics"] / month, "alarm-metric-months", prices.ALARM_METRIC_MONTH, "alarm_metrics",
             prices.FREE_TIER["alarm_metrics"][0]),
        Line("CloudWatch", "dashboard", template["dashboards"] / month, "dashboard-months", prices.DASHBOARD_MONTH,
             "dashboards", prices.FREE_TIER["dashboards"][0]),
        Line("EventBridge", "scheduled events (both schedules)", aws["scheduled_events"] * per_week, "events",
             prices.EVENTBRIDGE_SCHEDULED_EVENT),
    ]


def total(lines: list[Line]) -> float:
    return sum(line.dollars for line in lines)


def total_after_always_free(lines: list[Line]) -> float:
    return sum(line.after_always_free for line in lines)
