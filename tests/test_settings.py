"""Settings: the operator contract of SPEC §3, from the environment and the secret."""

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
    assert (settings.sweep_call_budget, settings.sweep_max_redeliveries, settings.sweep_max_attempts) == (50, 10, 3)
    assert (settings.sweep_window_minutes, settings.sweep_failure_pages, settings.sweep_all_pages) == (180, 3, 20)
    assert settings.telegram_allowed_users == frozenset({42})


@pytest.mark.parametrize("name", ["PAGER_TABLE", "GITHUB_APP_ID", "GITHUB_APP_SLUG", "TELEGRAM_CHAT_ID",
                                  "CONTROL_REPOSITORY", *SECRET_NAMES])
def test_a_missing_required_setting_is_one_error_naming_it(name):
    env = {k: v for k, v in ENV.items() if k != name}
    with pytest.raises(ConfigError, match=name):
        Settings.from_env(env, no_secret)


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
                                        ("SWEEP_CALL_BUDGET", "14")])  # 3 + 1 + 10 + 1: no room for the alarm's change
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
