"""The offline demo (`make demo`) end to end: its story ends as the README says it does."""

from __future__ import annotations

import io
import re

import pytest

from pager_local.demo import Demo


@pytest.fixture(scope="module")
def demo(request):
    out = io.StringIO()
    played = Demo(out=out)
    played.run()
    return played, out.getvalue()


def test_the_demo_story_ends_with_every_alarm_clear_and_the_release_merged_once(demo):
    played, output = demo
    texts = re.split(r"\n(?=[🔔🔕👤] \[)", played.telegram.render())  # a line per message, after its marks
    assert len(texts) == 5, played.telegram.render()
    assert "alice opened discussion acme/app#12" in texts[0] and "<retries>" in texts[0]
    assert "acme/lib is green again" in texts[1]
    assert "release 2.4.0" in texts[2] and "merged" in texts[2] and "v2.4.0" in texts[2]
    assert "bob commented" in texts[3]
    assert "pager is well again" in texts[4]
    assert all(buttons in (None, (("🔕 Mute for 8 h",),)) for _, buttons in played.telegram.view().values())  # nothing to press
    assert [d["event_type"] for d in played.github.dispatches] == ["pager-draft", "pager-draft"]
    assert [(m["repository"], m["number"], m["sha"]) for m in played.github.merges] == [("acme/app", 40, "c" * 40)]


def test_the_demo_prints_the_chat_and_each_sweeps_summary(demo):
    _, output = demo
    assert output.count("sweep: {") == 5
    assert "the chat" in output and "🛠 Start fix" in output and "🔀 Merge" in output


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_demo_writes_bold_headings_only_to_a_terminal_without_no_color(demo):
    _, output = demo
    assert "\033[" not in output  # written into a file (here a buffer): plain text
    assert Demo(out=Terminal(), environ={}).bold
    assert not Demo(out=Terminal(), environ={"NO_COLOR": "1"}).bold
