"""The SAM template and the deploy settings, read as data: what a first deployment relies on."""

from __future__ import annotations

import copy
import functools
from pathlib import Path

import pytest
import yaml

from pager_bench import bill

ROOT = Path(__file__).resolve().parents[1]


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("!", lambda loader, suffix, node: {suffix: loader.construct_scalar(node)}
                              if isinstance(node, yaml.ScalarNode) else {suffix: None})


@functools.lru_cache(maxsize=1)
def _parsed() -> dict:
    return yaml.load((ROOT / "template.yaml").read_text(), Loader=_Loader)


def template() -> dict:
    """template.yaml as data (parsed once; each test gets its own copy)."""
    return copy.deepcopy(_parsed())


def functions() -> dict:
    return {name: r["Properties"] for name, r in template()["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def test_each_function_lets_lambda_filter_its_json_logs_at_the_chosen_level():
    # With LogFormat JSON, Lambda filters application logs at INFO unless ApplicationLogLevel says
    # otherwise, so LogLevel=DEBUG would show nothing more without it.
    allowed = set(template()["Parameters"]["LogLevel"]["AllowedValues"])
    # Lambda counts a line without a level it knows as INFO: the EMF metric lines carry none, and
    # Powertools writes WARNING, not WARN; a level above INFO would drop the lines the alarms read.
    assert allowed == {"DEBUG", "INFO"}
    for name, props in functions().items():
        logging_config = props["LoggingConfig"]
        assert logging_config["LogFormat"] == "JSON", name
        assert logging_config["ApplicationLogLevel"] == {"Ref": "LogLevel"}, name


def test_no_secret_is_put_into_a_functions_environment():
    secrets = {"GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET"}
    variables = dict(template()["Globals"]["Function"]["Environment"]["Variables"])
    for props in functions().values():
        variables.update((props.get("Environment") or {}).get("Variables") or {})
    assert not secrets & set(variables) and "PAGER_SECRET_ID" in variables


def test_the_functions_may_read_the_secrets_parameter_and_nothing_else_of_parameter_store():
    name = template()["Globals"]["Function"]["Environment"]["Variables"]["PAGER_SECRET_ID"]
    assert name == {"Sub": "/pager/${AWS::StackName}/secrets"}
    for function, props in functions().items():
        statements = [st for policy in props["Policies"] for st in (policy.get("Statement") or [])]
        reads = [st for st in statements if "ssm" in str(st["Action"])]
        assert reads == [{"Effect": "Allow", "Action": "ssm:GetParameter", "Resource": {
            "Sub": "arn:${AWS::Partition}:ssm:${AWS::Region}:${AWS::AccountId}:parameter/pager/${AWS::StackName}/secrets"}}], function
    assert not any(r["Type"].startswith("AWS::SecretsManager") for r in template()["Resources"].values())


def test_a_guided_deploy_saves_its_answers_in_a_file_git_ignores():
    makefile = (ROOT / "Makefile").read_text()
    assert "deploy --config-file $(DEPLOY_CONFIG)" in makefile and "DEPLOY_CONFIG := samconfig.local.toml" in makefile
    # SAM refuses a --config-file that does not exist, even with --guided: the first deploy makes an empty one
    assert "test -f $(DEPLOY_CONFIG) || echo 'version = 0.1' > $(DEPLOY_CONFIG)" in makefile
    assert "samconfig.local.toml" in (ROOT / ".gitignore").read_text().split()


def alarms() -> dict:
    return {name: r["Properties"] for name, r in template()["Resources"].items() if r["Type"] == "AWS::CloudWatch::Alarm"}


def test_every_custom_metric_pager_publishes_feeds_an_alarm_and_every_alarm_reads_one_that_is_published():
    import ast

    from pager.observe import METRICS

    custom = {props["MetricName"]: props for props in alarms().values() if props.get("Namespace") == "Pager"}
    assert set(custom) == set(METRICS)
    for props in custom.values():  # Powertools publishes under the dimension service=pager
        assert props["Dimensions"] == [{"Name": "service", "Value": "pager"}]
    # the dead man's switch: no run for an hour, no data at all, breaches
    assert custom["SweepCompleted"]["TreatMissingData"] == "breaching" and custom["SweepCompleted"]["Period"] == 3600
    # the code publishes each through `count`, by name, and nothing else through the metrics object
    published = set()
    for path in (ROOT / "layers" / "pager" / "pager").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "count" and node.args:
                published.add(node.args[0].value)
            assert not (isinstance(node, ast.Attribute) and node.attr == "add_metric" and path.name != "observe.py"), path
    assert published == set(METRICS)


def test_every_alarm_goes_to_the_topic_and_the_email_subscription_exists_only_when_an_address_is_given():
    resources = template()["Resources"]
    for name, props in alarms().items():
        assert props["AlarmActions"] == [{"Ref": "AlarmTopic"}], name
    subscription = resources["AlarmEmailSubscription"]
    assert subscription["Condition"] == "HasAlarmEmail" and subscription["Properties"]["Protocol"] == "email"
    assert template()["Parameters"]["AlarmEmail"]["Default"] == ""
    # the dashboard, only when asked for (three are free; a fourth costs $3 a month), shows every alarm
    dashboard = resources["Dashboard"]
    assert dashboard["Type"] == "AWS::CloudWatch::Dashboard" and dashboard["Condition"] == "HasDashboard"
    assert template()["Parameters"]["WithDashboard"]["Default"] == "false"
    assert template()["Outputs"]["DashboardUrl"]["Condition"] == "HasDashboard"
    body = (ROOT / "template.yaml").read_text().split("\n  Dashboard:\n", 1)[1].split("\nOutputs:", 1)[0]
    assert all(f"${{{name}.Arn}}" in body for name in alarms())  # the dashboard shows every alarm
    import json
    import re

    document = body.split("- |\n", 1)[1].split("\n        - {}", 1)[0]
    widgets = json.loads(re.sub(r"\$\{[A-Za-z0-9.:]+\}", "x", document))["widgets"]
    assert {w["type"] for w in widgets} == {"alarm", "metric", "log"}


def test_the_alarms_say_what_becomes_of_a_refused_signal_and_name_pagers_own_message_as_the_chat_shows_it():
    from pager.refusals import ANSWER

    described = {name: " ".join(props["AlarmDescription"].split()) for name, props in alarms().items()}
    # a signal GitHub or Telegram refused is not lost: its delivery is answered 424 and kept, for ↻ in ⚙️ pager
    refused = described["RefusedUpstreamAlarm"]
    assert "lost" not in refused and f"answered {ANSWER}" in refused and "⚙️ pager" in refused and "↻" in refused
    # pager's own health is its own message, ⚙️ pager, no longer the control repository's alarm
    assert "⚙️ pager" in described["AlarmNotChangedAlarm"]
    assert not [name for name, text in described.items() if "control repository's alarm" in text]


def test_the_table_is_encrypted_with_the_aws_owned_key_stated_as_false_rather_than_left_out():
    # The AWS owned key: encrypted at rest all the same, no charge and no KMS request; the table holds no
    # secret (they are in the SecureString), so the AWS managed key's CloudTrail records would protect nothing.
    # `SSEEnabled: false` rather than no SSESpecification: CloudFormation switches a table deployed with the
    # AWS managed key in place when told false; an update that only removed the property has failed.
    table = template()["Resources"]["Table"]
    assert table["Type"] == "AWS::DynamoDB::Table"
    assert table["Properties"]["SSESpecification"] == {"SSEEnabled": False}
    # the bench's bill reads the same choice: a free line, no KMS request for the table
    assert bill.template_resources(ROOT / "template.yaml")["table_key"] == bill.OWNED_KEY


def test_tracing_is_a_parameter_off_by_default():
    assert template()["Parameters"]["Tracing"]["Default"] == "false"
    assert "Tracing: !If [HasTracing, Active, PassThrough]" in (ROOT / "template.yaml").read_text()


# What each parameter's AllowedPattern takes, the functions take too (and the other way round), so that a
# deploy refuses what would stop the functions: samples of what exists, and of what cannot work.
SAMPLES = {
    "ControlRepository": ["maintainer/pager", "artur-/pager", "octocat_acme/x.y_z", "pager", "a/b/c", "owner/", "o" * 40 + "/r",
                          "o/.", "o/..", "o/.x", "o/..."],
    "GitHubAppOwner": ["", "acme", "0----0", "octocat_acme", "acme.corp", "o" * 40],
    "TelegramChatId": ["-1001234567890", "42", "@mychannel", "@abc", "@1abc", "chat"],
    "TelegramThreadId": ["", "0", "7", "-7", "x"],
    "TelegramAllowedUsers": ["", "42", "1,2", "1, 2 ,3", "1 2", "alice", "1,2,", ",1", "1,,2", "   ", "1,\t2", "\t1", "١"],
    # (its least depends on SweepMaxRedeliveries, which no pattern can say: the functions' check says it)
    "SweepCallBudget": ["", "400", "5000", "0", "x"],
    "SweepMaxAttempts": ["", "1", "99", "0"],
    "SweepAllPages": ["", "20", "200", "0"],
    "AlarmGraceMinutes": ["", "0", "15", "90", "-1", "15m"],
    "QuietHours": ["", "22:00-07:00", "00:30-06:00", "22:00-22:01", "9:00-17:00", "22:00-24:00", "22:00 07:00",
                   "22:00-22:00", "07:30-07:30", "none", "None", "none-07:00"],
    "TimeZone": ["UTC", "Europe/Berlin", "America/Argentina/Buenos_Aires", "Etc/GMT+5", "Europe/ Berlin", "/etc/localtime"],
    "GitHubApiUrl": ["", "https://api.github.com", "https://ghe.example.com/api/v3", "http://127.0.0.1:8080",
                     "http://ghe.example.com/api/v3", "ftp://x", "https://"],
}


@pytest.mark.parametrize("parameter", sorted(SAMPLES))
def test_each_parameters_pattern_takes_what_the_functions_take(parameter):
    import re

    from support import TEST_ENV

    from pager.admin.deployment import PARAMETER_SETTINGS
    from pager.errors import ConfigError
    from pager.settings import Settings

    pattern = template()["Parameters"][parameter]["AllowedPattern"]
    setting = PARAMETER_SETTINGS[parameter]
    base = dict(TEST_ENV, GITHUB_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----")
    for value in SAMPLES[parameter]:
        try:
            Settings.from_env(dict(base, **{setting: value}), lambda _: {})
            taken = True
        except ConfigError:
            taken = False
        assert bool(re.fullmatch(pattern, value)) == taken, (parameter, value, taken)
