"""The state store's contract, run against the in-memory fake and against DynamoDB (moto)."""

from __future__ import annotations

import threading
from pathlib import Path

import boto3
import pytest
import yaml
from botocore.exceptions import ClientError
from moto import mock_aws

from pager.dynamo import DynamoStore, create_table
from pager.errors import Conflict, StoreUnavailable
from pager.store import TABLE_ITEM, TABLE_KEY, TABLE_TTL, MemoryStore, Record


@pytest.fixture(params=["memory", "dynamodb"])
def store(request, monkeypatch):
    if request.param == "memory":
        yield MemoryStore()
        return
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, "pager-test")
        yield DynamoStore(_Atomic(client), "pager-test")


class _Atomic:
    """DynamoDB checks a write's condition and writes the item as one step; moto's table, in this
    process, does not: two threads may both pass the check before either writes. Each call is made
    one at a time, as DynamoDB makes a conditional write on one item (threads still race for the turn)."""

    def __init__(self, client) -> None:
        self._client, self._lock = client, threading.Lock()

    def __getattr__(self, name: str):
        call = getattr(self._client, name)
        if not callable(call):
            return call

        def one_at_a_time(*args, **kwargs):
            with self._lock:
                return call(*args, **kwargs)

        return one_at_a_time


def test_a_key_never_written_loads_as_an_empty_record_of_version_zero(store):
    record = store.load("alarm#octo/repo")
    assert record == Record("alarm#octo/repo", {}, 0)
    assert not record.exists


def test_a_saved_record_loads_back_with_the_next_version(store):
    saved = store.save(store.load("k"), {"entries": {"workflow:1": {"title": "CI", "order": "2026"}}, "n": 3})
    assert saved.version == 1
    assert store.load("k") == saved


def test_saving_from_a_stale_version_is_a_conflict_and_keeps_the_newer_data(store):
    first = store.load("k")
    store.save(first, {"by": "one"})
    with pytest.raises(Conflict):
        store.save(first, {"by": "two"})
    assert store.load("k").data == {"by": "one"}


def test_creating_a_record_that_someone_else_created_first_is_a_conflict(store):
    empty = store.load("press#1")
    store.save(empty, {"acted": True})
    with pytest.raises(Conflict):
        store.save(empty, {"acted": True})


def test_of_two_racing_writers_exactly_one_wins(store):
    base = store.save(store.load("race"), {"n": 0})
    wins, losses = [], []
    barrier = threading.Barrier(4)

    def write(i: int) -> None:
        barrier.wait()
        try:
            store.save(base, {"n": i})
            wins.append(i)
        except Conflict:
            losses.append(i)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1 and len(losses) == 3
    assert store.load("race").data == {"n": wins[0]}


def test_unicode_and_nested_data_survive_a_round_trip(store):
    data = {"title": "💬 alice <b>&</b> ✅", "list": [1, "two", None, True], "nested": {"a": {"b": []}}}
    store.save(store.load("u"), data, expires_at=1_900_000_000)
    assert store.load("u").data == data


def test_an_expiry_is_written_to_the_ttl_attribute(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, "pager-test")
        DynamoStore(client, "pager-test").save(Record("k"), {"x": 1}, expires_at=1_900_000_000)
        item = client.get_item(TableName="pager-test", Key={"pk": {"S": "k"}, "sk": {"S": "#"}})["Item"]
        assert item["ttl"] == {"N": "1900000000"}


class ThrottledClient:
    """A DynamoDB client whose every call is throttled past boto's own retries."""

    def _throttle(self, operation: str):
        raise ClientError({"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"},
                           "ResponseMetadata": {"HTTPStatusCode": 400}}, operation)

    def get_item(self, **_):
        self._throttle("GetItem")

    def put_item(self, **_):
        self._throttle("PutItem")

    def query(self, **_):
        self._throttle("Query")


def test_a_throttled_table_is_unavailable_which_a_later_delivery_can_fix():
    store = DynamoStore(ThrottledClient(), "pager-test")
    with pytest.raises(StoreUnavailable, match="ProvisionedThroughputExceededException"):
        store.load("k")
    with pytest.raises(StoreUnavailable):
        store.save(Record("k"), {})
    with pytest.raises(StoreUnavailable):
        store.items("k")


def test_the_items_of_a_key_are_records_of_their_own_read_together_without_the_record_itself(store):
    head = store.save(store.load("alarm#o/r"), {"message": 1})
    a = store.save(store.load("alarm#o/r", "entry:workflow:1"), {"state": "open"})
    store.save(store.load("alarm#o/r", "entry:code-scanning:7"), {"state": "closed"})
    store.save(store.load("alarm#o/other", "entry:workflow:1"), {"state": "open"})
    assert store.load("alarm#o/r") == head and store.load("alarm#o/r", "entry:workflow:1") == a
    assert [(r.item, r.data) for r in store.items("alarm#o/r")] == [
        ("entry:code-scanning:7", {"state": "closed"}), ("entry:workflow:1", {"state": "open"})]
    with pytest.raises(Conflict):  # an item's version is its own
        store.save(Record("alarm#o/r", {}, 0, "entry:workflow:1"), {"state": "closed"})
    assert store.items("alarm#nothing") == []


def test_the_items_after_a_name_are_those_whose_name_sorts_after_it(store):
    for name in ("2026-12-01T10:00:00Z#a", "2026-12-01T10:00:00Z#b", "2026-12-01T11:00:00Z#a"):
        store.save(store.load("refusals", name), {"n": name})
    store.save(store.load("refusals"), {"head": True})
    assert [r.item for r in store.items("refusals", after="2026-12-01T10:00:00Z#a")] == [
        "2026-12-01T10:00:00Z#b", "2026-12-01T11:00:00Z#a"]
    assert [r.item for r in store.items("refusals", after="2026-12-01T11")] == ["2026-12-01T11:00:00Z#a"]
    assert store.items("refusals", after="2026-12-02") == []


def test_a_key_with_many_items_reads_them_all(store):
    for n in range(120):
        store.save(store.load("alarm#o/r", f"entry:code-scanning:{n:04d}"), {"title": "x" * 300})
    assert len(store.items("alarm#o/r")) == 120


def test_the_table_of_the_template_is_the_one_the_store_reads_and_writes():
    root = Path(__file__).resolve().parents[1]

    class Loader(yaml.SafeLoader):
        pass

    Loader.add_multi_constructor("!", lambda loader, suffix, node: None)
    template = yaml.load((root / "template.yaml").read_text(), Loader=Loader)
    table = template["Resources"]["Table"]["Properties"]
    assert table["KeySchema"] == [{"AttributeName": TABLE_KEY, "KeyType": "HASH"}, {"AttributeName": TABLE_ITEM, "KeyType": "RANGE"}]
    assert {d["AttributeName"]: d["AttributeType"] for d in table["AttributeDefinitions"]} == {TABLE_KEY: "S", TABLE_ITEM: "S"}
    assert table["TimeToLiveSpecification"] == {"AttributeName": TABLE_TTL, "Enabled": True}
    assert table["BillingMode"] == "PAY_PER_REQUEST"
