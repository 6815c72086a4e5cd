"""The example workflows for the control repository (examples/workflows/) against what the signals send.

Each workflow must listen to the event type its signal dispatches and document every field of the
`client_payload` pager sends, so that the examples cannot drift from the code.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from pager.signals import alarm, contribution
from pager.signals.contribution import Contribution

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "workflows"


def _draft_fields() -> set[str]:
    c = Contribution(repository="o/r", kind="issue", thing="issue", noun="issue", verb="opened", number=1, title="t",
                     url="u", author="a", body="b", order="", outside=True)
    return set(contribution.draft_payload(c, 1))


def _fix_fields() -> set[str]:
    return set(alarm.fix_payload("o/r", {"message": {"id": 1}}, {"workflow:1": {"title": "t", "url": "u", "order": "1"}}))


def _documented(text: str) -> set[str]:
    """The payload fields the header comment lists: lines `#   name   explanation`."""
    header = text.split("github.event.client_payload", 1)[1].split("\n\n", 1)[0]
    return set(re.findall(r"^#   ([a-z_]+)\s{2,}", header, re.M))


@pytest.mark.parametrize(
    "name,event_type,fields",
    [
        ("pager-draft.yml", contribution.DRAFT_EVENT, _draft_fields()),
        ("pager-fix.yml", alarm.FIX_EVENT, _fix_fields()),
    ],
)
def test_each_example_workflow_listens_to_its_event_type_and_documents_every_field_pager_sends(name, event_type, fields):
    text = (EXAMPLES / name).read_text()
    workflow = yaml.safe_load(text)
    trigger = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as True
    assert trigger == {"repository_dispatch": {"types": [event_type]}}
    assert _documented(text) == fields
    for field in fields:
        assert f".{field}" in text or field in ("message_id",), f"{name} never reads {field}"


def test_the_example_workflows_never_put_payload_text_straight_into_a_script():
    for path in EXAMPLES.glob("*.yml"):
        workflow = yaml.safe_load(path.read_text())
        for job in workflow["jobs"].values():
            for step in job["steps"]:
                assert "${{" not in step.get("run", ""), f"{path.name}: {step.get('name')} interpolates into its script"
