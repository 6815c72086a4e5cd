"""The SAM template and the deploy settings, read as data: what a first deployment relies on."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


class _Loader(yaml.SafeLoader):
    pass


_Loader.add_multi_constructor("!", lambda loader, suffix, node: {suffix: loader.construct_scalar(node)}
                              if isinstance(node, yaml.ScalarNode) else {suffix: None})


def template() -> dict:
    return yaml.load((ROOT / "template.yaml").read_text(), Loader=_Loader)


def functions() -> dict:
    return {name: r["Properties"] for name, r in template()["Resources"].items() if r["Type"] == "AWS::Serverless::Function"}


def test_each_function_lets_lambda_filter_its_json_logs_at_the_chosen_level():
    # With LogFormat JSON, Lambda filters application logs at INFO unless ApplicationLogLevel says
    # otherwise, so LogLevel=DEBUG would show nothing more without it.
    allowed = set(template()["Parameters"]["LogLevel"]["AllowedValues"])
    assert allowed <= {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"}
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


def test_a_guided_deploy_saves_its_answers_in_a_file_git_ignores():
    makefile = (ROOT / "Makefile").read_text()
    assert "deploy --config-file $(DEPLOY_CONFIG)" in makefile and "DEPLOY_CONFIG := samconfig.local.toml" in makefile
    assert "samconfig.local.toml" in (ROOT / ".gitignore").read_text().split()
