"""`pager remove`, end to end through `pager.cli.main`: moto plays CloudFormation, Parameter Store, DynamoDB and
CloudWatch Logs, the fake world plays Telegram and GitHub's pages; what stays is then checked as printed.

The deployment is shaped as `make deploy` and `pager setup` leave it: a stack with template.yaml's outputs and
parameters, its table kept outside it (DeletionPolicy Retain), the secrets in their SecureString parameter,
Telegram's webhook at the stack's /telegram, and SAM's managed stack with its bucket in the same region.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from pager.admin.remove import Found, leftovers
from pager.cli import Context, main
from pager.dynamo import create_table
from pager_world.http import session_for
from pager_world.world import BOT_TOKEN, GITHUB_API, TELEGRAM_API, WEBHOOK_SECRET

REGION = "eu-central-1"  # not moto's default: every command printed must carry it
STACK = "pager"
TABLE = "pager-Table-1A2B3C"
SECRET_NAME = f"/pager/{STACK}/secrets"
TELEGRAM_HOOK = f"https://abc123.execute-api.{REGION}.amazonaws.com/telegram"
SAM_BUCKET = "aws-sam-cli-managed-default-samclisourcebucket-1x2y3z"
KEY = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7remove\n-----END PRIVATE KEY-----\n"
SECRETS = {"GITHUB_PRIVATE_KEY": KEY, "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET, "TELEGRAM_BOT_TOKEN": BOT_TOKEN,
           "TELEGRAM_WEBHOOK_SECRET": "t" * 40}
CHAT = "-1001"
MENU = {"type": "chat", "chat_id": CHAT}  # pager's command menu, in the chat's scope as setup sets it
PARAMETERS = {"GitHubAppId": "12345", "GitHubAppSlug": "pager-acme", "GitHubAppOwner": "acme",
              "GitHubApiUrl": GITHUB_API, "TelegramApiUrl": TELEGRAM_API, "TelegramChatId": CHAT}


@pytest.fixture
def aws():
    """AWS as moto plays it, with the calls made in order (`log`), for clients of any region."""
    with mock_aws():
        log: list[str] = []

        class Logged:
            def __init__(self, client: Any) -> None:
                self._client = client

            def __getattr__(self, name: str) -> Any:
                attribute = getattr(self._client, name)
                if not callable(attribute) or name.startswith(("_", "get_waiter", "get_paginator")):
                    return attribute

                def call(*args: Any, **kwargs: Any) -> Any:
                    log.append(name)
                    return attribute(*args, **kwargs)

                return call

        def factory(service: str, region: str) -> Any:
            assert region == REGION, region
            return Logged(boto3.client(service, region_name=region))

        factory.log = log  # type: ignore[attr-defined]
        yield factory


def deployed(tmp_path: Path) -> None:
    """The stack, its retained table, the secrets, SAM's managed stack, and the answers `make deploy` saved."""
    def client(service: str) -> Any:
        return boto3.client(service, region_name=REGION)

    create_table(client("dynamodb"), TABLE)
    client("ssm").put_parameter(Name=SECRET_NAME, Value=json.dumps(SECRETS), Type="SecureString")
    groups = {f"{name}LogGroup": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": f"/aws/lambda/{STACK}-{name.lower()}"}}
              for name in ("Webhook", "Sweep")}
    template = {"Parameters": {name: {"Type": "String"} for name in PARAMETERS}, "Resources": groups,
                "Outputs": {"GitHubWebhookUrl": {"Value": TELEGRAM_HOOK.replace("telegram", "github")},
                            "TelegramWebhookUrl": {"Value": TELEGRAM_HOOK}, "TableName": {"Value": TABLE},
                            "SecretName": {"Value": SECRET_NAME}}}
    client("cloudformation").create_stack(StackName=STACK, TemplateBody=json.dumps(template),
                                          Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in PARAMETERS.items()])
    sam = {"Resources": {"SamCliSourceBucket": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": SAM_BUCKET}}},
           "Outputs": {"SourceBucket": {"Value": SAM_BUCKET}}}
    client("cloudformation").create_stack(StackName="aws-sam-cli-managed-default", TemplateBody=json.dumps(sam))
    (tmp_path / "samconfig.local.toml").write_text(
        f'version = 0.1\n[default.deploy.parameters]\nstack_name = "{STACK}"\nresolve_s3 = true\ns3_prefix = "{STACK}"\n'
        f'region = "{REGION}"\ncapabilities = "CAPABILITY_IAM"\n')


@pytest.fixture
def world(make_world, aws, tmp_path):
    world = make_world()
    world.chat.token = BOT_TOKEN
    world.chat.handle("setWebhook", {"url": TELEGRAM_HOOK, "secret_token": "t" * 40})
    world.chat.handle("setMyCommands", {"commands": [{"command": "status", "description": "what is red"}], "scope": MENU})
    deployed(tmp_path)
    return world


def remove(world: Any, aws: Any, folder: Path, *argv: str, answers: tuple[str, ...] = (),
           environ: dict[str, str] | None = None) -> tuple[int, str]:
    out, asked = io.StringIO(), list(answers)

    def telegram(request: Any) -> Any:
        aws.log.append("telegram " + request.path.rsplit("/", 1)[-1])
        return world.chat(request)

    def answer(prompt: str) -> str:
        assert asked, f"asked more than the script says: {prompt!r}"
        given = asked.pop(0)
        if given is EOFError:  # the input closed: what `input` raises then
            raise EOFError
        return given

    context = Context(environ=dict(environ or {}), cwd=folder, stdout=out, input=answer, now=world.clock, sleep=world.clock.sleep,
                      session=session_for({TELEGRAM_API: telegram, GITHUB_API: world.hub}), aws=aws)
    return main(["remove", *argv], context), out.getvalue()


def stack_exists(name: str = STACK) -> bool:
    try:
        boto3.client("cloudformation", region_name=REGION).describe_stacks(StackName=name)
    except Exception as exc:  # botocore's ClientError: "Stack with id pager does not exist"
        assert "does not exist" in str(exc)
        return False
    return True


def parameter_exists() -> bool:
    return bool(boto3.client("ssm", region_name=REGION).describe_parameters(
        ParameterFilters=[{"Key": "Name", "Values": [SECRET_NAME]}])["Parameters"])


def assert_no_secret(output: str) -> None:
    values = [*SECRETS.values(), *KEY.splitlines()[1:2]]
    leaked = [value[:6] + "…" for value in values if value in output]
    assert not leaked, f"secrets in the output: {leaked}"


def test_a_closed_input_removes_nothing_and_says_so_without_a_traceback(world, aws, tmp_path):
    code, output = remove(world, aws, tmp_path, answers=(EOFError,))
    assert code == 1 and "✗ nothing removed: no answer came (the input is closed)" in output, output
    assert "make remove REMOVE_ARGS=--yes" in output and "Traceback" not in output
    assert stack_exists() and parameter_exists() and world.chat.webhook["url"] == TELEGRAM_HOOK
    assert not {"delete_stack", "delete_parameter", "telegram deleteWebhook"} & set(aws.log)


def test_a_refused_confirmation_removes_nothing(world, aws, tmp_path):
    code, output = remove(world, aws, tmp_path, answers=("pagr",))
    assert code == 1 and "nothing removed" in output, output
    assert stack_exists() and parameter_exists() and world.chat.webhook["url"] == TELEGRAM_HOOK
    assert not {"delete_stack", "delete_parameter", "telegram deleteWebhook"} & set(aws.log)
    assert f"the table {TABLE} with its records" in output  # said before the question: what it keeps
    assert_no_secret(output)


def test_typing_the_stacks_name_removes_the_stack_then_the_webhook_then_the_secrets(world, aws, tmp_path):
    code, output = remove(world, aws, tmp_path, answers=(STACK,))
    assert code == 0, output
    assert not stack_exists() and not parameter_exists() and world.chat.webhook == {}
    order = [call for call in aws.log if call in ("get_parameter", "telegram deleteWebhook", "delete_stack", "delete_parameter")]
    assert order == ["get_parameter", "delete_stack", "telegram deleteWebhook", "delete_parameter"]
    assert stack_exists("aws-sam-cli-managed-default")  # SAM's own stack is only named, never deleted
    assert boto3.client("dynamodb", region_name=REGION).describe_table(TableName=TABLE)  # kept on purpose
    assert f"✓ Telegram's webhook removed (it pointed at {TELEGRAM_HOOK})" in output
    assert "→ deleting the stack pager" in output and "✓ the stack pager deleted" in output
    assert f"✓ the secrets' parameter {SECRET_NAME} deleted" in output
    assert_no_secret(output)


def menu(world: Any) -> list[Any]:
    status, body = world.chat.handle("getMyCommands", {"scope": MENU})
    assert status == 200, body
    return list(body["result"])


def test_the_removal_takes_pagers_command_menu_from_the_chat_with_the_webhook(world, aws, tmp_path):
    assert menu(world)
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 0, output
    assert menu(world) == [] and "telegram deleteMyCommands" in aws.log
    assert "✓ pager's command menu removed from the chat" in output
    assert "pager's command menu in the chat, if the webhook points at this stack" in output  # said before
    assert_no_secret(output)


def test_a_menu_telegram_will_not_remove_is_said_with_how_and_the_rest_goes_on(world, aws, tmp_path):
    world.chat.fail("deleteMyCommands", 502)
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 1, output
    assert not stack_exists() and not parameter_exists() and world.chat.webhook == {}
    assert "✗ pager's command menu in the chat: not removed (telegram deleteMyCommands: Telegram answered 502" in output
    assert f'{TELEGRAM_API}/bot<token>/deleteMyCommands?scope={{"type":"chat","chat_id":<chat>}}' in output
    assert_no_secret(output)  # the chat's id is not printed: <chat> stands for it


def test_yes_removes_without_asking_and_names_what_stays_with_its_commands_in_the_stacks_region(world, aws, tmp_path):
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 0 and not stack_exists() and not parameter_exists(), output
    stays = output.split("What stays")[1]
    for expected in (
        "https://github.test/organizations/acme/settings/apps/pager-acme/advanced",  # the app's Delete GitHub App
        "https://github.test/organizations/acme/settings/installations",  # or its Uninstall
        "keeps posting every event",
        f"aws dynamodb delete-table --table-name {TABLE} --region {REGION}",
        f"aws dynamodb list-backups --table-name {TABLE} --region {REGION}",
        f"{TABLE}$DeletedTableBackup 35 days",
        f"aws s3api list-object-versions --bucket {SAM_BUCKET} --prefix {STACK}/ --no-paginate",
        f"aws s3api delete-objects --bucket {SAM_BUCKET} --delete file://versions.json --region {REGION}",
        f"aws cloudformation delete-stack --stack-name aws-sam-cli-managed-default --region {REGION}",
        "@BotFather",
    ):
        assert expected in stays, (expected, stays)
    assert "aws logs delete-log-group" not in stays  # the stack owned its log groups: they went with it
    assert_no_secret(output)


def test_telegram_failing_still_removes_the_stack_and_the_secrets_and_says_so(world, aws, tmp_path):
    world.chat.fail("deleteWebhook", 502)
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 1, output  # something was left undone: a script sees it
    assert not stack_exists() and not parameter_exists()
    assert world.chat.webhook["url"] == TELEGRAM_HOOK
    assert "✗ Telegram's webhook: not removed (telegram deleteWebhook: Telegram answered 502" in output
    assert f"{TELEGRAM_API}/bot<token>/deleteWebhook" in output  # how to do it later, without the token
    assert "What stays" in output
    assert_no_secret(output)


def test_a_webhook_that_points_at_another_deployment_is_kept(world, aws, tmp_path):
    world.chat.handle("setWebhook", {"url": "https://elsewhere.example/telegram"})
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 0 and not stack_exists(), output
    assert world.chat.webhook["url"] == "https://elsewhere.example/telegram"
    assert "telegram deleteWebhook" not in aws.log and "telegram deleteMyCommands" not in aws.log
    assert menu(world)  # the other deployment answers the menu's commands
    assert "kept, it points at https://elsewhere.example/telegram, not at this stack" in output


def test_run_again_after_the_stack_went_it_deletes_what_is_left_and_still_names_the_table(world, aws, tmp_path):
    boto3.client("cloudformation", region_name=REGION).delete_stack(StackName=STACK)
    code, output = remove(world, aws, tmp_path, "--yes", environ={"TELEGRAM_API_URL": TELEGRAM_API})
    assert code == 0, output
    assert "no stack named pager in eu-central-1" in output and not parameter_exists()
    assert f"kept, it points at {TELEGRAM_HOOK}; with no stack to compare it with" in output
    assert f"aws dynamodb delete-table --table-name {TABLE} --region {REGION}" in output  # found by its name
    assert_no_secret(output)


def test_a_stack_cloudformation_refuses_to_delete_keeps_everything_working_webhook_and_secrets_too(world, aws, tmp_path):
    from botocore.exceptions import ClientError

    def protected(**kwargs: Any) -> Any:  # moto does not model termination protection
        raise ClientError({"Error": {"Code": "ValidationError", "Message": f"Stack [{STACK}] cannot be deleted while "
                                     "TerminationProtection is enabled"}}, "DeleteStack")

    class Protected:
        def __init__(self, client: Any) -> None:
            self._client = client

        def __getattr__(self, name: str) -> Any:
            return protected if name == "delete_stack" else getattr(self._client, name)

    def refusing(service: str, region: str) -> Any:
        client = aws(service, region)
        return Protected(client) if service == "cloudformation" else client

    refusing.log = aws.log  # type: ignore[attr-defined]
    code, output = remove(world, refusing, tmp_path, "--yes")
    assert code == 1 and stack_exists() and parameter_exists() and world.chat.webhook["url"] == TELEGRAM_HOOK
    assert "TerminationProtection is enabled (turn it off: aws cloudformation update-termination-protection " \
           f"--no-enable-termination-protection --stack-name {STACK} --region {REGION})" in output
    assert "telegram deleteWebhook" not in aws.log and "Traceback" not in output


def test_run_again_after_a_complete_removal_it_finds_nothing_to_delete_and_exits_0(world, aws, tmp_path):
    assert remove(world, aws, tmp_path, "--yes")[0] == 0
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 0, output
    assert "– Telegram's webhook: no secrets' parameter left to read the bot's token from" in output
    assert "– the stack pager: none in eu-central-1" in output and "– the secrets' parameter" in output


def test_without_a_region_anywhere_it_stops_before_asking_aws_anything(world, aws, tmp_path):
    (tmp_path / "samconfig.local.toml").unlink()
    code, output = remove(world, aws, tmp_path, "--yes")
    assert code == 1 and "no AWS region for the stack pager" in output and aws.log == []


def test_what_stays_of_a_users_app_links_the_users_settings():
    found = Found("pager", "us-west-2", s3_prefix="pager", tables=["pager-Table-9"],
                  parameters={"GitHubAppSlug": "my-pager", "GitHubAppOwner": ""})
    items = leftovers(found, ["/aws/lambda/pager-sweep"])
    text = "\n".join(line for item in items for line in (item.what, item.why, *item.how))
    assert "https://github.com/settings/apps/my-pager/advanced" in text
    assert "https://github.com/settings/installations" in text
    assert "aws dynamodb delete-table --table-name pager-Table-9 --region us-west-2" in text
    assert "aws logs delete-log-group --log-group-name /aws/lambda/pager-sweep --region us-west-2" in text
    assert "SAM's bucket" not in text  # none found in the region: nothing to say about it


@pytest.mark.parametrize("error", ["EndpointConnectionError", "ConnectTimeoutError", "ReadTimeoutError"])
def test_no_answer_from_aws_is_said_as_the_network_never_as_the_credentials(world, aws, tmp_path, error):
    import botocore.exceptions

    def unreachable(service: str, region: str) -> Any:
        class Unreachable:
            def __getattr__(self, name: str) -> Any:
                def call(*args: Any, **kwargs: Any) -> Any:
                    raise getattr(botocore.exceptions, error)(endpoint_url=f"https://{service}.{region}.amazonaws.com/")

                return call

        return Unreachable()

    unreachable.log = aws.log  # type: ignore[attr-defined]
    code, output = remove(world, unreachable, tmp_path, "--yes")
    assert code == 1 and stack_exists() and "Traceback" not in output, output
    assert f"AWS could not be asked ({error})" in output and "check this machine's network" in output
    assert "credentials" not in output, output
