"""GitHub's lists of deliveries and how far pager has read them (pager.sweep.lists): pure, page by page."""

from __future__ import annotations

import pytest

from pager.sweep.lists import END, MET, OVERLAP_SECONDS, PAGES, WINDOW, Attempt, Scan, outcome_of

NOW = 1_800_000_000.0


def attempt(ident: int, ago: float, code: int = 200, guid: str | None = None, redelivery: bool = False) -> Attempt:
    return Attempt(ident, guid or f"g{ident}", NOW - ago, redelivery, code, "workflow_run", "completed", 7)


def page(*ids_ago: tuple[int, float]) -> list[Attempt]:
    """A page as GitHub serves it: newest first."""
    return sorted((attempt(i, ago) for i, ago in ids_ago), key=lambda a: -a.id)


@pytest.mark.parametrize(
    ("code", "outcome"),
    [(200, "passed"), (204, "passed"), (299, "passed"), (301, "failed"), (302, "failed"), (399, "failed"), (400, "refused"), (401, "refused"), (424, "refused"),
     (499, "refused"), (429, "failed"), (500, "failed"), (502, "failed"), (599, "failed"), (0, "no answer"),
     (100, "no answer"), (600, "no answer")],
)
def test_status_codes_map_to_passed_refused_failed_or_no_answer(code, outcome):
    # a 2xx passed; a 3xx is a redirect GitHub does not follow (pager never ran) and a 429 API Gateway's throttle:
    # both failed, like a 5xx, though GitHub's list files a 3xx with its successes (its filters: 200..399, 400..599)
    assert outcome_of(code) == outcome


def test_a_list_item_becomes_an_attempt_and_one_without_id_guid_or_time_is_left_out():
    item = {"id": 12, "guid": "g", "delivered_at": "2026-11-12T10:00:05Z", "redelivery": True, "status_code": None,
            "event": "issues", "action": "opened", "repository_id": 7}
    a = Attempt.from_github(item)
    assert a is not None and (a.id, a.redelivery, a.status_code, a.outcome, a.repository_id) == (12, True, 0, "no answer", 7)
    for missing in ("id", "guid", "delivered_at"):
        assert Attempt.from_github({k: v for k, v in item.items() if k != missing}) is None
    assert Attempt.from_github({**item, "id": True}) is None


def test_a_first_pass_reads_down_to_its_stop_and_then_begins_at_the_head_with_what_came_since():
    scan = Scan()
    fresh, scan, ended = scan.step(page((5, 100), (4, 200)), "next", stop_at=NOW - 1000)
    assert [a.id for a in fresh] == [5, 4] and ended == PAGES and scan.under_way and scan.next_url == "next"
    fresh, scan, ended = scan.step(page((3, 500), (2, 2000)), None, stop_at=NOW - 1000)
    assert [a.id for a in fresh] == [3] and ended == WINDOW  # 2 lies before the stop
    assert not scan.under_way and scan.top == 5
    fresh, scan, ended = scan.step(page((8, 1), (7, 2), (6, 3), (5, 100), (4, 200)), "more", stop_at=NOW - 3 * 86400)
    assert [a.id for a in fresh] == [8, 7, 6] and ended == MET and scan.top == 8


def test_a_pass_one_run_cannot_finish_goes_on_at_githubs_link_in_the_next_and_reads_each_delivery_once():
    scan = Scan(top=10, top_at=NOW - 3600, recent=(10,))
    fresh, scan, ended = scan.step(page((30, 5), (29, 6)), "link-1", stop_at=0)
    assert ended == PAGES and scan.head == 30 and scan.next_url == "link-1"
    fresh2, scan, ended = scan.step(page((28, 7), (27, 8)), "link-2", stop_at=0)  # the next run, at the link
    assert [a.id for a in fresh + fresh2] == [30, 29, 28, 27] and scan.head == 30
    fresh3, scan, ended = scan.step(page((12, 3000), (10, 3600), (9, 3700)), "link-3", stop_at=0)
    assert [a.id for a in fresh3] == [12] and ended == MET and scan.top == 30 and not scan.under_way


def test_a_delivery_listed_late_below_the_top_is_read_and_one_read_already_is_not():
    # A delivery without an answer is listed once GitHub gave up waiting: its id may lie below a newer one read.
    scan = Scan(top=20, top_at=NOW - 100, recent=(20, 19))
    fresh, scan, ended = scan.step(page((25, 1), (20, 100), (19, 105), (18, 110), (17, 100 + OVERLAP_SECONDS + 5)),
                                   None, stop_at=0)
    assert [a.id for a in fresh] == [25, 18] and ended == MET


def test_a_list_that_ends_before_the_pass_before_is_the_end_and_its_oldest_is_known():
    scan = Scan(top=5, top_at=NOW - 4 * 86400)
    fresh, scan, ended = scan.step(page((40, 10), (39, 20)), None, stop_at=0)
    assert ended == END and scan.top == 40 and scan.low == 39 and scan.low_at == NOW - 20


def test_an_empty_list_leaves_the_scan_as_it_was():
    scan = Scan(top=5, top_at=NOW - 60)
    fresh, after, ended = scan.step([], None, stop_at=0)
    assert fresh == [] and ended == END and after.top == 5


def test_a_pass_given_up_begins_anew_at_the_head_and_the_scan_round_trips_through_its_stored_form():
    scan = Scan(top=5, top_at=NOW - 60, head=9, head_at=NOW - 1, next_url="old-link", recent=(5,), head_recent=(9,))
    assert Scan.from_data(scan.to_data()) == scan
    restarted = scan.restarted()
    assert not restarted.under_way and restarted.top == 5 and Scan.from_data(restarted.to_data()) == restarted
    assert Scan.from_data(None) == Scan()
