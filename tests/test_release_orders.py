"""Property: a release pull request's history, delivered in any order, twice, with transient faults and their
redelivery, ends with the chat showing what GitHub last said (docs/signals.md "Releases", docs/attention.md).

    make test-deep     ten times the examples, searched anew (the suite runs the same 20, to stay fast)
    FUZZ_HARSH=1                     also answers lost after acting, the table throttled, the merge failing
"""

from __future__ import annotations

import datetime as dt
import os

from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st
from support import examples

from pager.signals.release import MERGES, NOT_MERGEABLE
from pager_world.cases import BRANCH, published, pull, suite_passed
from pager_world.world import REPO, REPO_ID, World

KEY = f"release#{REPO_ID}#2"
TITLE = "chore(master): release 1.2.0"
EDITED = "chore(master): release 1.2.0 (edited)"
MERGE = "e" * 40
BASE = dt.datetime(2026, 12, 1, 10, 0, tzinfo=dt.UTC)
EXAMPLES = examples(20)


def at(minutes: int) -> str:
    return (BASE + dt.timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


# (service, call name pattern, kind): transient faults of one call, healed after the step
FAULTS = [None, None, None,
          ("telegram", "^sendMessage$", "telegram-5xx"), ("telegram", "^editMessageText$", "telegram-5xx"),
          ("telegram", "^deleteMessage$", "telegram-5xx"), ("github", r"^GET /repos/.*/pulls/\d+$", "github-5xx")]
if os.environ.get("FUZZ_HARSH"):  # harsher: answers lost after acting, the table throttled
    FAULTS += [("telegram", "^editMessageText$", "telegram-no-answer"),
               ("store", r"^save release#", "store"), ("github", r"^PUT .*/merge$", "github-5xx"),
               ("github", r"^PUT .*/merge$", "github-no-answer")]
PRESSES = [None, None, "press", "press twice", "press with fault"]


@st.composite
def histories(draw):
    pushes = draw(st.integers(0, 2))
    heads = [str(i + 1) * 40 for i in range(pushes + 1)]
    events = [("opened", "pull_request", pull("opened", head=heads[0], updated_at=at(0)))]
    suites = {}
    for i, head in enumerate(heads):
        if i:
            events.append((f"sync{i}", "pull_request", pull("synchronize", head=head, updated_at=at(10 * i))))
        conclusion = draw(st.sampled_from([None, "success", "success", "failure"]))
        suites[head] = conclusion
        if conclusion:
            events.append((f"suite{i}:{conclusion}", "check_suite", suite_passed(head, conclusion)))
    title = TITLE
    if draw(st.booleans()):
        title = EDITED
        events.append(("edited", "pull_request", pull("edited", head=heads[-1], updated_at=at(10 * len(heads) + 1),
                                                     **{"pull_request.title": title})))
    end = draw(st.sampled_from(["open", "open", "merged", "closed"]))
    # GitHub's mergeable_state once the last head's checks passed: merged by its own button (offered 🔀), or not (a
    # review required, conflicts); while they have not passed, a check failing or pending
    gate = draw(st.sampled_from(["clean", "clean", "unstable", "has_hooks", "blocked", "dirty"]))
    end_at = at(10 * len(heads) + 5)
    live = {"number": 2, "state": "open", "title": title, "html_url": f"https://github.com/{REPO}/pull/2",
            "head": {"sha": heads[-1], "ref": BRANCH}, "base": {"ref": "master"}, "updated_at": end_at if end != "open"
            else at(10 * len(heads) + 1 if title == EDITED else 10 * (len(heads) - 1)), "merged": False,
            "mergeable_state": gate if suites[heads[-1]] == "success" else ("blocked" if gate == "blocked" else "unstable")}
    tagged = False
    if end == "merged":
        events.append(("merged", "pull_request", pull("closed", head=heads[-1], updated_at=end_at, **{
            "pull_request.title": title, "pull_request.state": "closed", "pull_request.merged": True,
            "pull_request.merged_at": end_at, "pull_request.merge_commit_sha": MERGE})))
        live.update(state="closed", merged=True, merge_commit_sha=MERGE, merged_at=end_at)
        if draw(st.booleans()):
            tagged = True
            events.append(("published", "release", published(at=at(10 * len(heads) + 8))))
    elif end == "closed":
        events.append(("closed", "pull_request", pull("closed", head=heads[-1], updated_at=end_at, **{
            "pull_request.title": title, "pull_request.state": "closed", "pull_request.merged": False})))
        live.update(state="closed")
    # the deliveries: each event once, some twice, in any order; a fault maybe; a press maybe
    dups = draw(st.lists(st.sampled_from(range(len(events))), max_size=4))
    order = draw(st.permutations(list(range(len(events))) + dups))
    steps = [(i, draw(st.sampled_from(FAULTS)), draw(st.sampled_from(PRESSES))) for i in order]
    redelivery = draw(st.randoms(use_true_random=False))
    return History(heads=heads, events=events, suites=suites, title=title, end=end, gate=gate, live=live,
                   tagged=tagged, steps=steps, redelivery=redelivery)


class History(dict):
    def __repr__(self):
        steps = [(self["events"][i][0], fault, pressing) for i, fault, pressing in self["steps"]]
        return (f"History(events={[e[0] for e in self['events']]}, end={self['end']}, gate={self['gate']}, "
                f"suites={ {k[:1]: v for k, v in self['suites'].items()} }, steps={steps})")


def release_messages(world):
    return {m: s for m, s in world.chat.view().items() if f"{REPO}#2<" in s[0] or f"{REPO}#2</a>" in s[0]}


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(h=histories())
def test_release_history_in_any_order(private_key_pem, h):
    world = World(private_key_pem)
    world.hub.pulls[(REPO, 2)] = dict(h["live"])
    events = list(h["events"])
    guids: dict[int, str] = {}
    status_of: dict[str, int] = {}
    ready_heads: list[str] = []
    buzzes_seen = 0
    pressed_merged = None
    note(f"history: {[e[0] for e in events]} end={h['end']} gate={h['gate']} suites={h['suites']}")

    def check_now(where, ok=True):
        nonlocal buzzes_seen
        shown = release_messages(world)
        # A step that failed midway (a repost sent, its old message not yet deleted) is delivered again, and
        # deletes it then at the latest (a delivery pager ignores meanwhile, a suite that failed, does not)
        if ok and all(s == 200 for s in status_of.values()):
            assert len(shown) <= 1, (where, shown)
        record = world.store.dump().get(KEY, {})
        for _, s in shown.items():
            if s[1]:
                assert h["suites"].get(record.get("head")) == "success", ("Merge offered for a head without passed checks", where, record.get("head"), s)
        for (_, _, line) in world.chat.buzzes[buzzes_seen:]:
            if "ready to merge" in line:
                ready_heads.append(record.get("head"))
        buzzes_seen = len(world.chat.buzzes)
        assert len(ready_heads) == len(set(ready_heads)), ("ready buzzed twice for a head", where, ready_heads)

    def arm(fault):
        if fault is not None:
            service, pattern, kind = fault
            world.faults.fail(service, pattern, kind=kind)

    def one(i, fault):
        label, event, payload = events[i]
        arm(fault)
        again = i in guids
        if again:
            status, answer = world.deliver_again(guids[i])
        else:
            guids[i] = f"g-{i}-{label}"
            status, answer = world.deliver(event, payload, guid=guids[i])
        world.faults.heal()
        status_of[guids[i]] = status
        note(f"deliver {label}{' again' if again else ''} fault={fault}: {status} {answer.get('outcome') or answer.get('error')}")
        check_now(label, status == 200)

    def press(how, fault):
        nonlocal pressed_merged
        shown = release_messages(world)
        if not shown:
            return
        offered = [m for m, (_, buttons) in shown.items() if buttons]
        if not offered:
            return
        message_id = max(offered)
        head = world.store.dump()[KEY]["head"]
        before = len(world.hub.merges)
        if how == "press with fault":
            arm(fault or ("telegram", "^editMessageText$", "telegram-5xx"))
        data = world.chat.button_data(message_id, "🔀")
        update = world.press_update(data, message_id=message_id)
        status, answer = world.update(update)
        world.faults.heal()
        event("pressed Merge")
        note(f"press Merge (shown head {head[:1]}, {how}): {status} {answer}")
        assert status == 200
        if how == "press twice" or str(answer.get("outcome", "")).startswith("failed"):
            status, answer = world.update(update)  # Telegram retries the same update
            note(f"  press again: {status} {answer}")
        for merge in world.hub.merges[before:]:
            assert merge.get("sha") == head, ("merged a head other than the one shown", merge, head)
        if len(world.hub.merges) > before:
            live = world.hub.pulls[(REPO, 2)]
            live.update(updated_at=at(200), merged_at=at(200))
            pressed_merged = live["merge_commit_sha"]
            event("merged by the press")
            events.append(("merged-by-press", "pull_request", pull("closed", head=head, updated_at=at(200), **{
                "pull_request.title": h["title"], "pull_request.state": "closed", "pull_request.merged": True,
                "pull_request.merged_at": at(200), "pull_request.merge_commit_sha": pressed_merged})))
            one(len(events) - 1, None)
        check_now("press")

    for i, fault, pressing in h["steps"]:
        one(i, fault)
        world.advance(1)
        if pressing:
            press(pressing, fault)
    # GitHub (the sweep) delivers again the failed ones, faults healed
    failures = sum(1 for s in status_of.values() if s != 200)
    for _ in range(3):
        failed = [g for g, s in status_of.items() if s != 200]
        if not failed:
            break
        world.advance(10)  # the sweep's redelivery comes minutes later (a lost answer's claim has lapsed)
        h["redelivery"].shuffle(failed)
        for g in failed:
            i = next(k for k, v in guids.items() if v == g)
            one(i, None)
    assert all(s == 200 for s in status_of.values()), ("500 once healed", status_of)
    assert world.pending_claims() == []
    check_now("end")

    shown = release_messages(world)
    event(f"end {h['end']}; faults {sum(1 for _, f, _ in h['steps'] if f)}; redelivered {bool(failures)}")
    if not shown and not world.chat.sent:
        return  # never shown (its end came first, the rest is stale): nothing to show (release.py decide_closed)
    end = "merged" if pressed_merged else h["end"]
    title = h["title"]
    if end == "merged":
        commit = pressed_merged or MERGE
        [(_, (text, buttons))] = shown.items()
        assert text.startswith("✅") and commit[:7] in text and buttons is None, text
        if h["tagged"]:
            assert "v1.2.0" in text, text
        assert title in text, text
    elif end == "closed":
        [(_, (text, buttons))] = shown.items()
        assert "closed without merging" in text and buttons is None, text
        assert title in text, text
    else:
        [(_, (text, buttons))] = shown.items()
        passed = h["suites"][h["heads"][-1]] == "success"
        if passed and h["gate"] in MERGES:
            assert "ready to merge" in text and buttons == (("🔀 Merge",),), text
        else:
            assert buttons is None and "ready to merge" not in text, text
            if passed:  # GitHub's reason, in its words
                assert NOT_MERGEABLE[h["gate"]].format(base="master") in text, text
        assert title in text, text


def test_a_title_edited_before_a_press_merge_reaches_the_merged_message(private_key_pem):
    """Shrunk: opened, suite passed, edited (its delivery fails), 🔀 pressed, then GitHub's closed (merged, new title)
    and the edited again: the message keeps the old title."""
    world = World(private_key_pem)
    head = "1" * 40
    world.hub.pulls[(REPO, 2)] = {"number": 2, "state": "open", "title": EDITED, "html_url": f"https://github.com/{REPO}/pull/2",
                                  "head": {"sha": head, "ref": BRANCH}, "base": {"ref": "master"}, "updated_at": at(1),
                                  "merged": False, "mergeable_state": "clean"}
    world.deliver("pull_request", pull("opened", head=head, updated_at=at(0)))
    world.deliver("check_suite", suite_passed(head))
    world.faults.fail("telegram", "^editMessageText$", kind="telegram-5xx")
    edited = pull("edited", head=head, updated_at=at(1), **{"pull_request.title": EDITED})
    assert world.deliver("pull_request", edited, guid="edited")[0] == 500
    world.faults.heal()
    [message_id] = world.chat.view()
    assert world.press("🔀", message_id)[0] == 200
    sha = world.hub.pulls[(REPO, 2)]["merge_commit_sha"]
    closed = pull("closed", head=head, updated_at=at(5), **{"pull_request.title": EDITED, "pull_request.state": "closed",
                  "pull_request.merged": True, "pull_request.merged_at": at(5), "pull_request.merge_commit_sha": sha})
    print(world.deliver("pull_request", closed)[1])
    print(world.deliver_again("edited")[1])
    [(text, _)] = world.chat.view().values()
    assert EDITED in text, text


def test_a_repost_whose_old_message_could_not_be_deleted_is_tidied_by_a_stale_delivery(private_key_pem):
    """Shrunk: opened, a new head, its suite passed (🔀 offered: the message posted anew with a sound, the
    old one's delete answered 502: 500), then the first opened delivered again (stale: older than the head)."""
    world = World(private_key_pem)
    old, new = "1" * 40, "2" * 40
    world.hub.pulls[(REPO, 2)] = {"number": 2, "state": "open", "title": TITLE, "html_url": f"https://github.com/{REPO}/pull/2",
                                  "head": {"sha": new, "ref": BRANCH}, "base": {"ref": "master"}, "updated_at": at(1),
                                  "merged": False, "mergeable_state": "clean"}
    world.deliver("pull_request", pull("opened", head=old, updated_at=at(0)), guid="opened")
    world.deliver("pull_request", pull("synchronize", head=new, updated_at=at(1)))
    world.faults.fail("telegram", "^deleteMessage$", kind="telegram-5xx")
    assert world.deliver("check_suite", suite_passed(new))[0] == 500
    world.faults.heal()
    assert len(release_messages(world)) == 2  # the ready message, and the one it was to replace
    assert world.deliver_again("opened")[1]["outcome"].endswith("stale: older than the recorded head")
    [(_, buttons)] = release_messages(world).values()
    assert buttons == (("🔀 Merge",),)
