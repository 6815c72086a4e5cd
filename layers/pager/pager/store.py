"""The state store: versioned records keyed by what they are about.

Every record is a JSON object under a string key (`alarm#owner/repo`, `sweep#state`, ...) with a
version. `save` writes only when the stored version is still the one that was loaded, so two
deliveries of the same event can never both act on the same state: the loser gets `Conflict`.

    DynamoStore   DynamoDB through a boto3 client (attributes: pk, version, data as JSON text, ttl)
    MemoryStore   the in-memory fake; tests/test_store.py runs one contract suite against both
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any, Protocol

from botocore.exceptions import BotoCoreError, ClientError

from .errors import Conflict, StoreUnavailable


@dataclass(frozen=True)
class Record:
    key: str
    data: dict[str, Any] = field(default_factory=dict)
    version: int = 0  # 0: nothing stored under this key yet

    @property
    def exists(self) -> bool:
        return self.version > 0


class Store(Protocol):
    def load(self, key: str) -> Record:
        """The record under `key`; an empty one with version 0 when there is none."""

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        """Write `data` under `record.key` if the stored version is still `record.version`.

        Returns the new record. Raises `Conflict` when someone else wrote first, `StoreUnavailable`
        when the store is throttled or unreachable. `expires_at` (epoch seconds) lets the table's TTL
        remove the record later."""


def _encode(data: dict[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), sort_keys=True)


class MemoryStore:
    """In-memory store with the same contract as DynamoStore; thread-safe for race tests."""

    def __init__(self) -> None:
        self._items: dict[str, tuple[int, str, int | None]] = {}
        self._lock = threading.Lock()

    def load(self, key: str) -> Record:
        with self._lock:
            item = self._items.get(key)
        if item is None:
            return Record(key)
        version, text, _ = item
        return Record(key, json.loads(text), version)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        text = _encode(data)
        with self._lock:
            current = self._items.get(record.key)
            if (current[0] if current else 0) != record.version:
                raise Conflict(f"{record.key} changed since version {record.version}")
            self._items[record.key] = (record.version + 1, text, expires_at)
        return Record(record.key, json.loads(text), record.version + 1)

    def keys(self) -> list[str]:
        with self._lock:
            return sorted(self._items)

    def dump(self) -> dict[str, Any]:
        """Every record's data by key: what tests compare between runs."""
        with self._lock:
            return {key: json.loads(text) for key, (_, text, _) in sorted(self._items.items())}


_TRANSIENT_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionConflictException",
}


class DynamoStore:
    """The table of template.yaml through a boto3 DynamoDB client (partition key `pk`, TTL `ttl`)."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def load(self, key: str) -> Record:
        try:
            answer = self._client.get_item(TableName=self._table, Key={"pk": {"S": key}}, ConsistentRead=True)
        except (ClientError, BotoCoreError) as exc:
            raise _unavailable("load", key, exc) from exc
        item = answer.get("Item")
        if item is None:
            return Record(key)
        return Record(key, json.loads(item["data"]["S"]), int(item["version"]["N"]))

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        item = {
            "pk": {"S": record.key},
            "version": {"N": str(record.version + 1)},
            "data": {"S": _encode(data)},
        }
        if expires_at is not None:
            item["ttl"] = {"N": str(int(expires_at))}
        if record.version == 0:
            condition = {"ConditionExpression": "attribute_not_exists(pk)"}
        else:
            condition = {
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": {":v": {"N": str(record.version)}},
            }
        try:
            self._client.put_item(TableName=self._table, Item=item, **condition)
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise Conflict(f"{record.key} changed since version {record.version}") from exc
            raise _unavailable("save", record.key, exc) from exc
        except BotoCoreError as exc:
            raise _unavailable("save", record.key, exc) from exc
        return Record(record.key, json.loads(item["data"]["S"]), record.version + 1)


def _unavailable(step: str, key: str, exc: Exception) -> Exception:
    code = exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else type(exc).__name__
    if isinstance(exc, ClientError) and code not in _TRANSIENT_CODES and not code.startswith("5"):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if status < 500:
            # A refusal such as a missing table or a denied permission: no retry fixes it, but the
            # event must not be lost either, so it still surfaces as unavailable (500) and is logged.
            return StoreUnavailable(f"DynamoDB refused {step} {key}: {code}")
    return StoreUnavailable(f"DynamoDB {step} {key}: {code}")
