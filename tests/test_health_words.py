"""pager's own message (⚙️ pager, the control repository's alarm) as the maintainer reads it on a phone (SPEC §6.1,
amended 2026-12-07): its first line says in one plain sentence what happened and what to do, and the status codes,
setting names, chat ids and details go on the lines below, where nothing of them is lost.

The shapes are enumerated from the code, rendered by the alarm's own pure render: every entry of pager's health
(`health.wanted`) in each of its states, every cause of GitHub's not serving the list (`health.MEANING`), every set
of services a hold can name (`health.HOLDERS`), and a failed delivery's entry for every event and action pager acts
on (`signals.SIGNALS`), named as GitHub's example payload names it or not named yet, for every reason the sweep
names one (`deliveries.WHY`, a refusal, a failure after ↻) and what a delivery left undone (`deliveries.UNDONE`).
Besides, every ⚙️ message any test has pager send in the fake world is held to the same first line (conftest.py,
`githubs_words`).
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

from support import first_line_words

from pager import words
from pager.html import escape
from pager.signals import SIGNALS
from pager.signals.alarm import CONTROL, OWN_BUTTONS, OWN_TITLE, Alarm, View, render
from pager.sweep import health
from pager.sweep.deliveries import UNDONE, WHY, Followed, Reason, delivery_detail, delivery_title, entry_of, why_named
from pager.sweep.lists import Attempt
from pager_world.payloads import example

NOW = 1_800_000_000.0
HOUR = 3600.0
URL = "https://github.com/settings/apps/pager/advanced"
FIXTURES = Path(__file__).parent / "fixtures" / "github-webhooks"
LONG = "a-rather-long-organisation-name/an-even-longer-repository-name-of-theirs"


# -- the shapes --------------------------------------------------------------------------------------------


def _refused(count: int, **more: Any) -> health.Refused:
    return health.Refused(count=count, first=NOW - 5 * HOUR, last=NOW - HOUR, last_id=9, **more)


def health_shapes() -> list[tuple[str, str, dict[str, Any]]]:
    """Every `pager:` entry in each state it can show: (what, its key, the entry)."""
    shapes: list[tuple[str, str, dict[str, Any] | None]] = []
    where = health.Where(URL, NOW)

    def add(what: str, h: health.Health, job: health.Job | None = None, w: health.Where = where,
            held: tuple[tuple[str, ...], float] | None = None) -> None:
        shapes.extend((what, key, entry) for key, entry in health.wanted(h, job, w, held).items() if entry is not None)

    for cause in health.MEANING:
        add(f"the list not served ({cause or 'no answer'})", health.Health(unserved=health.Unserved(2, NOW - HOUR, cause)))
    for n in (1, 3, 250):
        secret = _refused(n)
        add(f"{n} refused with 401", health.Health(secret=secret))
        add(f"{n} refused with 401, the secret fixed", health.Health(secret=replace(secret, works=True)))
        job = health.Job(since=NOW - 6 * HOUR, asked_at=NOW - 60, done=n // 2, status=health.SECRET_REFUSED)
        add(f"{n} refused with 401, delivered again", health.Health(secret=_refused(n, works=True)), job)
        add(f"{n} answered a 4xx not pager's", health.Health(stray=_refused(n, reason="answered 404")))
        reason = "alice's comment on acme/lib#3: Telegram refused: Forbidden: bot was kicked from the group chat"
        for services in (("github",), ("telegram",), ("github", "telegram")):
            add(f"{n} refused by {services}", health.Health(refusals=_refused(n, reason=reason, services=services)))
            add(f"{n} refused by {services}, taken again",
                health.Health(refusals=_refused(n, reason=reason, services=services, works=True)))
            job = health.Job(since=NOW - 6 * HOUR, asked_at=NOW - 60, done=n // 2, status=health.PAGE_REFUSED)
            add(f"{n} refused by {services}, delivered again",
                health.Health(refusals=_refused(n, reason=reason, services=services, works=True)), job)
        by = {f"alice's comment on {LONG}#{i}": 2 for i in range(12)}
        forgotten = health.Forgotten(count=n, first=NOW - 80 * HOUR, last=NOW - 75 * HOUR, noted=NOW, by=by)
        add(f"{n} forgotten", health.Health(forgotten=forgotten))
        add(f"{n} forgotten, and unread", health.Health(forgotten=replace(forgotten, unread=(NOW - 79 * HOUR, NOW - 78 * HOUR))))
    add("unread", health.Health(forgotten=health.Forgotten(noted=NOW, unread=(NOW - 79 * HOUR, NOW - 78 * HOUR))))
    add("the chat moved", health.Health(), w=health.Where(URL, NOW, moved={"from": "-1001", "to": "-1009876543210", "at": NOW}))
    for n in range(1, len(health.HOLDERS) + 1):
        for services in itertools.permutations(health.HOLDERS, n):
            add(f"held: {services}", health.Health(), held=health.Held(services, NOW - HOUR))
    return [(what, key, entry) for what, key, entry in shapes if entry is not None]


def _thing(event: str, action: str, repository: str) -> dict[str, Any]:
    """What a run reads of a delivery of GitHub's example payload (pager.sweep.run's naming), in `repository`."""
    try:
        payload = example(event, action)
    except FileNotFoundError:  # GitHub gives no example of this action: one of the event's own
        payload = example(event, sorted(FIXTURES.glob(f"{event}/*.payload.json"))[0].name.split(".")[0])
    payload.setdefault("repository", {})["full_name"] = repository
    thing = words.thing_of(event, payload, repository)
    return {"repository": repository, "thing": thing.label, "short": thing.short}


def delivery_shapes() -> list[tuple[str, dict[str, Any]]]:
    """A failed delivery's entry for every event and action pager acts on, for every reason the sweep names one,
    named (in a short and in a long repository), where by name only, by id only; and what it left undone."""
    refused = replace(Followed.begun(Attempt(11, "g", NOW - HOUR, True, 422, "issues"), known_first=False), refused=422)
    reasons = sorted({*WHY.values(), why_named(refused, Reason.EXHAUSTED), "delivered again, failed again"})
    shapes = []
    for (event, action), reason in itertools.product(SIGNALS, reasons):
        row = Followed.begun(Attempt(10, "6b65b9c8-1d2e-11ef-9f1c-5b3e1a2b3c4d", NOW - HOUR, False, 502, event, action,
                                     186853002))
        entry = entry_of(row, reason, URL)
        shapes.append((f"{event}.{action}, not named: {reason}", entry))
        for repository in ("acme/lib", LONG):
            where = {**entry, "repository": repository}
            shapes.append((f"{event}.{action} in {repository}, not read: {reason}", where))
            named = {**entry, **_thing(event, action, repository)}
            shapes.append((f"{event}.{action} in {repository}: {reason}", named))
            shapes += [(f"{event}.{action} in {repository}, {said}: {reason}", {**named, "undone": said})
                       for _, said, _ in UNDONE]
    # each as a run names it (pager.sweep.run.name_entries): its lines made from its fields
    return [(what, {**e, "title": delivery_title(e), "detail": delivery_detail(e)}) for what, e in shapes]


SHAPES = [(f"{key}: {what}", entry) for what, key, entry in health_shapes()] + \
         [(f"delivery: {what}", entry) for what, entry in delivery_shapes()]


def shown(entries: dict[str, dict[str, Any]]) -> tuple[str, list | None]:
    """⚙️ pager as the chat shows these entries (the alarm's own render, as the sweep stores them)."""
    stored = {key: {**entry, "rank": 0, "at": NOW - 60} for key, entry in entries.items()}
    return render(Alarm(CONTROL, "maintainer/pager"), stored, View(since=NOW - HOUR, now=NOW, zone=UTC))


# -- what they say ------------------------------------------------------------------------------------------


def test_every_entry_of_pagers_health_has_a_shape_here():
    keys = set(health.wanted(health.Health(), None, health.Where(URL, NOW)))
    assert {key for _, key, _ in health_shapes()} == keys
    # and each state of each: the list for every cause, a hold for every service
    assert len([k for _, k, _ in health_shapes() if k == health.LIST]) == len(health.MEANING)
    assert len({e["title"] for _, k, e in health_shapes() if k == health.HELD}) > len(health.HOLDERS)


def test_the_first_line_says_in_one_plain_sentence_what_happened_and_what_to_do():
    problems = []
    for what, entry in SHAPES:
        text, _ = shown({"delivery:g" if what.startswith("delivery") else "pager:x": entry})
        first, *below = text.split("\n")
        problems += [(what, found) for found in first_line_words(text)]
        if entry["title"].endswith("…") and not what.startswith("delivery"):  # a thing's long name may be cut, no more
            problems.append((what, f"cut: {entry['title']}"))
        if " — " not in entry["title"]:  # what happened — what to do
            problems.append((what, f"no action: {entry['title']}"))
        if escape(entry["detail"]) not in "\n".join(below):  # the details below it: nothing lost for the operator
            problems.append((what, f"detail not below: {text}"))
    assert problems == [] and len(SHAPES) > 800


def test_a_failed_deliverys_first_line_names_the_thing_as_short_as_it_needs_and_ends_in_its_button():
    for what, entry in delivery_shapes():
        assert entry["title"].endswith(" — press ↻ Deliver again"), what
        assert words.units(entry["title"]) <= OWN_TITLE, what
        assert "186853002" not in entry["title"], what
        if not entry.get("repository"):  # known by its id alone: the id below, for the operator
            assert "repository 186853002" in entry["detail"], what


def test_the_buttons_pagers_own_entries_ask_for_say_in_words_what_they_deliver_again():
    entries = {key: entry for _, key, entry in health_shapes() if entry.get("button")}
    assert {entry["button"] for entry in entries.values()} == {button for button, _, _ in OWN_BUTTONS}
    for _, key, entry in health_shapes():
        if entry.get("button"):
            label = dict((b, label) for b, label, _ in OWN_BUTTONS)[entry["button"]]
            assert label in ("↻ Deliver the refused deliveries again", "↻ Deliver the refused pages again")
            assert entry["title"].endswith(f"press {label}")  # the first line names the button it means
            _, buttons = shown({key: entry})
            assert buttons is not None and [label] == [text for row in buttons for text, _ in row]
    failed = {f"delivery:{i}": {**entry, "delivery_id": 70 + i} for i, (_, entry) in enumerate(delivery_shapes()[:5])}
    _, buttons = shown(failed)
    assert buttons is not None
    labels = [(text, data) for row in buttons for text, data in row]
    assert labels[0] == ("↻ Deliver all 5 again", "again:all")
    assert all(text.startswith("↻ Deliver again: ") and len(data.encode()) <= 64 for text, data in labels[1:])


def test_several_at_once_say_the_most_important_first_and_how_many_more_below():
    entries = {f"{key}#{i}": entry for i, (_, key, entry) in enumerate(health_shapes()[:6])}
    entries.update({f"delivery:{i}": entry for i, (_, entry) in enumerate(delivery_shapes()[:40])})
    text, _ = shown(entries)
    first, second, *below = text.split("\n")
    assert first_line_words(text) == [] and second == f"since {words.stamp(NOW - HOUR, UTC)} · {len(entries) - 1} more below"
    assert below[0].startswith("• ")  # each below in the operator's words, the first one too


def test_an_entry_a_version_before_wrote_is_cut_to_the_first_line_and_shown_whole_below():
    old = "1 page GitHub refused since Fri 08:15, kept; the last: x; once the cause is fixed (make doctor), ↻ delivers " \
          "them again (GitHub keeps them three days)"
    text, _ = shown({"pager:refused": {"title": old, "url": URL, "order": ""}})
    first, _, line = text.split("\n")
    assert first.endswith("…</a>") and words.units(first.split(">", 1)[1][:-4]) <= OWN_TITLE and old in line


def test_the_answers_of_the_refused_buttons_name_no_status_code():
    job = health.Job(since=NOW - HOUR, asked_at=NOW - 60, status=health.PAGE_REFUSED)
    answers = []
    for status in (health.SECRET_REFUSED, health.PAGE_REFUSED):
        for h in (health.Health(), health.Health(secret=_refused(3), refusals=_refused(3)),
                  health.Health(secret=_refused(3, works=True), refusals=_refused(3, works=True))):
            answers.append(health.start_job(None, NOW, h, status)[0])
            answers.append(health.start_job(job, NOW, h, status)[0])
    for answer in answers:  # an answer is a line of its own, at most Telegram's 200 characters
        assert first_line_words(answer, room=200) == [], answer

