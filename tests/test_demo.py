"""The offline demo (`make demo`) end to end: its story ends as the README says it does."""

from __future__ import annotations

import io

import pytest
from support import own_words, said

from pager_local.demo import Demo


@pytest.fixture(scope="module")
def demo(request):
    out = io.StringIO()
    played = Demo(out=out)
    played.run()
    return played, out.getvalue()


def test_the_demo_story_is_the_phone_of_a_maintainer_who_is_called_only_when_needed(demo):
    played, output = demo
    chat = played.telegram.chat()
    first = [m.text.splitlines()[0] for m in chat]
    # the flaky CI run never rang, its stale failure reopened nothing, and the all clear says what was red
    assert first[0].startswith('✅ <a href="https://github.com/acme/lib">acme/lib</a> is green again on main after 6 min')
    assert not chat[0].notified and "<s>" in chat[0].text
    # what stayed red rang once, posted anew; 🛠 shows who started the fix
    red = next(m for m in chat if "Deploy run #41 failed" in m.text)
    assert red.notified and "🛠 Start fix" in str(red.buttons)  # the fix started at 08:27 held an hour
    # the phone rests after the alarm's call: alice's discussion, delivered again by the sweep, is silent ...
    alice = next(m for m in chat if "alice opened discussion" in m.text)
    assert "&lt;retries&gt;" in alice.text and not alice.notified
    # ... and so is the release ready to merge (it can wait); Ana sees it and merges
    assert any(t.startswith('✅ <a href="https://github.com/acme/app/pull/40">acme/app#40</a> merged') for t in first)
    # the mute, the muted repository's comment arriving without a sound, the answers to commands replies
    muted = next(m for m in chat if "carol commented" in m.text)
    assert not muted.notified
    assert any(m.text.startswith("🔕 acme/app muted for 2 h") and m.reply_to for m in chat)
    # a second repository red past its grace rings during the rest; what the rest kept follows it silently
    web = next(m for m in chat if "acme/web</a> is red on main" in m.text)
    assert web.notified and "👀 seen by Ana Tue 09:22" in web.text and "👀 Seen" not in str(web.buttons)
    kept = next(m for m in chat if m.text.startswith("📬"))
    assert not kept.notified and kept.text.splitlines()[0] == '📬 2 new from outside — <a href="https://github.com/acme/lib">acme/lib</a>'
    assert "alice opened discussion" in kept.text and "bob commented" in kept.text and "carol" not in kept.text
    status = next(m for m in chat if m.text.startswith("📋 pager at 10:23: 2 repositories red"))
    assert not status.notified and "· 👀 seen by Ana" in status.text
    # the night: dave's discussion kept, and posted anew with a sound at the end of quiet hours, as itself
    assert first[-1].startswith("💬 dave opened discussion") and chat[-1].notified
    rang = [text for _, _, text in played.telegram.buzzes]
    assert [t.split()[0] for t in rang] == ["🚨", "🚨", "⚙️", "💬"]
    assert not any("green again" in t or "release pull request opened" in t for t in rang)
    assert [d["event_type"] for d in played.github.dispatches].count("pager-fix") == 1
    assert [(m["repository"], m["number"], m["sha"]) for m in played.github.merges] == [("acme/app", 40, "c" * 40)]


def test_everything_the_demo_says_in_the_chat_is_in_githubs_words(demo):
    played, _ = demo
    texts = said(played.telegram.requests)
    assert len(texts) > 30  # every message sent and edited, every button, every answer to a press
    assert [(words, text[:120]) for text in texts for words in own_words(text)] == []


def test_the_demo_prints_the_chat_each_sweeps_summary_and_the_phones_marks(demo):
    _, output = demo
    assert output.count("sweep: {") == 5
    assert "the chat" in output and "🔔 [" in output and "🔕 [" in output and "🔀 Merge" in output
    assert "The phone buzzed 4 times in all:" in output


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_demo_writes_bold_headings_only_to_a_terminal_without_no_color(demo):
    _, output = demo
    assert "\033[" not in output  # written into a file (here a buffer): plain text
    assert Demo(out=Terminal(), environ={}).bold
    assert not Demo(out=Terminal(), environ={"NO_COLOR": "1"}).bold
