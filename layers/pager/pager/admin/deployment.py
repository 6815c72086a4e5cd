"""Where pager's settings live, read and written the way a deployment keeps them.

Two targets:

- **the stack** (CloudFormation `describe_stacks`): its outputs (`GitHubWebhookUrl`,
  `TelegramWebhookUrl`, `TableName`, `SecretName`) and parameters (the functions' environment, as
  template.yaml's Globals set it). Secrets go into its SecureString parameter in Parameter Store (the
  JSON object is read and merged, never replaced; a stack of before, whose output is `SecretArn`, keeps
  them in Secrets Manager); non-secret values go into `samconfig.local.toml`, where `make deploy`
  reads its parameters: setup never updates the stack itself, it says to run `make deploy`.
- **local** (`make serve`): everything in a `.env` file (KEY=value lines, read as python-dotenv reads them,
  written with mode 0600).

The settings are read as the functions read them: the environment first, then what the target holds
(for the stack: the parameters `make deploy` is about to apply, then the deployed ones), then the
secret. A placeholder (empty, `pending`, `<...>`) counts as not set, so a stack deployed before the app
existed (GitHubAppId `pending`) is set up like one without values.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dotenv.parser import Binding, parse_stream

from pager import redact
from pager.errors import ConfigError
from pager.settings import SECRET_NAMES, in_parameter_store

OUTPUTS = ("GitHubWebhookUrl", "TelegramWebhookUrl", "TableName", "SecretName")
SECRET_OUTPUTS = ("SecretName", "SecretArn")  # the secret: a parameter's name; a Secrets Manager ARN before

# template.yaml's parameters and the setting each one becomes (its Globals and the sweep's environment)
PARAMETER_SETTINGS: dict[str, str] = {
    "GitHubAppId": "GITHUB_APP_ID",
    "GitHubAppSlug": "GITHUB_APP_SLUG",
    "GitHubAppOwner": "GITHUB_APP_OWNER",
    "GitHubApiUrl": "GITHUB_API_URL",
    "ControlRepository": "CONTROL_REPOSITORY",
    "TelegramChatId": "TELEGRAM_CHAT_ID",
    "TelegramThreadId": "TELEGRAM_THREAD_ID",
    "TelegramAllowedUsers": "TELEGRAM_ALLOWED_USERS",
    "TelegramApiUrl": "TELEGRAM_API_URL",
    "ReleaseBranchPrefixes": "RELEASE_BRANCH_PREFIXES",
    "ReleaseMergeMethod": "RELEASE_MERGE_METHOD",
    "AlarmGraceMinutes": "ALARM_GRACE_MINUTES",
    "BuzzGapMinutes": "BUZZ_GAP_MINUTES",
    "QuietHours": "QUIET_HOURS",
    "TimeZone": "TIMEZONE",
    "SweepCallBudget": "SWEEP_CALL_BUDGET",
    "SweepMaxRedeliveries": "SWEEP_MAX_REDELIVERIES",
    "SweepMaxAttempts": "SWEEP_MAX_ATTEMPTS",
    "SweepWindowMinutes": "SWEEP_WINDOW_MINUTES",
    "SweepFailurePages": "SWEEP_FAILURE_PAGES",
    "SweepAllPages": "SWEEP_ALL_PAGES",
}
SETTING_PARAMETERS = {setting: parameter for parameter, setting in PARAMETER_SETTINGS.items()}

# The operator contract (docs/settings.md): the names read from the environment.
SETTING_NAMES = ("PAGER_TABLE", "PAGER_SECRET_ID", *PARAMETER_SETTINGS.values(), *SECRET_NAMES)

DEPLOY_FILE = "samconfig.local.toml"
DEPLOY_TABLE = "default.deploy.parameters"
LOCAL_TABLE = "pager-local"  # the table `make serve` embeds when PAGER_TABLE is not named at all


def aws_region(given: str, samconfig: SamConfig | None, environ: Mapping[str, str]) -> str:
    """The AWS region, one rule for every command and for `make serve`:

    - for the stack: `--region`, else samconfig.local.toml's (where `make deploy` saved it), else AWS_REGION,
      else AWS_DEFAULT_REGION; "" leaves it to boto3's own chain (the profile);
    - for `.env`, what `make serve` runs with (`samconfig` None; `environ` the environment over `.env`, as
      `serve_environ` merges them): `--region`, else AWS_REGION, else AWS_DEFAULT_REGION, else the region of
      the profile they name. samconfig.local.toml is the stack's, and `make serve` never reads it.

    boto3 itself never reads AWS_REGION, only AWS_DEFAULT_REGION (botocore's config variables): the
    commands pass the region explicitly, and `make serve` sets AWS_DEFAULT_REGION to it."""
    if given:
        return given
    if samconfig is None:
        return environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or profile_region(environ)
    return samconfig.region() or environ.get("AWS_REGION") or environ.get("AWS_DEFAULT_REGION") or ""


def serve_environ(dotenv: Path, environ: Mapping[str, str]) -> dict[str, str]:
    """The environment `make serve` runs with: `.env`'s values under the environment's (a name the environment
    holds wins, even when it is empty)."""
    return {**read_dotenv(dotenv), **environ}


def profile_region(environ: Mapping[str, str]) -> str:
    """The region of the AWS profile (AWS_DEFAULT_PROFILE, else AWS_PROFILE, else `default`: botocore's order,
    configprovider's `profile`, which boto3 and the SAM CLI follow) in the AWS config file (AWS_CONFIG_FILE,
    else ~/.aws/config), read with botocore's own loader: where boto3 and the AWS and SAM CLIs look last. The
    paths come from `environ`, so that an environment without HOME reads no file."""
    from botocore.configloader import load_config
    from botocore.exceptions import BotoCoreError

    path = environ.get("AWS_CONFIG_FILE") or (os.path.join(environ["HOME"], ".aws", "config") if environ.get("HOME") else "")
    if not path:
        return ""
    try:
        profiles = load_config(path).get("profiles", {})
    except BotoCoreError:  # no such file, or one botocore cannot parse: no region from it
        return ""
    profile = profiles.get(environ.get("AWS_DEFAULT_PROFILE") or environ.get("AWS_PROFILE") or "default", {})
    return str(profile.get("region") or "")


def local_table(named: Mapping[str, str]) -> str:
    """The table `make serve` uses, from its environment over `.env`: the embedded one when PAGER_TABLE is
    not named at all; else the one named. A PAGER_TABLE left empty stays empty, so that the settings check
    names it missing with the others (empty is missing, as for every required setting)."""
    return named["PAGER_TABLE"] if "PAGER_TABLE" in named else LOCAL_TABLE


def unreadable(secret_id: str, exc: Exception, *, region_hint: str = "") -> str:
    """Why the secret could not be read, in plain words: AWS's error code (AccessDenied, ...), never its
    message (which may quote the request). `region_hint`: how to give a region, worded for where the line is
    shown (the fix of `pager doctor`'s line says it there)."""
    from botocore.exceptions import ClientError, NoCredentialsError, NoRegionError

    if isinstance(exc, ConfigError):
        return str(exc)
    if isinstance(exc, NoCredentialsError):
        why = "no AWS credentials were found"
    elif isinstance(exc, NoRegionError):
        why = "no AWS region is set" + (f" ({region_hint})" if region_hint else "")
    elif isinstance(exc, ClientError):
        why = str(exc.response.get("Error", {}).get("Code") or "error").removesuffix("Exception")
    else:
        why = type(exc).__name__
    return f"the secret {secret_id} could not be read: {why}"


# AWS's codes for credentials it does not take (expired, unknown, signed wrong): sign in again
REFUSED_CREDENTIALS = ("ExpiredToken", "ExpiredTokenException", "UnrecognizedClientException", "InvalidClientTokenId",
                       "InvalidSignatureException", "SignatureDoesNotMatch")


def unread_cause(exc: Exception) -> str:
    """What kept the secret from being read, for the fix to name: "json" (it holds no JSON object), "region"
    (none is set), "credentials" (none found, or AWS does not take them), "unreachable" (no answer from AWS),
    "refused" (AWS refused these credentials that read: AccessDenied, a key they may not use, ...)."""
    from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError, NoRegionError

    if isinstance(exc, ConfigError):
        return "json"
    if isinstance(exc, NoRegionError):
        return "region"
    if isinstance(exc, NoCredentialsError) or (
            isinstance(exc, ClientError) and exc.response.get("Error", {}).get("Code") in REFUSED_CREDENTIALS):
        return "credentials"
    return "unreachable" if isinstance(exc, BotoCoreError) else "refused"


def is_placeholder(value: str | None) -> bool:
    text = (value or "").strip()
    return not text or text.lower() in ("pending", "@pending") or (text.startswith("<") and text.endswith(">"))


def known(values: Mapping[str, str]) -> dict[str, str]:
    """The values that are set (placeholders left out)."""
    return {k: v for k, v in values.items() if not is_placeholder(v)}


# -- the stack ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Stack:
    name: str
    region: str
    outputs: Mapping[str, str]
    parameters: Mapping[str, str]
    status: str = ""

    def settings(self) -> dict[str, str]:
        """The functions' environment: the parameters as settings, the table and the secret."""
        values = {PARAMETER_SETTINGS[k]: v for k, v in self.parameters.items() if k in PARAMETER_SETTINGS}
        if self.outputs.get("TableName"):
            values["PAGER_TABLE"] = self.outputs["TableName"]
        if self.secret_id:
            values["PAGER_SECRET_ID"] = self.secret_id
        return known(values)

    @property
    def secret_id(self) -> str:
        return next((self.outputs[key] for key in SECRET_OUTPUTS if self.outputs.get(key)), "")


@dataclass(frozen=True)
class NoStack:
    """Why no stack was found: `why` in words; `asking` when AWS could not be asked (credentials expired or
    missing, no answer, a refusal), which says nothing of whether the stack exists."""

    why: str
    asking: bool = False


def find_stack(cloudformation: Any, name: str, region: str) -> tuple[Stack | None, NoStack | None]:
    """The stack and its outputs, or None and why not (no such stack, no credentials, a first deploy that
    failed, ...)."""
    found, why = _described(cloudformation, name, region)
    if found is None:
        return None, why
    if not found:
        return None, NoStack(f"no stack named {name} in {region}")
    stack = found[0]
    outputs = {o["OutputKey"]: o.get("OutputValue", "") for o in stack.get("Outputs") or []}
    parameters = {p["ParameterKey"]: p.get("ParameterValue", "") for p in stack.get("Parameters") or []}
    status = str(stack.get("StackStatus", ""))
    if not _has_outputs(outputs):
        if status in FAILED_FIRST_DEPLOY:  # CloudFormation keeps it only to be deleted
            return None, NoStack(f"the stack {name}'s first deploy failed ({status}): delete it "
                                 f"(aws cloudformation delete-stack --stack-name {name} --region {region}), "
                                 "then run `make deploy` again")
        return None, NoStack(f"the stack {name} has no outputs yet ({status}): wait for `make deploy` to finish")
    return Stack(name, region, outputs, parameters, status), None


# A stack whose creation failed: only deleting it goes on (CloudFormation's stack status codes).
FAILED_FIRST_DEPLOY = frozenset({"ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "CREATE_FAILED", "DELETE_FAILED"})


def _described(cloudformation: Any, name: str, region: str) -> tuple[list[Any] | None, NoStack | None]:
    """CloudFormation's stacks of that name (none when it answers with none), or None and why it could not
    be asked."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        answer = cloudformation.describe_stacks(StackName=name)
    except ClientError as exc:
        error = exc.response.get("Error", {})
        if "does not exist" in str(error.get("Message", "")):
            return None, NoStack(f"no stack named {name} in {region or 'the default region'}")
        return None, NoStack(f"AWS refused to show the stack {name} ({error.get('Code', 'error')}): sign in to AWS "
                             "again (`aws sso login`, or your access keys), or use credentials that may read it", True)
    except BotoCoreError as exc:
        return None, NoStack(f"AWS could not be asked for the stack {name} ({type(exc).__name__}): sign in to AWS "
                             "(`aws sso login`, or your access keys), or check this machine's network", True)
    return answer.get("Stacks") or [], None


def _has_outputs(outputs: Mapping[str, str]) -> bool:
    """Whether a stack has every output setup reads: the URLs and the table, and the secret under one of its
    names (a stack of before has SecretArn)."""
    return (all(outputs.get(key) for key in OUTPUTS if key not in SECRET_OUTPUTS)
            and any(outputs.get(key) for key in SECRET_OUTPUTS))


SECRET_PARAMETER_BYTES = 4096  # a standard parameter's value holds at most 4 KB


class SecretStore:
    """The secrets' JSON object, read and merged, never replaced: a Parameter Store SecureString (a name
    starting with /, as the stack's is) or a Secrets Manager secret (its ARN or name)."""

    def __init__(self, client: Callable[[str], Any], secret_id: str) -> None:
        self._client = client  # service name -> a boto3 client of the stack's region
        self.secret_id = secret_id

    def __repr__(self) -> str:
        return f"SecretStore({self.secret_id!r})"

    def read(self) -> dict[str, str]:
        from botocore.exceptions import ClientError

        try:
            with redact.withheld():  # botocore at DEBUG would log the answer whole (pager.redact)
                if in_parameter_store(self.secret_id):
                    text = self._client("ssm").get_parameter(Name=self.secret_id, WithDecryption=True)["Parameter"]["Value"]
                else:
                    text = self._client("secretsmanager").get_secret_value(SecretId=self.secret_id).get("SecretString")
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("ParameterNotFound", "ResourceNotFoundException"):
                return {}  # not written yet
            raise
        try:
            stored = json.loads(text or "{}")
        except ValueError:
            stored = None
        if isinstance(stored, dict):
            return {str(k): str(v) for k, v in stored.items() if v is not None}
        raise ConfigError(f"the secret {self.secret_id} is not a JSON object")

    def write(self, updates: Mapping[str, str]) -> bool:
        """Merge `updates` into the secret (written only when something changes)."""
        current = self.read()
        merged = {**current, **updates}
        if merged == current:
            return False
        value = json.dumps(merged)
        if in_parameter_store(self.secret_id) and len(value.encode()) > SECRET_PARAMETER_BYTES:
            raise ValueError(f"the secrets take {len(value.encode())} bytes, more than the {SECRET_PARAMETER_BYTES} "
                             f"a standard parameter holds ({self.secret_id})")
        with redact.withheld():  # botocore at DEBUG would log the request's parameters whole
            if in_parameter_store(self.secret_id):
                self._client("ssm").put_parameter(Name=self.secret_id, Value=value, Type="SecureString", Overwrite=True,
                                                  Tier="Standard", Description="pager's secrets (pager setup)")
            else:
                self._client("secretsmanager").put_secret_value(SecretId=self.secret_id, SecretString=value)
        return True


# -- samconfig.local.toml ----------------------------------------------------------------------------------


def parse_overrides(value: Any) -> dict[str, str]:
    """SAM's parameter_overrides: `Key="value" Key2=value` (a string) or ["Key=value", ...] (a list)."""
    parts = value if isinstance(value, list) else shlex.split(str(value or ""))
    pairs = (str(part).split("=", 1) for part in parts if "=" in str(part))
    return {key: val for key, val in pairs}


def format_overrides(parameters: Mapping[str, str]) -> str:
    """parameter_overrides as `sam deploy --guided` writes it: Key="value", space-separated."""
    return " ".join(f'{key}="{_quote(val)}"' for key, val in parameters.items())


def _quote(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


class SamConfig:
    """samconfig.local.toml: the answers of `sam deploy --guided`, which `make deploy` deploys with."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self) -> dict[str, Any]:
        """`sam deploy`'s parameters as SAM reads them: [default.global.parameters] under
        [default.deploy.parameters]. A guided deploy saves `region` in both tables, and keeps a value only in
        the global one when it is there already (samcli.lib.config.samconfig, `_deduplicate_global_parameters`):
        a second guided run, or an older samconfig.toml with a global stack_name, leaves them only there."""
        if not self.path.exists():
            return {}
        with self.path.open("rb") as handle:
            data = tomllib.load(handle).get("default", {})
        return {**data.get("global", {}).get("parameters", {}), **data.get("deploy", {}).get("parameters", {})}

    def parameters(self) -> dict[str, str]:
        return parse_overrides(self.read().get("parameter_overrides"))

    def stack_name(self) -> str:
        return str(self.read().get("stack_name") or "")

    def region(self) -> str:
        return str(self.read().get("region") or "")

    def update(self, updates: Mapping[str, str], stack: Stack) -> bool:
        """Set parameters for the next `make deploy`; a file `sam deploy --guided` never wrote is written
        whole from the stack's current parameters. Whether the file changed."""
        if not self.path.exists():
            self._write_new(stack, {**stack.parameters, **updates})
            return True
        current = self.parameters()
        wanted = {**current, **updates}
        if wanted == current:
            return False
        line = f"parameter_overrides = {json.dumps(format_overrides(wanted))}"
        text = _replace_in_table(self.path.read_text(), DEPLOY_TABLE, "parameter_overrides", line)
        written = tomllib.loads(text).get("default", {}).get("deploy", {}).get("parameters", {})
        if parse_overrides(written.get("parameter_overrides")) != wanted:  # checked before the file is touched
            raise ValueError(f"{self.path.name} could not be updated: set {', '.join(updates)} there by hand")
        self.path.write_text(text)
        return True

    def _write_new(self, stack: Stack, parameters: Mapping[str, str]) -> None:
        lines = [
            "# Written by `make setup` from the stack's parameters: `make deploy` deploys with these.",
            "version = 0.1",
            "",
            f"[{DEPLOY_TABLE}]",
            f"stack_name = {json.dumps(stack.name)}",
            f"region = {json.dumps(stack.region)}",
            "resolve_s3 = true",
            'capabilities = "CAPABILITY_IAM"',
            "confirm_changeset = true",
            "fail_on_empty_changeset = false",
            f"parameter_overrides = {json.dumps(format_overrides(parameters))}",
            "",
        ]
        self.path.write_text("\n".join(lines))


def _replace_in_table(text: str, table: str, key: str, line: str) -> str:
    """Replace `key = ...` (one line) in the TOML table `[table]`, or add it at the table's start."""
    lines = text.splitlines()
    header = f"[{table}]"
    current = None
    for index, raw in enumerate(lines):
        stripped = raw.strip()
        if stripped.startswith("["):
            current = stripped
            continue
        if current == header and re.match(rf"{re.escape(key)}\s*=", stripped):
            lines[index] = line
            return "\n".join(lines) + "\n"
    if header in (raw.strip() for raw in lines):
        at = [raw.strip() for raw in lines].index(header)
        lines.insert(at + 1, line)
    else:
        lines += ["", header, line]
    return "\n".join(lines) + "\n"


# -- .env --------------------------------------------------------------------------------------------------


def read_dotenv(path: Path) -> dict[str, str]:
    """`.env` as python-dotenv reads it (`dotenv_values`, which `make serve` and the docs promise): its own
    parser, so that what a person pastes and what setup writes read alike. KEY=value lines, `export ` before
    a name; a value in double quotes may span lines (a .pem file pasted whole) and takes `\\n`, `\\"` and
    `\\\\` escapes; in single quotes it stands as written; unquoted it ends at the line's end, before a
    ` #` comment. A name without `=` sets nothing, and a line the parser cannot read is skipped.

    One difference, on purpose: `${NAME}` is not replaced from the environment (`interpolate=False`), so a
    secret holding `${` reads back as written. An editor's byte order mark is ignored; a file that is not
    UTF-8 text is a ConfigError."""
    return {binding.key: binding.value for binding in _bindings(path)
            if binding.key is not None and binding.value is not None}


def _bindings(path: Path) -> list[Binding]:
    """The file as python-dotenv's parser reads it (what `dotenv_values` runs on), each binding with its
    original text; none for a file that does not exist."""
    if not path.exists():
        return []
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path.name} is not UTF-8 text (byte {exc.start}): save it as UTF-8") from None
    return list(parse_stream(io.StringIO(text)))


def write_dotenv(path: Path, updates: Mapping[str, str]) -> bool:
    """Set keys in a .env file, readable by its owner only; whether it changed. Each binding of a key is
    replaced whole (a value across lines too, as python-dotenv's `set_key` does), the rest is kept as it was
    written, and keys not there yet are added at the end."""
    current = read_dotenv(path)
    if all(current.get(k) == v for k, v in updates.items()):
        return False
    bindings = _bindings(path)
    parts = [] if bindings else ["# pager's settings for `make serve` (never commit this file)\n"]
    for binding in bindings:
        written = binding.original.string
        if binding.key is not None and binding.key in updates:
            before = written[:len(written) - len(written.lstrip())]  # the blank lines above it stay
            written = before + _dotenv_line(binding.key, updates[binding.key]) + "\n"
        parts.append(written)
    text = "".join(parts)
    if text and not text.endswith("\n"):
        text += "\n"
    present = {binding.key for binding in bindings}
    text += "".join(_dotenv_line(key, value) + "\n" for key, value in updates.items() if key not in present)
    temporary = path.with_name(path.name + ".tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return True


def _dotenv_line(key: str, value: str) -> str:
    """`KEY="value"`, its `\\`, `"` and line breaks escaped as python-dotenv reads a double-quoted value."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'{key}="{escaped}"'


# -- the target --------------------------------------------------------------------------------------------


def make_command(target: str, args: list[str]) -> str:
    """A make target with the arguments the Makefile hands the command (`make doctor DOCTOR_ARGS=--local`):
    `pager` itself is not on the PATH (it lives in .venv/bin)."""
    if not args:
        return f"make {target}"
    value = args[0] if len(args) == 1 else '"' + " ".join(args) + '"'
    return f"make {target} {target.upper()}_ARGS={value}"


@dataclass
class Target:
    """Where setup writes and doctor reads: a stack (with its secret and samconfig.local.toml), or `.env`."""

    mode: str  # "stack" or "local"
    dotenv: Path
    samconfig: SamConfig
    stack: Stack | None = None
    secret: SecretStore | None = None
    base_url: str = ""  # local: the tunnel's URL in front of `make serve`
    note: str = ""  # why no stack was found
    stack_wanted: str = ""  # a stack asked for that could not be found, or AWS asked: .env is no stand-in ("name (region)")
    aws_unasked: bool = False  # AWS could not be asked for the stack (credentials, network): `note` says how to sign in
    read_secret: Callable[[str], Mapping[str, Any]] | None = field(default=None, repr=False)

    def doctor_command(self, *more: str) -> str:
        """`make doctor` as it checks this target again (with `more` arguments): with `--local` (and the
        tunnel's URL) for `.env` asked for with --local; without, for a stack and for `.env` read for want of one."""
        local = self.mode == "local" and not self.note
        return make_command("doctor", [*(["--local", *([self.base_url] if self.base_url else [])] if local else []), *more])

    def setup_command(self, *more: str) -> str:
        """`make setup` as it sets up this target again (with `more` arguments): `.env` only with `--local` and the
        tunnel's URL."""
        return make_command("setup", [*(["--local", self.base_url or "<tunnel URL>"] if self.mode == "local" else []), *more])

    def describe(self) -> str:
        if self.stack is not None:
            return f"the stack {self.stack.name} ({self.stack.region})"
        if self.stack_wanted:
            return f"the stack {self.stack_wanted}"
        return f"{self.dotenv.name} for `make serve`" + (f" behind {self.base_url}" if self.base_url else "")

    def where_secrets(self) -> str:
        return f"the secret of the stack {self.stack.name}" if self.stack is not None else self.dotenv.name

    def where_settings(self) -> str:
        return DEPLOY_FILE if self.stack is not None else self.dotenv.name

    def where_all(self) -> str:
        """Where the settings go, the secrets and the others, each place named once (`.env` holds them all)."""
        if self.stack is None:
            return self.dotenv.name
        return f"{self.where_secrets()} (the secrets) and {DEPLOY_FILE} (the others; then `make deploy`)"

    def put_key(self) -> str:
        """How to put the app's private key (the whole .pem file) where the secrets go, in the form that place
        reads: in `.env` inside double quotes, the one form python-dotenv reads across lines."""
        if self.stack is not None:
            return f"put the app's private key, the whole .pem file, into {self.where_secrets()}"
        return (f'put the app\'s private key into {self.dotenv.name} as GITHUB_PRIVATE_KEY="…", the whole .pem file '
                "inside the double quotes, its lines as they are (unquoted, a value ends with its first line)")

    @property
    def github_webhook_url(self) -> str:
        if self.stack is not None:
            return self.stack.outputs["GitHubWebhookUrl"]
        return self.base_url.rstrip("/") + "/github" if self.base_url else ""

    @property
    def telegram_webhook_url(self) -> str:
        if self.stack is not None:
            return self.stack.outputs["TelegramWebhookUrl"]
        return self.base_url.rstrip("/") + "/telegram" if self.base_url else ""

    def next_deploy(self) -> dict[str, str]:
        """The parameters the next `make deploy` applies to this stack (samconfig.local.toml, if it is this stack's)."""
        if self.stack is None or self.samconfig.stack_name() not in ("", self.stack.name):
            return {}
        return {k: v for k, v in self.samconfig.parameters().items() if k in PARAMETER_SETTINGS}

    def pending(self) -> dict[str, str]:
        """The parameters of the next `make deploy` that differ from the deployed stack's."""
        deployed = self.stack.parameters if self.stack is not None else {}
        return {k: v for k, v in self.next_deploy().items()
                if v != deployed.get(k, "") and not (is_placeholder(v) and is_placeholder(deployed.get(k)))}

    def values(self, environ: Mapping[str, str]) -> dict[str, str]:
        """The settings without the secret's. For `make serve`, the environment over `.env`, as `make serve`
        takes them. For a stack, what the functions see (its parameters, and those the next `make deploy`
        gives it) over the environment, which only fills what the stack does not say: a value left in the
        shell is never checked, nor stored, in the deployment's place."""
        shell = known({k: v for k, v in environ.items() if k in SETTING_NAMES})
        if self.stack is None:
            return {**known(read_dotenv(self.dotenv)), **shell}
        return {**shell, **self.stack.settings(), **known({PARAMETER_SETTINGS[k]: v for k, v in self.next_deploy().items()})}

    def secrets(self, values: Mapping[str, str]) -> dict[str, str]:
        """The four secrets: for a stack, its secret's, the values (the environment) only for one it does not
        hold yet; for `make serve`, the values (environment, .env) first, then the secret `PAGER_SECRET_ID`
        names."""
        found = {name: values[name] for name in SECRET_NAMES if values.get(name)}
        if self.secret is not None:
            return {**found, **{name: str(v) for name, v in self.secret.read().items() if name in SECRET_NAMES and v}}
        if len(found) < len(SECRET_NAMES) and values.get("PAGER_SECRET_ID") and self.read_secret is not None:
            stored = self.read_secret(values["PAGER_SECRET_ID"])
            found.update({name: str(stored[name]) for name in SECRET_NAMES if name not in found and stored.get(name)})
        return found

    def readable_secrets(self, values: Mapping[str, str]) -> tuple[dict[str, str], str, str]:
        """The four secrets as `secrets` finds them, why the secret could not be read ("" when it could, or
        was not needed) and the cause (`unread_cause`): then only those the values hold (environment, .env)."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return self.secrets(values), "", ""
        except (ConfigError, BotoCoreError, ClientError) as exc:
            secret_id = self.secret.secret_id if self.secret is not None else values.get("PAGER_SECRET_ID", "")
            found = {name: values[name] for name in SECRET_NAMES if values.get(name)}
            return found, unreadable(secret_id, exc), unread_cause(exc)

    def local_table(self, environ: Mapping[str, str]) -> str:
        """`.env`'s table as `make serve` takes it (`local_table`), the environment over the file."""
        named = {**read_dotenv(self.dotenv), **{k: v for k, v in environ.items() if k == "PAGER_TABLE"}}
        return local_table(named)

    def stored_secrets(self) -> dict[str, str]:
        """What the target itself holds (the secret, or .env), the environment left out."""
        if self.secret is not None:
            return {k: v for k, v in self.secret.read().items() if k in SECRET_NAMES and v}
        return {k: v for k, v in read_dotenv(self.dotenv).items() if k in SECRET_NAMES and v}

    def store_secrets(self, updates: Mapping[str, str]) -> bool:
        if self.secret is not None:
            return self.secret.write(updates)
        return write_dotenv(self.dotenv, updates)

    def store_settings(self, updates: Mapping[str, str]) -> bool:
        """Non-secret settings: parameters for the next `make deploy`, or lines of .env."""
        if self.stack is not None:
            parameters = {SETTING_PARAMETERS[k]: v for k, v in updates.items() if k in SETTING_PARAMETERS}
            if self.samconfig.stack_name() not in ("", self.stack.name):
                raise ValueError(f"{DEPLOY_FILE} deploys the stack {self.samconfig.stack_name()}, not {self.stack.name}: "
                                 f"give the parameters {', '.join(parameters)} to that stack's deploy by hand")
            return self.samconfig.update(parameters, self.stack)
        return write_dotenv(self.dotenv, updates)
