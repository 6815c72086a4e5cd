"""The state store's contract, run against the in-memory fake and against DynamoDB (moto): a record at a time,
and several together (`load_all`, `save_all`: BatchGetItem and TransactWriteItems)."""

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
from pager.store import TABLE_ITEM, TABLE_KEY, TABLE_TTL, MemoryStore, Record, Write


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

    def batch_get_item(self, **_):
        self._throttle("BatchGetItem")

    def transact_write_items(self, **_):
        self._throttle("TransactWriteItems")


def test_a_throttled_table_is_unavailable_which_a_later_delivery_can_fix():
    store = DynamoStore(ThrottledClient(), "pager-test")
    with pytest.raises(StoreUnavailable, match="ProvisionedThroughputExceededException"):
        store.load("k")
    with pytest.raises(StoreUnavailable):
        store.save(Record("k"), {})
    with pytest.raises(StoreUnavailable):
        store.items("k")
    with pytest.raises(StoreUnavailable, match="ProvisionedThroughputExceededException"):
        store.load_all([("k", ""), ("j", "")])
    with pytest.raises(StoreUnavailable, match="ProvisionedThroughputExceededException"):
        store.save_all([Write(Record("k"), {}), Write(Record("j"), {})])


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


# -- several records together ------------------------------------------------------------------------------


def test_records_read_together_come_back_in_the_order_asked_and_an_absent_one_empty(store):
    a = store.save(store.load("a"), {"n": 1})
    b = store.save(store.load("b", "x"), {"n": 2})
    assert store.load_all([("b", "x"), ("nothing", ""), ("a", "")]) == [b, Record("nothing"), a]
    assert store.load_all([("a", ""), ("a", "")]) == [a, a]  # asked twice: given twice


def test_records_written_together_are_all_written_each_with_its_next_version(store):
    a = store.save(store.load("a"), {"n": 1})
    store.save_all([Write(a, {"n": 2}), Write(Record("b", item="x"), {"m": "✅"}, expires_at=1_900_000_000)])
    assert store.load("a") == Record("a", {"n": 2}, 2)
    assert store.load("b", "x") == Record("b", {"m": "✅"}, 1, "x")


def test_when_one_record_written_together_changed_none_is_written_and_the_conflict_names_it(store):
    a = store.save(store.load("a"), {"n": 1})
    b = store.save(store.load("b", "x"), {"n": 1})
    store.save(b, {"n": 5})  # someone else wrote it meanwhile
    with pytest.raises(Conflict) as raised:
        store.save_all([Write(a, {"n": 2}), Write(b, {"n": 2}), Write(Record("c"), {"n": 2})])
    assert raised.value.keys == (("b", "x"),)
    assert store.load("a").data == {"n": 1} and store.load("b", "x").data == {"n": 5} and not store.load("c").exists


def test_a_check_writes_nothing_but_holds_the_writes_beside_it_to_its_records_version(store):
    index = store.save(store.load("attention", "summary:1"), {"open": True})
    store.save_all([Write(Record("summary#1", item="a"), {"kept": 1}), Write(index, None)])
    assert store.load("summary#1", "a").data == {"kept": 1} and store.load("attention", "summary:1") == index
    store.save(index, {"closing": True})
    with pytest.raises(Conflict) as raised:
        store.save_all([Write(Record("summary#1", item="b"), {"kept": 2}), Write(index, None)])
    assert raised.value.keys == (("attention", "summary:1"),) and not store.load("summary#1", "b").exists


def test_a_write_once_writes_where_nothing_is_and_leaves_what_is_there_without_a_conflict(store):
    store.save_all([Write(Record("summary#1", item="t"), {"first": True}, expires_at=1_900_000_000, once=True),
                    Write(Record("o"), {"x": 1})])
    store.save_all([Write(Record("summary#1", item="t"), {"second": True}, once=True), Write(Record("p"), {"x": 1})])
    assert store.load("summary#1", "t") == Record("summary#1", {"first": True}, 1, "t")
    assert store.load("p").data == {"x": 1}


def test_what_no_one_transaction_can_write_is_refused_before_anything_is_written(store):
    with pytest.raises(ValueError, match="at most 100"):
        store.save_all([Write(Record(f"k{n}"), {}) for n in range(101)])
    with pytest.raises(ValueError, match="two writes of one record"):
        store.save_all([Write(Record("k0"), {}), Write(Record("k0"), {"again": 1})])
    with pytest.raises(ValueError, match="larger than"):  # each under DynamoDB's 400 KB, together over 4 MB
        store.save_all([Write(Record(f"k{n}"), {"text": "x" * 300_000}) for n in range(15)])
    with pytest.raises(ValueError, match="at most 100"):
        store.load_all([(f"k{n}", "") for n in range(101)])
    assert store.load_all([("k0", ""), ("k1", "")]) == [Record("k0"), Record("k1")]


def test_of_two_racing_transactions_over_the_same_record_exactly_one_wins(store):
    base = store.save(store.load("race"), {"n": 0})
    wins, losses = [], []
    barrier = threading.Barrier(4)

    def write(i: int) -> None:
        barrier.wait()
        try:
            store.save_all([Write(base, {"n": i}), Write(Record(f"own#{i}"), {"i": i})])
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
    assert [store.load(f"own#{i}").exists for i in range(4)] == [i in wins for i in range(4)]


class Cancelling:
    """A DynamoDB client whose transactions are cancelled with these reasons, as TransactWriteItems answers:
    TransactionCanceledException, each item's Code in the order of the items (its API reference)."""

    def __init__(self, *codes: str) -> None:
        self.codes, self.asked = codes, []

    def transact_write_items(self, **kwargs):
        self.asked.append(kwargs)
        raise ClientError({"Error": {"Code": "TransactionCanceledException", "Message": "Transaction cancelled"},
                           "CancellationReasons": [{"Code": code} for code in self.codes],
                           "ResponseMetadata": {"HTTPStatusCode": 400}}, "TransactWriteItems")


@pytest.mark.parametrize("code", ["ThrottlingError", "ProvisionedThroughputExceeded", "TransactionConflict"])
def test_a_transaction_cancelled_by_throttling_or_another_transaction_is_unavailable_which_asking_again_can_fix(code):
    with pytest.raises(StoreUnavailable, match=f"DynamoDB save_all a: {code}$"):
        DynamoStore(Cancelling("None", code), "pager-test").save_all([Write(Record("a"), {}), Write(Record("b"), {})])


def test_a_transaction_cancelled_by_a_changed_version_is_a_conflict_naming_the_record_even_beside_throttling():
    with pytest.raises(Conflict) as raised:
        DynamoStore(Cancelling("ThrottlingError", "ConditionalCheckFailed"), "pager-test").save_all(
            [Write(Record("a"), {}), Write(Record("b", item="x"), {})])
    assert raised.value.keys == (("b", "x"),)


def test_a_transaction_refused_for_another_reason_is_said_as_refused():
    with pytest.raises(StoreUnavailable, match="refused save_all a: ValidationError"):
        DynamoStore(Cancelling("ValidationError", "None"), "pager-test").save_all([Write(Record("a"), {}), Write(Record("b"), {})])


def test_each_transaction_carries_a_token_of_its_own_so_that_botos_retries_of_it_write_once():
    client = Cancelling("ThrottlingError")
    store = DynamoStore(client, "pager-test")
    for _ in range(2):
        with pytest.raises(StoreUnavailable):
            store.save_all([Write(Record("a"), {})])
    first, second = (asked["ClientRequestToken"] for asked in client.asked)
    assert first != second and 1 <= len(first) <= 36  # TransactWriteItems: a token of 1 to 36 characters


class Unprocessed:
    """A DynamoDB client whose BatchGetItem leaves its first key unprocessed once, as a throttled partition does."""

    def __init__(self, client) -> None:
        self.client, self.asked = client, 0

    def batch_get_item(self, **kwargs):
        self.asked += 1
        if self.asked > 1:
            return self.client.batch_get_item(**kwargs)
        [(table, request)] = kwargs["RequestItems"].items()
        first, *rest = request["Keys"]
        answer = self.client.batch_get_item(RequestItems={table: {**request, "Keys": rest}})
        return {**answer, "UnprocessedKeys": {table: {**request, "Keys": [first]}}}

    def __getattr__(self, name: str):
        return getattr(self.client, name)


def test_keys_a_read_together_leaves_unprocessed_are_asked_again(monkeypatch):
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setattr("pager.dynamo.UNPROCESSED_WAITS", (0.0, 0.0))
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_table(client, "pager-test")
        store = DynamoStore(Unprocessed(client), "pager-test")
        a, b = store.save(Record("a"), {"n": 1}), store.save(Record("b", item="x"), {"n": 2})
        assert store.load_all([("a", ""), ("b", "x")]) == [a, b] and store._client.asked == 2


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
