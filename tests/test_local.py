"""The local pieces of `make serve`: the .env reader and the HTTP-to-API-Gateway translation."""

from __future__ import annotations

import base64
import contextlib

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from dotenv import dotenv_values

from pager.admin.deployment import read_dotenv, write_dotenv
from pager.github import signing_key
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


def test_a_comment_after_a_value_is_left_out_as_python_dotenv_does_and_a_byte_order_mark_is_no_name(tmp_path):
    env = tmp_path / ".env"
    env.write_text(
        "\ufeffGITHUB_APP_ID=123\n"  # an editor's byte order mark before the first name
        "GITHUB_WEBHOOK_SECRET=whsec-abc   # from the app's page\n"
        "TELEGRAM_CHAT_ID=-1001234567890\t# the group\n"
        "TELEGRAM_BOT_TOKEN='1:AA-b' # BotFather's\n"
        'TELEGRAM_WEBHOOK_SECRET="a # b"\n'  # inside quotes, the value's own
        "CONTROL_REPOSITORY=o/r#main\n"  # no space before it: the value's own
        "=orphan\n",  # names nothing: skipped
        encoding="utf-8")
    assert read_dotenv(env) == {"GITHUB_APP_ID": "123", "GITHUB_WEBHOOK_SECRET": "whsec-abc",
                                "TELEGRAM_CHAT_ID": "-1001234567890", "TELEGRAM_BOT_TOKEN": "1:AA-b",
                                "TELEGRAM_WEBHOOK_SECRET": "a # b", "CONTROL_REPOSITORY": "o/r#main"}


def test_setup_updates_a_dotenv_saved_with_a_byte_order_mark_in_place(tmp_path):
    env = tmp_path / ".env"
    env.write_text("\ufeffGITHUB_APP_ID=1\nTELEGRAM_CHAT_ID=-100 # the group\n", encoding="utf-8")
    assert write_dotenv(env, {"GITHUB_APP_ID": "2"})
    assert env.read_text(encoding="utf-8").splitlines() == ['GITHUB_APP_ID="2"', "TELEGRAM_CHAT_ID=-100 # the group"]
    assert read_dotenv(env) == {"GITHUB_APP_ID": "2", "TELEGRAM_CHAT_ID": "-100"}


@pytest.mark.parametrize("value", ['pass" #word', 'a"b', "x\\y", "a line\nand another", "", "it's", "tab\tbeside",
                                   "ends in \\", "${HOME} and $HOME", "cr\rlf\r\n", "\\n is no line break"])
def test_what_setup_writes_in_dotenv_reads_back_the_same_and_is_not_written_again(tmp_path, value):
    env = tmp_path / ".env"
    assert write_dotenv(env, {"GITHUB_WEBHOOK_SECRET": value})
    assert read_dotenv(env)["GITHUB_WEBHOOK_SECRET"] == value
    assert dotenv_values(env, interpolate=False)["GITHUB_WEBHOOK_SECRET"] == value  # python-dotenv reads it so too
    assert not write_dotenv(env, {"GITHUB_WEBHOOK_SECRET": value})


def test_a_private_key_pasted_into_dotenv_across_lines_in_double_quotes_is_read_whole(tmp_path, private_key_pem):
    # python-dotenv's README: "Multiline values" in double quotes, `export`, comments, escapes in double quotes
    env = tmp_path / ".env"
    env.write_text(f'# the app\nexport GITHUB_APP_ID=123  # its id\nGITHUB_PRIVATE_KEY="{private_key_pem}"\n'
                   'TELEGRAM_WEBHOOK_SECRET="a\\"b\\\\c" # escaped\nTELEGRAM_CHAT_ID=\'-100 # inside\'\n', encoding="utf-8")
    values = read_dotenv(env)
    assert values == {"GITHUB_APP_ID": "123", "GITHUB_PRIVATE_KEY": private_key_pem,
                      "TELEGRAM_WEBHOOK_SECRET": 'a"b\\c', "TELEGRAM_CHAT_ID": "-100 # inside"}
    assert values == dotenv_values(env, interpolate=False)
    assert isinstance(signing_key(values["GITHUB_PRIVATE_KEY"]), rsa.RSAPrivateKey)


def test_a_private_key_pasted_across_lines_without_quotes_is_its_first_line_as_python_dotenv_reads_it(tmp_path,
                                                                                                  private_key_pem):
    env = tmp_path / ".env"
    env.write_text(f"GITHUB_APP_ID=123\nGITHUB_PRIVATE_KEY={private_key_pem}", encoding="utf-8")
    assert read_dotenv(env)["GITHUB_PRIVATE_KEY"] == private_key_pem.splitlines()[0]
    assert dotenv_values(env, interpolate=False)["GITHUB_PRIVATE_KEY"] == private_key_pem.splitlines()[0]


def test_setup_replaces_a_key_pasted_across_lines_whole_and_keeps_the_rest_as_written(tmp_path, private_key_pem):
    env = tmp_path / ".env"
    written = f'# mine\n\nGITHUB_PRIVATE_KEY="{private_key_pem}"  # pasted\nPORT=9000 # local\nGITHUB_APP_ID=1\nGITHUB_APP_ID=2'
    env.write_text(written, encoding="utf-8")
    assert write_dotenv(env, {"TELEGRAM_CHAT_ID": "-100"})  # added at the end, the rest as it was
    assert env.read_text(encoding="utf-8") == written + '\nTELEGRAM_CHAT_ID="-100"\n'
    assert write_dotenv(env, {"GITHUB_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nnew\n-----END PRIVATE KEY-----\n",
                              "GITHUB_APP_ID": "3"})
    lines = env.read_text(encoding="utf-8").splitlines()
    assert lines == ["# mine", "", 'GITHUB_PRIVATE_KEY="-----BEGIN PRIVATE KEY-----\\nnew\\n-----END PRIVATE KEY-----\\n"',
                     "PORT=9000 # local", 'GITHUB_APP_ID="3"', 'GITHUB_APP_ID="3"', 'TELEGRAM_CHAT_ID="-100"']
    assert read_dotenv(env) == {"GITHUB_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nnew\n-----END PRIVATE KEY-----\n",
                                "PORT": "9000", "GITHUB_APP_ID": "3", "TELEGRAM_CHAT_ID": "-100"}


def test_make_serve_names_a_dotenv_that_is_not_utf8_and_takes_its_port_from_it(monkeypatch, tmp_path):
    code, output, _ = _serve(monkeypatch, tmp_path, dict(VALID, PORT="http"))
    assert code == 2 and "  - PORT must be a port number (1 to 65535)\n" in output, output
    (tmp_path / ".env").write_bytes("GITHUB_APP_SLUG=caf\xe9\n".encode("latin-1"))
    code, output, _ = _serve(monkeypatch, tmp_path, {}, write=False)
    assert code == 2 and "  - .env is not UTF-8 text (byte 19): save it as UTF-8\n" in output, output
    assert "Traceback" not in output


def test_make_serve_listens_on_the_port_dotenv_names(monkeypatch, tmp_path):
    from pager_local import serve

    ports = []
    monkeypatch.setattr(serve, "table", lambda environ, named: contextlib.nullcontext())
    monkeypatch.setattr(serve, "serve", lambda args: ports.append(args.port) or 0)
    write_dotenv(tmp_path / ".env", dict(VALID, PORT="18091"))
    assert serve.main(["--env-file", str(tmp_path / ".env")], {}) == 0 and ports == [18091]
    assert serve.main(["--env-file", str(tmp_path / ".env"), "--port", "9001"], {}) == 0 and ports[-1] == 9001


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


VALID = {"PAGER_TABLE": "pager-local", "GITHUB_APP_ID": "12345", "GITHUB_APP_SLUG": "pager-test",
         "GITHUB_PRIVATE_KEY": "-----BEGIN PRIVATE KEY-----\nx\n-----END PRIVATE KEY-----",
         "GITHUB_WEBHOOK_SECRET": "s", "TELEGRAM_BOT_TOKEN": "1:t", "TELEGRAM_WEBHOOK_SECRET": "s",
         "TELEGRAM_CHAT_ID": "-1001", "CONTROL_REPOSITORY": "maintainer/pager"}


def test_make_serve_names_every_problem_of_its_settings_at_once():
    from pager_local.serve import settings_problems

    assert settings_problems(dict(VALID)) == []
    [missing] = settings_problems({})  # nothing set: all nine required settings named, in one line
    assert missing.startswith("missing PAGER_TABLE, GITHUB_APP_ID, GITHUB_APP_SLUG, GITHUB_PRIVATE_KEY, ")
    assert len(missing.split(" (")[0].split(", ")) == 9  # the table, the app's id and slug, four secrets, chat, control
    wrong = settings_problems(dict(VALID, GITHUB_PRIVATE_KEY="not a key", GITHUB_API_URL="ftp://x",
                                   CONTROL_REPOSITORY="pager", TELEGRAM_CHAT_ID="chat", TELEGRAM_ALLOWED_USERS="bob",
                                   SWEEP_CALL_BUDGET="lots", SWEEP_MAX_ATTEMPTS="0", GITHUB_APP_SLUG="Pager App",
                                   TELEGRAM_WEBHOOK_SECRET="has spaces", TELEGRAM_BOT_TOKEN="token"))
    named = " ".join(problem.split(" ")[0] for problem in wrong)
    for name in ("GITHUB_PRIVATE_KEY", "GITHUB_API_URL", "CONTROL_REPOSITORY", "TELEGRAM_CHAT_ID", "TELEGRAM_ALLOWED_USERS",
                 "SWEEP_CALL_BUDGET", "SWEEP_MAX_ATTEMPTS", "GITHUB_APP_SLUG", "TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_BOT_TOKEN"):
        assert name in named, (name, wrong)
    assert len(wrong) == 10


REQUIRED = ("PAGER_TABLE", "GITHUB_APP_ID", "GITHUB_APP_SLUG", "GITHUB_PRIVATE_KEY", "GITHUB_WEBHOOK_SECRET",
            "TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "TELEGRAM_CHAT_ID", "CONTROL_REPOSITORY")


def _serve(monkeypatch, tmp_path, dotenv: dict[str, str], environ: dict[str, str] | None = None,
           write: bool = True) -> tuple[int, str, dict]:
    """`make serve`'s startup with this .env, up to where it would start the table and the port (which fail
    the test if reached); its exit status, what it printed, and the environment it set."""
    import io
    import sys

    from pager_local import serve

    def never(*args, **kwargs):
        raise AssertionError("nothing starts while the settings are not right")

    monkeypatch.setattr(serve, "embedded_dynamodb", never)
    monkeypatch.setattr(serve, "serve", never)
    path = tmp_path / ".env"
    if write:
        write_dotenv(path, dotenv)
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    env = dict(environ or {})
    code = serve.main(["--env-file", str(path)], env)
    return code, out.getvalue(), env


def test_make_serve_names_an_empty_pager_table_with_the_other_problems_before_it_starts_anything(monkeypatch, tmp_path):
    code, output, _ = _serve(monkeypatch, tmp_path, dict(VALID, PAGER_TABLE="", CONTROL_REPOSITORY="pager",
                                                         TELEGRAM_CHAT_ID=""))
    assert code == 2, output
    assert "Traceback" not in output and "botocore" not in output
    assert "  - missing PAGER_TABLE, TELEGRAM_CHAT_ID\n" in output and "  - CONTROL_REPOSITORY is not" in output
    assert ('fix: run `make setup SETUP_ARGS="--local <tunnel URL>"`, or edit ' in output
            and "; then `make doctor DOCTOR_ARGS=--local`\n" in output), output  # `pager` is not on the PATH


@pytest.mark.parametrize("name", REQUIRED)
@pytest.mark.parametrize("empty", ["", "  "])
def test_make_serve_takes_each_required_setting_left_empty_as_missing(monkeypatch, tmp_path, name, empty):
    code, output, _ = _serve(monkeypatch, tmp_path, dict(VALID), environ={name: empty})  # the environment wins
    assert code == 2 and f"  - missing {name}\n" in output, output
    code, output, _ = _serve(monkeypatch, tmp_path, dict(VALID, **{name: empty}))
    assert code == 2 and f"  - missing {name}\n" in output, output


def test_make_serve_embeds_its_table_when_pager_table_is_not_named_and_takes_aws_region_for_boto3(tmp_path):
    from pager_local.serve import prepare, settings_problems

    path = tmp_path / ".env"
    write_dotenv(path, {key: value for key, value in VALID.items() if key != "PAGER_TABLE"})
    environ = {"AWS_REGION": "eu-central-2"}
    assert prepare(environ, str(path)) is False  # not named: the embedded table
    assert environ["PAGER_TABLE"] == "pager-local" and environ["AWS_DEFAULT_REGION"] == "eu-central-2"
    assert settings_problems(environ) == []
    # AWS_REGION wins over AWS_DEFAULT_REGION, as for the commands (`aws_region`) and on Lambda
    environ = {"PAGER_TABLE": "pager-Table-1", "AWS_REGION": "eu-central-2", "AWS_DEFAULT_REGION": "us-west-2"}
    assert prepare(environ, str(path)) is True and environ["AWS_DEFAULT_REGION"] == "eu-central-2"
    write_dotenv(path, {"AWS_REGION": "ap-south-1"})  # .env's, under the environment's
    environ = {"AWS_DEFAULT_REGION": "us-west-2"}
    prepare(environ, str(path))
    assert environ["AWS_REGION"] == environ["AWS_DEFAULT_REGION"] == "ap-south-1"
    environ = {"AWS_REGION": "us-west-2"}
    prepare(environ, str(path))
    assert environ["AWS_REGION"] == environ["AWS_DEFAULT_REGION"] == "us-west-2"


def test_make_serve_says_where_to_set_a_region_it_takes_when_none_is_set(monkeypatch, tmp_path):
    import botocore.exceptions

    import pager.settings

    def no_region(secret_id: str):
        raise botocore.exceptions.NoRegionError()

    monkeypatch.setattr(pager.settings, "read_secret_with_powertools", no_region)
    dotenv = {key: value for key, value in VALID.items() if not key.endswith(("_KEY", "_SECRET", "_TOKEN"))}
    code, output, _ = _serve(monkeypatch, tmp_path, {**dotenv, "PAGER_SECRET_ID": "/pager/pager/secrets"})
    assert code == 2 and ("  - the secret /pager/pager/secrets could not be read: no AWS region is set (set AWS_REGION "
                          f"in the environment or in {tmp_path / '.env'})\n") in output, output
    assert "--region" not in output  # `make serve` takes none


def test_the_embedded_table_keeps_a_profiles_credentials_for_the_secret(tmp_path, monkeypatch):
    """With credentials from a profile (none in the environment), the embedded table adds no fake keys to
    the environment: they would win over the profile and the secret's read would be refused."""
    import contextlib

    from pager_local import serve

    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    credentials = tmp_path / "credentials"
    credentials.write_text("[default]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = profile-secret\n")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(credentials))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "config"))
    monkeypatch.setattr(serve, "embedded_dynamodb", lambda name: contextlib.nullcontext("http://127.0.0.1:1"))
    environ = {"PAGER_TABLE": "pager-local"}
    with serve.table(environ, named=False):
        assert "AWS_ACCESS_KEY_ID" not in environ and environ["PAGER_DYNAMODB_ENDPOINT"] == "http://127.0.0.1:1"

    credentials.unlink()  # no credentials anywhere: the embedded table's own stand-ins
    environ = {"PAGER_TABLE": "pager-local"}
    with serve.table(environ, named=False):
        assert environ["AWS_ACCESS_KEY_ID"] == "local"
