"""`pager remove`: the stack, Telegram's webhook and its secrets gone, and what stays named with what it costs
and the commands that remove it.

    gather     before anything is deleted: the stack's outputs and parameters (the table, the app's slug and
               owner, the APIs' roots), the bot's token from the secrets (held back from the screen), SAM's
               bucket in the region
    confirm    the person types the stack's name (`--yes` for scripts)
    stack      CloudFormation's DeleteStack, waited for with its waiter `stack_delete_complete`, each
               resource named as CloudFormation reports it; refused or failed, nothing else is touched
    webhook    Telegram's deleteWebhook, when the webhook points at this stack, and pager's command menu in
               the chat (deleteMyCommands in its scope); a failure is said, and the rest goes on
    secret     the secrets' parameter /pager/<stack>/secrets deleted (none left is fine)
    leftovers  what stays (`leftovers`, pure): the GitHub App, the table, log groups the stack did not own,
               SAM's bucket and stack, the bot; what each costs and the exact commands, with --region

A run stopped halfway is run again: with the stack gone, it deletes what is left and names the rest.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pager.errors import ConfigError, PagerError

from .console import Console
from .deployment import SecretStore, is_placeholder, unreadable
from .manifest import AppPages, web_root

POLL = 5.0  # seconds between two looks at the deletion (the SAM CLI's own default, SAM_CLI_POLL_DELAY)
DELETE_TIMEOUT = 30 * 60.0  # then it stops waiting and says how to go on
SAM_STACK = "aws-sam-cli-managed-default"  # the SAM CLI's managed stack (samcli.lib.bootstrap.bootstrap)
GITHUB_API = "https://api.github.com"
TELEGRAM_API = "https://api.telegram.org"
# list-object-versions' versions and delete markers as delete-objects' --delete takes them. The bucket SAM makes is
# versioned ("VersioningConfiguration: Enabled", no lifecycle rule), and `aws s3 rb --force` "will not delete"
# versioned objects (AWS CLI reference, s3 rb): it is emptied version by version.
VERSIONS_QUERY = "{Objects: [Versions, DeleteMarkers][].{Key: Key, VersionId: VersionId}}"
DELETED = {"DELETE_COMPLETE": "✓", "DELETE_SKIPPED": "–", "DELETE_FAILED": "✗"}  # a resource's last event, as shown
GONE = ("both functions and their layer, the HTTP API, the log groups, the alarms and their SNS topic with its e-mail "
        "subscription, the dashboard")


@dataclass
class Tools:
    """What the removal does outside itself, handed in (the CLI's context; tests pass moto and the fake world)."""

    console: Console
    aws: Callable[[str], Any]  # service -> a boto3 client of the stack's region
    telegram: Callable[[str, str], Any]  # (api_url, token) -> a BotTelegram
    sleep: Callable[[float], None]
    now: Callable[[], float]


@dataclass
class Found:
    """What the removal reads before it deletes anything."""

    stack: str
    region: str
    s3_prefix: str = ""  # where `sam deploy` uploads this application's code (samconfig's s3_prefix)
    stack_id: str = ""  # "" when CloudFormation has no such stack (deleted already)
    outputs: Mapping[str, str] = field(default_factory=dict)
    parameters: Mapping[str, str] = field(default_factory=dict)
    tables: list[str] = field(default_factory=list)
    environ: Mapping[str, str] = field(default_factory=dict, repr=False)  # GITHUB_API_URL, TELEGRAM_API_URL win
    token: str = field(default="", repr=False)  # the bot's, from the secrets: never printed
    token_note: str = ""  # why there is none
    sam_bucket: str = ""  # SAM's managed bucket in the region, if there is one

    @property
    def secret_parameter(self) -> str:
        return f"/pager/{self.stack}/secrets"  # template.yaml's SecretName

    @property
    def secret_id(self) -> str:
        return self.outputs.get("SecretName") or self.outputs.get("SecretArn") or self.secret_parameter

    def parameter(self, name: str) -> str:
        value = self.parameters.get(name, "")
        return "" if is_placeholder(value) else value

    @property
    def app(self) -> AppPages:
        api = self.environ.get("GITHUB_API_URL") or self.parameter("GitHubApiUrl") or GITHUB_API
        return AppPages(self.parameter("GitHubAppSlug"), self.parameter("GitHubAppOwner"), web_root(api))

    @property
    def telegram_api(self) -> str:
        return (self.environ.get("TELEGRAM_API_URL") or self.parameter("TelegramApiUrl") or TELEGRAM_API).rstrip("/")


@dataclass(frozen=True)
class Leftover:
    """Something the removal leaves: what it is, what it does or costs while it stays, how to remove it."""

    what: str
    why: str
    how: tuple[str, ...]


# -- gather ------------------------------------------------------------------------------------------------


def gather(tools: Tools, stack: str, region: str, s3_prefix: str = "", environ: Mapping[str, str] | None = None) -> Found:
    cloudformation = tools.aws("cloudformation")
    found = Found(stack, region, s3_prefix=s3_prefix or stack, environ=dict(environ or {}))
    described = _described(cloudformation, stack)
    if described is not None:
        found.stack_id = str(described["StackId"])
        found.outputs = {o["OutputKey"]: o.get("OutputValue", "") for o in described.get("Outputs") or []}
        found.parameters = {p["ParameterKey"]: p.get("ParameterValue", "") for p in described.get("Parameters") or []}
    table = found.outputs.get("TableName", "")
    found.tables = [table] if table else _tables(tools.aws("dynamodb"), f"{stack}-Table-")
    found.token, found.token_note = _token(tools, found.secret_id)
    found.sam_bucket = _sam_bucket(cloudformation)
    return found


def _described(cloudformation: Any, name: str) -> dict[str, Any] | None:
    """The stack of that name, or None when CloudFormation has none."""
    from botocore.exceptions import ClientError

    try:
        stacks = cloudformation.describe_stacks(StackName=name).get("Stacks") or []
    except ClientError as exc:
        if "does not exist" in str(exc.response.get("Error", {}).get("Message", "")):
            return None
        raise
    return dict(stacks[0]) if stacks else None


def _tables(dynamodb: Any, prefix: str) -> list[str]:
    """The tables a stack of that name made (CloudFormation names them <stack>-Table-<suffix>), found after the
    stack itself is gone."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        pages = dynamodb.get_paginator("list_tables").paginate()
        return [name for page in pages for name in page.get("TableNames", []) if name.startswith(prefix)]
    except (BotoCoreError, ClientError):
        return []


def _token(tools: Tools, secret_id: str) -> tuple[str, str]:
    """The bot's token from the secrets, or "" and why not; every secret read is held back from the screen."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        stored = SecretStore(tools.aws, secret_id).read()
    except (ConfigError, BotoCoreError, ClientError) as exc:
        return "", unreadable(secret_id, exc)
    if not stored:
        return "", ""  # no secrets' parameter (removed already): nothing to ask Telegram with, nothing lost
    tools.console.hide(*stored.values())
    token = stored.get("TELEGRAM_BOT_TOKEN", "")
    return token, "" if token else f"the secret {secret_id} holds no bot token"


def _sam_bucket(cloudformation: Any) -> str:
    """The bucket of SAM's managed stack in the region (its output SourceBucket), "" when there is none or it
    cannot be read."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        outputs = (_described(cloudformation, SAM_STACK) or {}).get("Outputs") or []
    except (BotoCoreError, ClientError):
        return ""
    return next((str(o.get("OutputValue", "")) for o in outputs if o.get("OutputKey") == "SourceBucket"), "")


# -- the removal -------------------------------------------------------------------------------------------


def run_remove(tools: Tools, stack: str, region: str, *, s3_prefix: str = "", yes: bool = False,
               environ: Mapping[str, str] | None = None) -> int:
    """Remove the deployment after the person's confirmation; 0 when everything it deletes is gone."""
    console = tools.console
    found = gather(tools, stack, region, s3_prefix, environ)
    for line in plan(found):
        console.line(line)
    if not yes and not confirmed(console, stack):
        return 1
    if not delete_stack(found, tools):  # first: a stack that stays keeps working, its webhook with it
        return 1
    webhook = remove_webhook(found, tools)
    secret = delete_secret(found, tools)
    console.line()
    console.line("What stays, what it costs, and how to remove it:")
    for item in leftovers(found, _log_groups(tools.aws("logs"), stack)):
        console.line()
        console.line(f"- {item.what}")
        console.line(f"  {item.why}")
        for step in item.how:
            console.line(f"    {step}")
    return 0 if webhook and secret else 1


def confirmed(console: Console, stack: str) -> bool:
    """Whether the person typed the stack's name. No answer at all (the input closed: a pipe, a script, a
    Ctrl-D) is a no, said as such."""
    try:
        answer = console.ask(f"Type the stack's name ({stack}) to remove it: ")
    except EOFError:
        console.line()
        console.failed("nothing removed: no answer came (the input is closed)",
                       "run it where it can ask (a terminal), or without the question: `make remove REMOVE_ARGS=--yes`")
        return False
    if answer != stack:
        console.failed("nothing removed: the answer was not the stack's name")
        return False
    return True


def plan(found: Found) -> list[str]:
    """What the removal deletes and what it keeps, said before the question."""
    where = f"the stack {found.stack} in {found.region}"
    lines = [f"pager remove: {where}" if found.stack_id else f"pager remove: no stack named {found.stack} in {found.region} "
             "(deleted already?); what is left of it"]
    deletes = [f"the stack ({GONE})"] if found.stack_id else []
    deletes.append("then Telegram's webhook and pager's command menu in the chat, if the webhook points at this stack")
    deletes.append(f"the secrets' parameter {found.secret_parameter}")
    lines.append(f"  deletes: {'; '.join(deletes)}")
    keeps = [f"the table {table} with its records" for table in found.tables] + ["the GitHub App"]
    lines.append(f"  keeps:   {'; '.join(keeps)} (named at the end, with how to remove them)")
    return lines


def remove_webhook(found: Found, tools: Tools) -> bool:
    """Telegram's deleteWebhook, when the webhook is this stack's (Bot API: getWebhookInfo, deleteWebhook).
    Whether nothing is left to do; a failure is said, and the removal goes on."""
    console = tools.console
    fix = f"remove it later: {found.telegram_api}/bot<token>/deleteWebhook in a browser, your bot's token for <token>"
    if not found.token and not found.token_note:
        console.line(f"– Telegram's webhook: no secrets' parameter left to read the bot's token from (removed "
                     f"before?); if the webhook still points at this stack, {fix}")
        return True
    if not found.token:
        console.failed(f"Telegram's webhook: not removed, {found.token_note}", fix)
        return False
    bot = tools.telegram(found.telegram_api, found.token)
    ours = found.outputs.get("TelegramWebhookUrl", "")
    try:
        url = str(bot.webhook_info().get("url") or "")
        if url and url == ours:
            bot.delete_webhook()
    except PagerError as exc:
        console.failed(f"Telegram's webhook: not removed ({exc}); the rest goes on", fix)
        return False
    if not url:
        console.done("Telegram's webhook: none is set")
    elif url == ours:
        console.done(f"Telegram's webhook removed (it pointed at {url})")
        return _remove_menu(found, bot, console)
    elif ours:
        console.line(f"– Telegram's webhook: kept, it points at {url}, not at this stack")
    else:
        console.line(f"– Telegram's webhook: kept, it points at {url}; with no stack to compare it with, if that was "
                     f"this one's, {fix}")
    return True


def _remove_menu(found: Found, bot: Any, console: Console) -> bool:
    """pager's command menu gone from the chat (deleteMyCommands in the chat's scope, as setup set it): with no
    pager to answer, its commands would go on showing there. Whether nothing is left to do."""
    chat = found.parameter("TelegramChatId")
    if not chat:
        return True
    try:
        bot.delete_my_commands(chat=chat)
    except PagerError as exc:
        console.failed(f"pager's command menu in the chat: not removed ({exc}); the rest goes on",
                       f'remove it later: {found.telegram_api}/bot<token>/deleteMyCommands?scope={{"type":"chat",'
                       '"chat_id":<chat>} in a browser, your bot\'s token for <token> and the chat\'s id (TELEGRAM_CHAT_ID) '
                       "for <chat>")
        return False
    console.done("pager's command menu removed from the chat")
    return True


def delete_stack(found: Found, tools: Tools) -> bool:
    """DeleteStack, waited for; whether the stack is gone."""
    console = tools.console
    if not found.stack_id:
        console.line(f"– the stack {found.stack}: none in {found.region}")
        return True
    cloudformation = tools.aws("cloudformation")
    seen = {event["EventId"] for event in _events(cloudformation, found.stack_id)}
    console.doing(f"deleting the stack {found.stack} (a few minutes; each resource as CloudFormation reports it)")
    failure = _refused(cloudformation, found) or _wait_deleted(cloudformation, found.stack_id, seen, tools)
    if failure:
        console.failed(f"the stack {found.stack} was not deleted: {failure}",
                       "see its events in the CloudFormation console, fix what they name, and run `make remove` again "
                       "(the secrets' parameter is kept until the stack is gone)")
        return False
    console.done(f"the stack {found.stack} deleted: {GONE}")
    return True


def _refused(cloudformation: Any, found: Found) -> str:
    """DeleteStack asked for; "" when CloudFormation took it, else its refusal in its words (termination
    protection is on, a role lacks a permission), with what turns protection off."""
    from botocore.exceptions import ClientError

    try:
        cloudformation.delete_stack(StackName=found.stack_id)
    except ClientError as exc:
        message = str(exc.response.get("Error", {}).get("Message") or exc)
        if "TerminationProtection" in message:
            return (f"{message} (turn it off: aws cloudformation update-termination-protection "
                    f"--no-enable-termination-protection --stack-name {found.stack} --region {found.region})")
        return message
    return ""


def _wait_deleted(cloudformation: Any, stack_id: str, seen: set[str], tools: Tools) -> str:
    """Wait with CloudFormation's own waiter (`stack_delete_complete`, one attempt at a time, so that each
    resource is named as it goes); "" once deleted, else why not."""
    from botocore.exceptions import WaiterError

    waiter = cloudformation.get_waiter("stack_delete_complete")
    started = tools.now()
    while True:
        try:
            waiter.wait(StackName=stack_id, WaiterConfig={"Delay": POLL, "MaxAttempts": 1})
            _progress(cloudformation, stack_id, seen, tools.console)
            return ""
        except WaiterError as exc:
            _progress(cloudformation, stack_id, seen, tools.console)
            stack = ((exc.last_response or {}).get("Stacks") or [{}])[0]
            status = str(stack.get("StackStatus", ""))
            if not status.endswith("_IN_PROGRESS"):
                return f"{status}: {stack.get('StackStatusReason', '')}" if status else str(exc)
        if tools.now() - started > DELETE_TIMEOUT:
            return f"still deleting after {DELETE_TIMEOUT / 60:g} minutes"
        tools.sleep(POLL)


def _events(cloudformation: Any, stack_id: str) -> list[dict[str, Any]]:
    """The stack's newest events (one page), newest first; none when they cannot be read."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return list(cloudformation.describe_stack_events(StackName=stack_id).get("StackEvents") or [])
    except (BotoCoreError, ClientError):
        return []


def _progress(cloudformation: Any, stack_id: str, seen: set[str], console: Console) -> None:
    """A line for each resource deleted, kept (DeletionPolicy Retain) or failed since the last look."""
    for event in reversed(_events(cloudformation, stack_id)):
        if event["EventId"] in seen:
            continue
        seen.add(event["EventId"])
        mark = DELETED.get(str(event.get("ResourceStatus")))
        if mark is None or event.get("ResourceType") == "AWS::CloudFormation::Stack":
            continue
        reason = f": {event['ResourceStatusReason']}" if mark == "✗" and event.get("ResourceStatusReason") else ""
        kept = " kept" if mark == "–" else ""
        console.line(f"  {mark} {event.get('LogicalResourceId')}{kept} ({event.get('ResourceType')}){reason}")


def delete_secret(found: Found, tools: Tools) -> bool:
    """The secrets' parameter deleted (SSM DeleteParameter); whether none is left."""
    from botocore.exceptions import BotoCoreError, ClientError

    console = tools.console
    name = found.secret_parameter
    try:
        tools.aws("ssm").delete_parameter(Name=name)
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") == "ParameterNotFound":
            console.line(f"– the secrets' parameter {name}: none")
            return True
        console.failed(f"the secrets' parameter {name} was not deleted ({exc.response.get('Error', {}).get('Code')})",
                       f"aws ssm delete-parameter --name {name} --region {found.region}")
        return False
    except BotoCoreError as exc:
        console.failed(f"the secrets' parameter {name} was not deleted ({type(exc).__name__})",
                       f"aws ssm delete-parameter --name {name} --region {found.region}")
        return False
    console.done(f"the secrets' parameter {name} deleted")
    return True


def _log_groups(logs: Any, stack: str) -> list[str]:
    """The functions' log groups still there: those Lambda made itself for a stack without its own (the stack
    deletes those it owns, DeletionPolicy Delete in template.yaml)."""
    from botocore.exceptions import BotoCoreError, ClientError

    left = []
    for name in (f"/aws/lambda/{stack}-webhook", f"/aws/lambda/{stack}-sweep"):
        try:
            groups = logs.describe_log_groups(logGroupNamePrefix=name).get("logGroups") or []
        except (BotoCoreError, ClientError):
            continue
        left += [name for group in groups if group.get("logGroupName") == name]
    return left


# -- what stays ----------------------------------------------------------------------------------------------


def leftovers(found: Found, log_groups: list[str]) -> list[Leftover]:
    """What the removal leaves, in the order a person would remove it, each with its commands (with --region)."""
    items = [app_leftover(found)]
    items += [table_leftover(table, found.region) for table in found.tables]
    items += [Leftover(f"The log group {group}", "CloudWatch Logs bills the logs it stores per GB-month until its "
                       "retention removes them.", (f"aws logs delete-log-group --log-group-name {group} --region {found.region}",))
              for group in log_groups]
    if found.sam_bucket:
        items.append(sam_leftover(found))
    items.append(Leftover("The Telegram bot", "Free. Without a webhook, what is sent to it waits in Telegram at most "
                          "24 hours, unread (Bot API, Getting updates).",
                          ("remove it from the chat, or delete it with @BotFather (/deletebot) if nothing else uses it",)))
    return items


def app_leftover(found: Found) -> Leftover:
    """The GitHub App: GitHub's "Deleting a GitHub App" (Advanced → Delete GitHub App) and "Reviewing and
    modifying installed GitHub Apps" (Configure → Uninstall)."""
    pages = found.app
    why = ("Free, but while it is installed GitHub keeps posting every event of its repositories to the deleted "
           "endpoint (each a failed delivery on its Advanced page), and its private key stays valid.")
    if not pages.slug:
        where = f"{pages.web}/settings/apps (an organization's: {pages.web}/organizations/<org>/settings/apps)"
        return Leftover("The GitHub App", why, (f"delete it: {where} → the app → Advanced → Delete GitHub App",))
    owner = f" of {pages.org}" if pages.org else ""
    return Leftover(f"The GitHub App {pages.slug}{owner}", why, (
        f"delete it (Advanced → Delete GitHub App, then type its name; this uninstalls it everywhere): {pages.advanced}",
        f"or only uninstall it (Configure beside it → Uninstall): {pages.installations}"))


def table_leftover(table: str, region: str) -> Leftover:
    """The table, kept on purpose (template.yaml: DeletionPolicy Retain; PointInTimeRecoveryEnabled). DynamoDB
    bills PITR by the table's size until it is turned off ("Enable point-in-time recovery in DynamoDB"), and on
    deleting such a table keeps a system backup `<table>$DeletedTableBackup` 35 days at no charge ("Delete a table
    with PITR enabled"); on-demand backups stay until deleted."""
    return Leftover(
        f"The table {table}, kept on purpose with every record (DeletionPolicy Retain)",
        "DynamoDB bills its storage and its continuous backups (point-in-time recovery) per GB-month for as long as "
        f"it exists. Deleting it ends both; DynamoDB then keeps {table}$DeletedTableBackup 35 days at no charge. "
        "Backups made on demand outlive the table until you delete them.",
        (f"aws dynamodb delete-table --table-name {table} --region {region}",
         f"aws dynamodb list-backups --table-name {table} --region {region}   "
         f"# then, for each: aws dynamodb delete-backup --backup-arn <BackupArn> --region {region}"))


def sam_leftover(found: Found) -> Leftover:
    """SAM's managed stack and bucket, shared by every SAM application of the account and region."""
    bucket, region = found.sam_bucket, found.region
    delete = f"aws s3api delete-objects --bucket {bucket} --delete file://versions.json --region {region}"
    return Leftover(
        f"SAM's bucket {bucket} (the stack {SAM_STACK})",
        "Where `sam deploy` uploads the code, shared by every SAM application of this account and region. It is "
        "versioned and keeps every upload: S3 bills their storage per GB-month, a few MB for each deploy that "
        "changed the code.",
        ("pager's uploads only: these two, again until versions.json lists nothing (\"Objects\": [])",
         _list_versions(bucket, region, f"{found.s3_prefix}/"), delete,
         f"the whole bucket and its stack, only if no other SAM application uses them (`aws s3 ls s3://{bucket}/ "
         f"--region {region}` lists a folder for each): the same two without --prefix until it is empty, then",
         f"aws cloudformation delete-stack --stack-name {SAM_STACK} --region {region}",
         "(`aws s3 rb --force` would leave the earlier versions, and the bucket could not be deleted)"))


def _list_versions(bucket: str, region: str, prefix: str) -> str:
    """The AWS CLI command that writes one page of the bucket's versions (under `prefix`) for delete-objects: one
    ListObjectVersions request (--no-paginate) answers at most 1000 keys, and DeleteObjects takes at most 1000 a
    request (S3 API reference)."""
    under = f" --prefix {prefix}" if prefix else ""
    return (f"aws s3api list-object-versions --bucket {bucket}{under} --no-paginate --query '{VERSIONS_QUERY}' "
            f"--output json --region {region} > versions.json")
