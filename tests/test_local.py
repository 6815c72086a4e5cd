"""The local pieces of `make serve`: the .env reader and the HTTP-to-API-Gateway translation."""

from __future__ import annotations

import base64

from pager.admin.deployment import read_dotenv
from pager_world.events import apigw_event


def test_a_dotenv_file_gives_its_values_without_quotes_comments_or_export(tmp_path):
    env = tmp_path / ".env"
    env.write_text(
        "# pager\n\nexport GITHUB_APP_ID=123\nTELEGRAM_CHAT_ID='-100'\n"
        'GITHUB_PRIVATE_KEY="-----BEGIN-----\\nabc\\n-----END-----"\nbroken line\n'
    )
    assert read_dotenv(env) == {
        "GITHUB_APP_ID": "123",
        "TELEGRAM_CHAT_ID": "-100",
        "GITHUB_PRIVATE_KEY": "-----BEGIN-----\nabc\n-----END-----",
    }
    assert read_dotenv(tmp_path / "absent") == {}


def test_a_json_request_arrives_as_text_and_a_form_request_base64_encoded_as_on_api_gateway():
    json_event = apigw_event("POST", "/github", {"Content-Type": "application/json", "X-GitHub-Event": "ping"}, b'{"a": 1}')
    assert json_event["body"] == '{"a": 1}' and not json_event["isBase64Encoded"]
    assert json_event["headers"]["x-github-event"] == "ping"
    form = b"payload=%7B%22a%22%3A1%7D"
    form_event = apigw_event("POST", "/github", {"Content-Type": "application/x-www-form-urlencoded"}, form)
    assert form_event["isBase64Encoded"] and base64.b64decode(form_event["body"]) == form


def test_a_session_without_proxy_settings_reads_its_ca_bundle_once_and_skips_the_environment_scan():
    import requests

    from pager.bootstrap import configure_session

    plain = configure_session(requests.Session(), {"PATH": "/bin"})
    assert plain.trust_env is False and plain.verify is True
    bundled = configure_session(requests.Session(), {"REQUESTS_CA_BUNDLE": "/etc/ca.pem"})
    assert bundled.trust_env is False and bundled.verify == "/etc/ca.pem"
    proxied = configure_session(requests.Session(), {"HTTPS_PROXY": "http://proxy:3128"})
    assert proxied.trust_env is True
