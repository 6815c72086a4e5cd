"""The table of template.yaml through a boto3 DynamoDB client: `DynamoStore`, and the table's creation
for local runs and tests. The one module of pager that imports botocore.

Items: `pk` (the record's key), `sk` (`#` for the record itself, else the item's name), `version` (a
number), `data` (the record's JSON as text), `ttl`.
"""

from __future__ import annotations

import json
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from .errors import Conflict, StoreUnavailable
from .store import ROOT_ITEM, TABLE_ITEM, TABLE_KEY, TABLE_TTL, Record, encode

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
        item = {
            **_key(record.key, record.item),
            "version": {"N": str(record.version + 1)},
            "data": {"S": encode(data)},
        }
        if expires_at is not None:
            item[TABLE_TTL] = {"N": str(int(expires_at))}
        condition: dict[str, Any]
        if record.version == 0:
            condition = {"ConditionExpression": f"attribute_not_exists({TABLE_KEY})"}
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
        return Record(record.key, json.loads(item["data"]["S"]), record.version + 1, record.item)


def _key(key: str, item: str) -> dict[str, Any]:
    return {TABLE_KEY: {"S": key}, TABLE_ITEM: {"S": item or ROOT_ITEM}}


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
