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
    # ... while the release ready to merge calls at once
    assert any(t.startswith('✅ <a href="https://github.com/acme/app/pull/40">acme/app#40</a> merged') for t in first)
    # the mute, the muted repository's comment arriving without a sound, the answers to commands replies
    muted = next(m for m in chat if "carol commented" in m.text)
    assert not muted.notified
    assert any(m.text.startswith("🔕 acme/app muted for 2 h") and m.reply_to for m in chat)
    assert any(m.text.startswith("📋 pager at 10:43: 1 repository red") and not m.notified for m in chat)
    # the rest's end: one call for alice and bob, the alarm still red (not carol: acme/app is muted)
    call = next(m for m in chat if m.text.startswith("📬"))
    assert call.notified and call.text.splitlines()[0] == (
        '📬 Without a sound since 08:26: 2 from outside (<a href="https://github.com/acme/lib">acme/lib</a>)')
    assert "alice opened discussion" in call.text and "bob commented" in call.text and "carol" not in call.text
    # the night: dave's discussion silent, and one summary at the end of quiet hours
    assert not next(m for m in chat if "dave opened discussion" in m.text).notified
    assert first[-1].startswith("🌅 Quiet hours are over (22:00–07:00): 1 from outside") and chat[-1].notified
    rang = [text for _, _, text in played.telegram.buzzes]
    assert [t.split()[0] for t in rang] == ["🚨", "🔀", "📬", "⚙️", "🌅"]
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
    assert "The phone buzzed 5 times in all:" in output


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_demo_writes_bold_headings_only_to_a_terminal_without_no_color(demo):
    _, output = demo
    assert "\033[" not in output  # written into a file (here a buffer): plain text
    assert Demo(out=Terminal(), environ={}).bold
    assert not Demo(out=Terminal(), environ={"NO_COLOR": "1"}).bold
