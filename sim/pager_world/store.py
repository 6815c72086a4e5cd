"""The table in the fake world: pager's in-memory store, or DynamoDB on moto, with the world's faults.

Each load and save is a call of the service "store" in the world's `Faults` ("load <key>", "save
<key>"); a rule on it throttles the table as DynamoDB does once boto's retries are spent. The store
also counts writes by the kind of their key (DynamoDB bills a failed conditional write too) and
wakes whoever waits for a change (the world's racing deliveries).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

from botocore.exceptions import ClientError

from pager.dynamo import DynamoStore
from pager.errors import Conflict, StoreUnavailable
from pager.store import ROOT_ITEM, TABLE_ITEM, TABLE_KEY, MemoryStore, Record

from .faults import Faults


def key_kind(key: str) -> str:
    """What a table key is about: `sweep`, `alarm`, or the signal record's kind (its prefix)."""
    for sep in ("#", ":"):
        if sep in key:
            return key.split(sep, 1)[0]
    return key


class FaultyStore:
    """A store (the in-memory one by default) whose calls meet the world's faults, counted."""

    def __init__(self, faults: Faults, inner: Any = None) -> None:
        self.inner = inner if inner is not None else MemoryStore()
        self.faults = faults
        self.loads = 0
        self.writes: Counter[str] = Counter()
        self.conflicts: Counter[str] = Counter()
        self.changed = threading.Condition()  # notified at each write; `version` counts them
        self.version = 0

    def load(self, key: str, item: str = "") -> Record:
        self.loads += 1
        name = f"{key} [{item}]" if item else key
        if self.faults.call("store", f"load {name}") is not None:
            raise StoreUnavailable(f"DynamoDB load {name}: ThrottlingException")
        return self.inner.load(key, item)

    def items(self, key: str, after: str = ROOT_ITEM) -> list[Record]:
        self.loads += 1
        if self.faults.call("store", f"query {key}") is not None:
            raise StoreUnavailable(f"DynamoDB query {key}: ThrottlingException")
        return self.inner.items(key, after)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        kind = key_kind(record.key)
        self.writes[kind] += 1
        name = f"{record.key} [{record.item}]" if record.item else record.key
        if self.faults.call("store", f"save {name}") is not None:
            raise StoreUnavailable(f"DynamoDB save {name}: ThrottlingException")
        try:
            saved = self.inner.save(record, data, expires_at=expires_at)
        except Conflict:
            self.conflicts[kind] += 1
            raise
        with self.changed:
            self.version += 1
            self.changed.notify_all()
        return saved

    def dump(self) -> dict[str, Any]:
        return self.inner.dump()

    @property
    def round_trips(self) -> int:
        return self.loads + sum(self.writes.values())


class FaultyDynamoClient:
    """A boto3 DynamoDB client whose item calls meet the world's faults, throttled as botocore raises it."""

    def __init__(self, client: Any, faults: Faults) -> None:
        self._client = client
        self._faults = faults

    def _call(self, verb: str, key: dict[str, Any]) -> None:
        item = key.get(TABLE_ITEM, {}).get("S", ROOT_ITEM)
        name = key[TABLE_KEY]["S"] + ("" if item == ROOT_ITEM else f" [{item}]")
        if self._faults.call("store", f"{verb} {name}") is not None:
            raise ClientError(
                {"Error": {"Code": "ThrottlingException", "Message": "Rate of requests exceeds the allowed throughput."},
                 "ResponseMetadata": {"HTTPStatusCode": 400}},
                verb,
            )

    def get_item(self, **kwargs: Any) -> Any:
        self._call("load", kwargs["Key"])
        return self._client.get_item(**kwargs)

    def put_item(self, **kwargs: Any) -> Any:
        self._call("save", kwargs["Item"])
        return self._client.put_item(**kwargs)

    def query(self, **kwargs: Any) -> Any:
        self._call("query", {TABLE_KEY: kwargs["ExpressionAttributeValues"][":k"]})
        return self._client.query(**kwargs)


class DynamoDump(DynamoStore):
    """DynamoStore with the in-memory store's `dump`, read past the faulty client."""

    def __init__(self, client: Any, raw: Any, table: str) -> None:
        super().__init__(client, table)
        self._raw = raw
        self._name = table

    def dump(self) -> dict[str, Any]:
        items = self._raw.scan(TableName=self._name, ConsistentRead=True)["Items"]
        ordered = sorted(items, key=lambda i: (i[TABLE_KEY]["S"], i[TABLE_ITEM]["S"]))

        def name(stored: dict[str, Any]) -> str:
            item = stored[TABLE_ITEM]["S"]
            return stored[TABLE_KEY]["S"] + ("" if item == ROOT_ITEM else f" [{item}]")

        return {name(item): json.loads(item["data"]["S"]) for item in ordered}
