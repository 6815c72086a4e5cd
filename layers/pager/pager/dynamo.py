"""The table of template.yaml through a boto3 DynamoDB client: `DynamoStore`, and the table's creation
for local runs and tests. The one module of pager that imports botocore.

Items: `pk` (the record's key), `sk` (`#` for the record itself, else the item's name), `version` (a
number), `data` (the record's JSON as text), `ttl`.

Several records are read with BatchGetItem (consistent reads) and written with TransactWriteItems (all or
none, each conditional on its version), as the Amazon DynamoDB API Reference describes them.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .errors import Conflict, StoreUnavailable
from .store import MAX_TOGETHER, ROOT_ITEM, TABLE_ITEM, TABLE_KEY, TABLE_TTL, Record, Where, Write, encode, together

_TRANSIENT_CODES = {
    "ProvisionedThroughputExceededException",
    "ThrottlingException",
    "RequestLimitExceeded",
    "InternalServerError",
    "ServiceUnavailable",
    "TransactionConflictException",
    "TransactionInProgressException",  # the same ClientRequestToken still under way (TransactWriteItems)
}

# A transaction cancelled for one of these reasons (TransactionCanceledException's CancellationReasons, each
# item's Code, Amazon DynamoDB API Reference) may pass when asked again: another transaction on an item, or
# the table throttled. ConditionalCheckFailed is a Conflict; any other (ValidationError,
# ItemCollectionSizeLimitExceeded) a refusal no retry fixes.
_TRANSIENT_REASONS = {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded"}
UNPROCESSED_WAITS = (0.05, 0.2)  # BatchGetItem's UnprocessedKeys asked again after these waits (its docs: back off)


class DynamoStore:
    """The table of template.yaml through a boto3 DynamoDB client (partition key `pk`, TTL `ttl`)."""

    def __init__(self, client: Any, table: str) -> None:
        self._client = client
        self._table = table

    def load(self, key: str, item: str = "") -> Record:
        try:
            answer = self._client.get_item(TableName=self._table, Key=_key(key, item), ConsistentRead=True)
        except (ClientError, BotoCoreError) as exc:
            raise _unavailable("load", key, exc) from exc
        stored = answer.get("Item")
        if stored is None:
            return Record(key, item=item)
        return Record(key, json.loads(stored["data"]["S"]), int(stored["version"]["N"]), item)

    def items(self, key: str, after: str = ROOT_ITEM) -> list[Record]:
        found: list[Record] = []
        start: dict[str, Any] | None = None
        while True:
            query: dict[str, Any] = {
                "TableName": self._table,
                "KeyConditionExpression": f"{TABLE_KEY} = :k AND {TABLE_ITEM} > :after",
                "ExpressionAttributeValues": {":k": {"S": key}, ":after": {"S": max(after, ROOT_ITEM)}},
                "ConsistentRead": True,
            }
            if start:
                query["ExclusiveStartKey"] = start
            try:
                answer = self._client.query(**query)
            except (ClientError, BotoCoreError) as exc:
                raise _unavailable("query", key, exc) from exc
            for stored in answer.get("Items", []):
                found.append(Record(key, json.loads(stored["data"]["S"]), int(stored["version"]["N"]), stored[TABLE_ITEM]["S"]))
            start = answer.get("LastEvaluatedKey")
            if not start:
                return found

    def save(self, record: Record, data: dict[str, Any], *, expires_at: int | None = None) -> Record:
        item = _item(record, data, expires_at)
        try:
            self._client.put_item(TableName=self._table, Item=item, **_condition(record.version))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise Conflict(f"{record.key} changed since version {record.version}") from exc
            raise _unavailable("save", record.key, exc) from exc
        except BotoCoreError as exc:
            raise _unavailable("save", record.key, exc) from exc
        return Record(record.key, json.loads(item["data"]["S"]), record.version + 1, record.item)

    def load_all(self, keys: Sequence[Where]) -> list[Record]:
        """BatchGetItem, consistent reads: up to MAX_TOGETHER distinct keys (it refuses more, and duplicates). The
        keys it leaves unprocessed (throttled, or past 16 MB) are asked again after a wait, twice at most."""
        wanted = list(dict.fromkeys(keys))
        if len(wanted) > MAX_TOGETHER:
            raise ValueError(f"{len(wanted)} keys read together: at most {MAX_TOGETHER}")
        found: dict[Where, Record] = {}
        request: dict[str, Any] = {self._table: {"Keys": [_key(k, i) for k, i in wanted], "ConsistentRead": True}}
        for wait in (*UNPROCESSED_WAITS, None):
            try:
                answer = self._client.batch_get_item(RequestItems=request)
            except (ClientError, BotoCoreError) as exc:
                raise _unavailable("load_all", wanted[0][0] if wanted else "", exc) from exc
            for stored in answer.get("Responses", {}).get(self._table, []):
                key, sort = stored[TABLE_KEY]["S"], stored[TABLE_ITEM]["S"]
                item = "" if sort == ROOT_ITEM else sort
                found[(key, item)] = Record(key, json.loads(stored["data"]["S"]), int(stored["version"]["N"]), item)
            request = answer.get("UnprocessedKeys") or {}
            if not request:
                return [found.get((k, i)) or Record(k, item=i) for k, i in keys]
            if wait is not None:
                time.sleep(wait)
        raise StoreUnavailable(f"DynamoDB load_all {wanted[0][0]}: keys left unprocessed")

    def save_all(self, writes: Sequence[Write]) -> None:
        """TransactWriteItems: a Put conditional on the version for each write, a ConditionCheck for a check, an
        Update that sets only what is missing (if_not_exists) for a write `once`. A ClientRequestToken, new for
        each call, makes boto's own retries of it write once (its docs: idempotent for 10 minutes)."""
        together(writes)
        if not writes:
            return
        actions = [self._action(write) for write in writes]
        name = writes[0].record.key
        try:
            self._client.transact_write_items(TransactItems=actions, ClientRequestToken=str(uuid.uuid4()))
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") != "TransactionCanceledException":
                raise _unavailable("save_all", name, exc) from exc
            raise _cancelled(writes, exc) from exc
        except BotoCoreError as exc:
            raise _unavailable("save_all", name, exc) from exc

    def _action(self, write: Write) -> dict[str, Any]:
        record = write.record
        if write.data is None:
            return {"ConditionCheck": {"TableName": self._table, "Key": _key(record.key, record.item), **_condition(record.version)}}
        if not write.once:
            return {"Put": {"TableName": self._table, "Item": _item(record, write.data, write.expires_at),
                            **_condition(record.version)}}
        sets = ["#d = if_not_exists(#d, :d)", "#v = if_not_exists(#v, :v)"]
        names = {"#d": "data", "#v": "version"}
        values: dict[str, Any] = {":d": {"S": encode(write.data)}, ":v": {"N": "1"}}
        if write.expires_at is not None:
            sets.append("#t = if_not_exists(#t, :t)")
            names["#t"], values[":t"] = TABLE_TTL, {"N": str(int(write.expires_at))}
        return {"Update": {"TableName": self._table, "Key": _key(record.key, record.item), "UpdateExpression": "SET " + ", ".join(sets),
                           "ExpressionAttributeNames": names, "ExpressionAttributeValues": values}}


def _cancelled(writes: Sequence[Write], exc: ClientError) -> Exception:
    """A transaction DynamoDB cancelled: a Conflict naming the writes whose version changed, else unavailable."""
    name = writes[0].record.key
    # Each item's reason, in the order of the writes ("None" for an item without one).
    reasons = [str(r.get("Code", "")) for r in exc.response.get("CancellationReasons", [])]
    changed = tuple(w.where for w, code in zip(writes, reasons, strict=False) if code == "ConditionalCheckFailed")
    if changed:
        return Conflict(f"{', '.join(k for k, _ in changed)} changed", keys=changed)
    said = ", ".join(code for code in reasons if code != "None") or "TransactionCanceledException"
    if not reasons or _TRANSIENT_REASONS.intersection(reasons):
        return StoreUnavailable(f"DynamoDB save_all {name}: {said}")
    return StoreUnavailable(f"DynamoDB refused save_all {name}: {said}")


def _key(key: str, item: str) -> dict[str, Any]:
    return {TABLE_KEY: {"S": key}, TABLE_ITEM: {"S": item or ROOT_ITEM}}


def _item(record: Record, data: dict[str, Any], expires_at: int | None) -> dict[str, Any]:
    """The item of `data` written over `record`: its next version."""
    item = {**_key(record.key, record.item), "version": {"N": str(record.version + 1)}, "data": {"S": encode(data)}}
    if expires_at is not None:
        item[TABLE_TTL] = {"N": str(int(expires_at))}
    return item


def _condition(version: int) -> dict[str, Any]:
    """Written only over `version` (0: where nothing is stored yet)."""
    if version == 0:
        return {"ConditionExpression": f"attribute_not_exists({TABLE_KEY})"}
    return {"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": {"N": str(version)}}}


def _unavailable(step: str, key: str, exc: Exception) -> Exception:
    code = exc.response.get("Error", {}).get("Code", "") if isinstance(exc, ClientError) else type(exc).__name__
    if isinstance(exc, ClientError) and code not in _TRANSIENT_CODES and not code.startswith("5"):
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
        if status < 500:
            # A refusal such as a missing table or a denied permission: no retry fixes it, but the
            # event must not be lost either, so it still surfaces as unavailable (500) and is logged.
            return StoreUnavailable(f"DynamoDB refused {step} {key}: {code}")
    return StoreUnavailable(f"DynamoDB {step} {key}: {code}")


def create_table(client: Any, table: str) -> None:
    """pager's table as template.yaml declares it (for local runs and tests): on demand, key and TTL."""
    client.create_table(
        TableName=table,
        KeySchema=[{"AttributeName": TABLE_KEY, "KeyType": "HASH"}, {"AttributeName": TABLE_ITEM, "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": TABLE_KEY, "AttributeType": "S"}, {"AttributeName": TABLE_ITEM, "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.update_time_to_live(TableName=table, TimeToLiveSpecification={"Enabled": True, "AttributeName": TABLE_TTL})
