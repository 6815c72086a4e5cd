"""Settings: the operator contract (docs/settings.md), from the environment and the secret."""

from __future__ import annotations

import pytest
from support import TEST_ENV

from pager.errors import ConfigError
from pager.settings import SECRET_NAMES, Settings

ENV = dict(TEST_ENV, GITHUB_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\nnot-a-real-key\n-----END PRIVATE KEY-----")


def no_secret(_: str):
    raise AssertionError("the secret must not be read when the environment has every value")


def test_the_defaults_of_the_operator_contract_hold_when_only_required_settings_are_given():
    settings = Settings.from_env(ENV, no_secret)
    assert settings.github_app_owner == ""
    assert settings.telegram_thread_id is None
    assert settings.release_branch_prefixes == ("release-please--", "changeset-release/")
    assert settings.release_merge_method == "squash"
    # The sweep's limits are sized for Lambda and GitHub (docs/sweep.md, "Limits"), no longer the Workers plan's
    # 50 calls, 10 redeliveries and 3 / 20 pages; the attempts and the first pass's window are the decision's.
    assert (settings.sweep_call_budget, settings.sweep_max_redeliveries, settings.sweep_max_attempts) == (400, 40, 3)
    assert (settings.sweep_window_minutes, settings.sweep_failure_pages, settings.sweep_all_pages) == (180, 30, 250)
    assert settings.telegram_allowed_users == frozenset({42})


def test_quiet_hours_chosen_to_be_none_are_none_as_empty_ones_are():
    for value in ("", "none"):  # `pager setup` keeps none as chosen; empty is none, not chosen yet
        settings = Settings.from_env(dict(ENV, QUIET_HOURS=value), no_secret)
        assert settings.quiet is None and settings.quiet_hours == "", value
    assert Settings.from_env(dict(ENV, QUIET_HOURS="22:00-07:00"), no_secret).quiet is not None


@pytest.mark.parametrize("name", ["PAGER_TABLE", "GITHUB_APP_ID", "GITHUB_APP_SLUG", "TELEGRAM_CHAT_ID",
                                  "CONTROL_REPOSITORY", *SECRET_NAMES])
def test_a_missing_required_setting_is_one_error_naming_it(name):
    env = {k: v for k, v in ENV.items() if k != name}
    with pytest.raises(ConfigError, match=name):
        Settings.from_env(env, no_secret)


@pytest.mark.parametrize("name", ["PAGER_TABLE", "GITHUB_APP_ID", "GITHUB_APP_SLUG", "TELEGRAM_CHAT_ID",
                                  "CONTROL_REPOSITORY", *SECRET_NAMES])
@pytest.mark.parametrize("empty", ["", " ", "\n"])
def test_a_required_setting_left_empty_is_missing(name, empty):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(dict(ENV, **{name: empty}), no_secret)
    assert raised.value.problems == [f"missing {name}"]


def test_secrets_missing_from_the_environment_come_from_the_secret_and_the_environment_wins():
    env = {k: v for k, v in ENV.items() if k not in ("TELEGRAM_BOT_TOKEN", "GITHUB_PRIVATE_KEY")}
    env["PAGER_SECRET_ID"] = "pager/secrets"
    asked = []

    def read(secret_id):
        asked.append(secret_id)
        return {"TELEGRAM_BOT_TOKEN": "1:from-secret", "GITHUB_PRIVATE_KEY": ENV["GITHUB_PRIVATE_KEY"],
                "GITHUB_WEBHOOK_SECRET": "ignored"}

    settings = Settings.from_env(env, read)
    assert asked == ["pager/secrets"]
    assert settings.telegram_bot_token == "1:from-secret"
    assert settings.github_webhook_secret == TEST_ENV["GITHUB_WEBHOOK_SECRET"]


def test_secrets_never_show_in_the_settings_repr():
    text = repr(Settings.from_env(ENV, no_secret))
    for name in SECRET_NAMES:
        assert ENV[name] not in text


@pytest.mark.parametrize("name,value", [("SWEEP_CALL_BUDGET", "many"), ("SWEEP_MAX_ATTEMPTS", "0"),
                                        ("RELEASE_MERGE_METHOD", "fast-forward"), ("CONTROL_REPOSITORY", "pager"),
                                        ("TELEGRAM_ALLOWED_USERS", "alice"),
                                        ("SWEEP_CALL_BUDGET", "14"),  # 3 + 1 + 10 + 1: no room for the alarm's change
                                        ("BUZZ_GAP_MINUTES", "1441"), ("BUZZ_GAP_MINUTES", "-5")])  # at most a day
def test_a_malformed_setting_is_an_error_naming_it(name, value):
    with pytest.raises(ConfigError, match=name):
        Settings.from_env(dict(ENV, **{name: value}), no_secret)


def test_the_advanced_page_has_the_user_and_the_organization_form():
    user = Settings.from_env(ENV, no_secret)
    org = Settings.from_env(dict(ENV, GITHUB_APP_OWNER="acme"), no_secret)
    assert user.advanced_page == "https://github.com/settings/apps/pager-test/advanced"
    assert org.advanced_page == "https://github.com/organizations/acme/settings/apps/pager-test/advanced"


def test_lists_and_numbers_are_parsed():
    settings = Settings.from_env(dict(ENV, RELEASE_BRANCH_PREFIXES="release/, rel-", TELEGRAM_THREAD_ID="7",
                                      TELEGRAM_ALLOWED_USERS="1, 2,3", SWEEP_CALL_BUDGET="80"), no_secret)
    assert settings.release_branch_prefixes == ("release/", "rel-")
    assert settings.telegram_thread_id == 7
    assert settings.telegram_allowed_users == {1, 2, 3}
    assert settings.sweep_call_budget == 80


@pytest.mark.parametrize("name, value, said", [
    ("SWEEP_CALL_BUDGET", "+80", "SWEEP_CALL_BUDGET must be a whole number"),
    ("SWEEP_CALL_BUDGET", "8_0", "SWEEP_CALL_BUDGET must be a whole number"),
    ("ALARM_GRACE_MINUTES", "١٥", "ALARM_GRACE_MINUTES must be a whole number"),  # digits of another script
    ("ALARM_GRACE_MINUTES", "100000", "ALARM_GRACE_MINUTES must be at most 1440 (a day)"),
    ("BUZZ_GAP_MINUTES", "1441", "BUZZ_GAP_MINUTES must be at most 1440 (a day)"),
])
def test_a_number_is_written_in_the_digits_the_template_takes_and_a_wait_is_at_most_a_day(name, value, said):
    with pytest.raises(ConfigError) as raised:
        Settings.from_env(dict(ENV, **{name: value}), no_secret)
    assert said in raised.value.problems


def test_a_warm_container_takes_changed_settings_after_a_few_minutes_and_keeps_its_services_otherwise(monkeypatch, pager_env):
    from pager import bootstrap

    now = [0.0]
    bootstrap.use(None)
    first = bootstrap.services(lambda: now[0])
    now[0] = 60.0
    assert bootstrap.services(lambda: now[0]) is first
    now[0] = bootstrap.SETTINGS_REFRESH_SECONDS + 1
    assert bootstrap.services(lambda: now[0]) is first  # nothing changed: the same clients and caches
    monkeypatch.setenv("GITHUB_WEBHOOK_SECRET", "rotated")
    now[0] = 2 * bootstrap.SETTINGS_REFRESH_SECONDS + 2
    rebuilt = bootstrap.services(lambda: now[0])
    assert rebuilt is not first and rebuilt.settings.github_webhook_secret == "rotated"
    bootstrap.use(None)


@pytest.mark.parametrize("name, value", [
    ("CONTROL_REPOSITORY", "artur-/pager"), ("CONTROL_REPOSITORY", "gil--/pager"), ("CONTROL_REPOSITORY", "-Jerry-/x.y_z"),
    ("CONTROL_REPOSITORY", "octocat_acme/pager"),  # logins GitHub keeps from before its sign-up rules, and an EMU's
    ("GITHUB_APP_OWNER", "0----0"), ("TELEGRAM_THREAD_ID", "0"), ("SWEEP_ALL_PAGES", "200"),
    ("SWEEP_WINDOW_MINUTES", "10000"), ("BUZZ_GAP_MINUTES", "0"), ("BUZZ_GAP_MINUTES", "1440"), ("GITHUB_PRIVATE_KEY", "\ufeff" + ENV["GITHUB_PRIVATE_KEY"]),
    ("GITHUB_PRIVATE_KEY", "Bag Attributes\n    localKeyID: 01\n" + ENV["GITHUB_PRIVATE_KEY"]),
    ("TELEGRAM_BOT_TOKEN", "123:abc\n"),
])
def test_values_that_work_today_are_taken(name, value):
    settings = Settings.from_env(dict(ENV, **{name: value}), no_secret)
    assert settings.telegram_bot_token == ENV["TELEGRAM_BOT_TOKEN"] or settings.telegram_bot_token == "123:abc"
    if name == "TELEGRAM_THREAD_ID":
        assert settings.telegram_thread_id is None  # 0: no topic


def test_a_secrets_store_that_cannot_be_read_is_one_problem_among_the_others():
    def unreadable(_: str):
        raise ConfigError("the secret /pager/pager/secrets does not exist yet: run `pager setup`")

    env = {k: v for k, v in ENV.items() if k not in ("TELEGRAM_BOT_TOKEN", "CONTROL_REPOSITORY")}
    with pytest.raises(ConfigError) as raised:
        Settings.from_env({**env, "PAGER_SECRET_ID": "/pager/pager/secrets"}, unreadable)
    problems = raised.value.problems
    assert problems[0] == "missing TELEGRAM_BOT_TOKEN, CONTROL_REPOSITORY (TELEGRAM_BOT_TOKEN: nor in the secret /pager/pager/secrets)"
    assert "the secret /pager/pager/secrets does not exist yet: run `pager setup`" in problems


def test_user_ids_of_other_scripts_digits_are_a_problem_not_a_crash():
    with pytest.raises(ConfigError, match="TELEGRAM_ALLOWED_USERS"):
        Settings.from_env(dict(ENV, TELEGRAM_ALLOWED_USERS="\u00b2"), no_secret)


def test_a_throttled_read_of_the_secrets_is_transient_and_a_missing_or_forbidden_one_a_setting(monkeypatch):
    from aws_lambda_powertools.utilities import parameters

    from pager.errors import SecretsUnavailable
    from pager.settings import read_secret_with_powertools

    def answering(code):
        def get(*args, **kwargs):
            raise parameters.exceptions.GetParameterError(
                f"An error occurred ({code}) when calling the GetParameter operation: details")
        return get

    monkeypatch.setattr(parameters, "get_parameter", answering("ThrottlingException"))
    with pytest.raises(SecretsUnavailable, match="could not be read now: ThrottlingException"):
        read_secret_with_powertools("/pager/pager/secrets")
    monkeypatch.setattr(parameters, "get_parameter", answering("AccessDeniedException"))
    with pytest.raises(ConfigError, match="may not be read: AccessDeniedException"):
        read_secret_with_powertools("/pager/pager/secrets")


def test_a_warm_container_keeps_the_settings_that_work_when_reading_them_again_fails(monkeypatch, pager_env, log_lines):
    from pager import bootstrap

    now = [0.0]
    bootstrap.use(None)
    first = bootstrap.services(lambda: now[0])
    monkeypatch.setenv("SWEEP_MAX_ATTEMPTS", "0")  # a change that cannot work
    now[0] = bootstrap.SETTINGS_REFRESH_SECONDS + 1
    assert bootstrap.services(lambda: now[0]) is first
    [line] = [line for line in log_lines() if line["message"] == "settings not read again: the services built before stay"]
    assert line["level"] == "WARNING" and line["problems"] == ["SWEEP_MAX_ATTEMPTS must be at least 1"]
    bootstrap.use(None)
