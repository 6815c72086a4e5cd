"""The table in the fake world: pager's in-memory store, or DynamoDB on moto, with the world's faults.

Each load and save is a call of the service "store" in the world's `Faults` ("load <key>", "save
<key>"); a rule on it throttles the table as DynamoDB does once boto's retries are spent. Records read
together (`load_all`) meet the faults one by one ("load <key>" each), and so do records written
together (`save_all`: "save <key>", "check <key>" for a check): a throttled one fails them all, as a
throttled item cancels DynamoDB's whole transaction (TransactWriteItems, CancellationReasons
"ThrottlingError"). The store counts its round trips (a read, a query, a read of several records, a
write, a write of several: one DynamoDB request each) and its writes by the kind of their key (each
record written together is a write; DynamoDB bills a failed conditional write too), and wakes whoever
waits for a change (the world's racing deliveries).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import ClientError

from pager.dynamo import DynamoStore
from pager.errors import Conflict, StoreUnavailable
from pager.store import ROOT_ITEM, TABLE_ITEM, TABLE_KEY, MemoryStore, Record, Where, Write

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
        self.loads = 0  # round trips that read: a load, a query, a read of several records together
        self.write_trips = 0  # round trips that write: a save, a write of several records together
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

    def load_all(self, keys: Sequence[Where]) -> list[Record]:
        self.loads += 1
        for key, item in dict.fromkeys(keys):
            name = f"{key} [{item}]" if item else key
            if self.faults.call("store", f"load {name}") is not None:
                raise StoreUnavailable(f"DynamoDB load_all {name}: ProvisionedThroughputExceededException")
        return self.inner.load_all(keys)

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        kind = key_kind(record.key)
        self.write_trips += 1
        self.writes[kind] += 1
        name = f"{record.key} [{record.item}]" if record.item else record.key
        if self.faults.call("store", f"save {name}") is not None:
            raise StoreUnavailable(f"DynamoDB save {name}: ThrottlingException")
        try:
            saved = self.inner.save(record, data, expires_at=expires_at)
        except Conflict:
            self.conflicts[kind] += 1
            raise
        self._changed()
        return saved

    def save_all(self, writes: Sequence[Write]) -> None:
        self.write_trips += 1
        for write in writes:
            if write.data is not None:
                self.writes[key_kind(write.record.key)] += 1
            name = f"{write.record.key} [{write.record.item}]" if write.record.item else write.record.key
            if self.faults.call("store", f"{'check' if write.data is None else 'save'} {name}") is not None:
                raise StoreUnavailable(f"DynamoDB save_all {name}: TransactionCanceledException (ThrottlingError)")
        try:
            self.inner.save_all(writes)
        except Conflict as exc:
            for key, _ in exc.keys or [w.where for w in writes]:
                self.conflicts[key_kind(key)] += 1
            raise
        self._changed()

    def _changed(self) -> None:
        with self.changed:
            self.version += 1
            self.changed.notify_all()

    def dump(self) -> dict[str, Any]:
        return self.inner.dump()

    @property
    def round_trips(self) -> int:
        return self.loads + self.write_trips


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

    def batch_get_item(self, **kwargs: Any) -> Any:
        """Throttled as DynamoDB does when none of the keys can be read: ProvisionedThroughputExceededException for the
        whole request (BatchGetItem's docs)."""
        for request in kwargs["RequestItems"].values():
            for key in request["Keys"]:
                self._call("load", key)
        return self._client.batch_get_item(**kwargs)

    def transact_write_items(self, **kwargs: Any) -> Any:
        """A throttled item cancels the whole transaction: TransactionCanceledException, each item's reason in the
        order of the items ("ThrottlingError" for the throttled one, "None" for the others: TransactWriteItems'
        docs)."""
        actions = kwargs["TransactItems"]
        for n, action in enumerate(actions):
            (verb, request), = action.items()
            key = request.get("Key") or {k: request["Item"][k] for k in (TABLE_KEY, TABLE_ITEM)}
            try:
                self._call("check" if verb == "ConditionCheck" else "save", key)
            except ClientError:
                reasons = [{"Code": "ThrottlingError" if i == n else "None"} for i in range(len(actions))]
                raise ClientError({"Error": {"Code": "TransactionCanceledException",
                                             "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons"},
                                   "CancellationReasons": reasons, "ResponseMetadata": {"HTTPStatusCode": 400}},
                                  "TransactWriteItems") from None
        return self._client.transact_write_items(**kwargs)


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
