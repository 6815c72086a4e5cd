"""The command line `pager`: `pager setup`, `pager doctor`, `pager where` and `pager remove` (the console script
of pyproject.toml).

    pager setup   [--stack NAME] [--region REGION] [--local [URL]] [--env-file PATH] [--org ORG] [--name NAME] [--test-message]
                  [--workflows | --no-workflows] [--time-zone ZONE] [--quiet-hours HH:MM-HH:MM|none]
    pager doctor  [--stack NAME] [--region REGION] [--local [URL]] [--env-file PATH]
    pager where   [--stack NAME] [--region REGION]
    pager remove  [--stack NAME] [--region REGION] [--yes]

Both find the deployment the way the functions read their settings: the stack (its outputs, its
parameters and the parameters `make deploy` is about to apply from samconfig.local.toml, its secrets'
parameter), or, with `--local` or when no stack is found, a `.env` file for `make serve`; the
environment wins over both. `--local URL` names the tunnel in front of `make serve`. `pager where` prints
the stack's name and region as every command finds them (the Makefile's targets pass them on to the SAM
and AWS CLIs); `pager remove` removes the deployment (pager.admin.remove).

Everything outside the process is an argument of `main` (`Context`): the environment, the folder, the
streams, `input` and the hidden input, the browser, the clock and the wait, the HTTP session, the
AWS clients, and the folder where this machine names its time zone (/etc). Tests run both commands
against the fake world and moto through it. The Lambda functions never import this module.
"""

from __future__ import annotations

import argparse
import getpass
import os
import secrets
import sys
import time
import webbrowser
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO


@dataclass
class Context:
    """What the commands take from outside; each part defaults to the real one."""

    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    cwd: Path = field(default_factory=Path.cwd)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    input: Callable[[str], str] = input
    secret_input: Callable[[str], str] = getpass.getpass
    open_browser: Callable[[str], Any] = webbrowser.open
    now: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    session: Any = None  # a requests.Session (None: a new one)
    aws: Callable[[str, str], Any] | None = None  # (service, region) -> a boto3 client
    token: Callable[[int], str] = secrets.token_urlsafe
    etc: Path = Path("/etc")  # where setup finds this machine's time zone (localtime, timezone)

    def http(self) -> Any:
        if self.session is None:
            import requests

            self.session = requests.Session()
        return self.session

    def client(self, service: str, region: str) -> Any:
        if self.aws is not None:
            return self.aws(service, region)
        import boto3
        from botocore.config import Config

        return boto3.session.Session(region_name=region or None).client(
            service, config=Config(connect_timeout=5, read_timeout=20, retries={"mode": "standard", "max_attempts": 3}))


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pager")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "(not installed)"


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="pager", description="Set up and check a pager deployment.")
    top.add_argument("--version", action="version", version=f"pager {_version()}")
    commands = top.add_subparsers(dest="command", required=True)
    for name, text in (("setup", "register the GitHub App, store the secrets, set Telegram's webhook"),
                       ("doctor", "check the live configuration, check by check"),
                       ("where", "print the stack's name and region, as every command finds them"),
                       ("remove", "remove the deployment, and say what stays, what it costs and how to remove it")):
        command = commands.add_parser(name, help=text, description=text)
        command.add_argument("--stack", default="", help="the stack's name (default: samconfig.local.toml's, else pager)")
        command.add_argument("--region", default="", help="its region (default: samconfig.local.toml's, else AWS's)")
        if name == "remove":
            command.add_argument("--yes", action="store_true", help="do not ask for the stack's name first (for scripts)")
        if name not in ("setup", "doctor"):
            continue
        command.add_argument("--local", metavar="URL", default=None, nargs="?", const="",
                             help="for `make serve`: settings in .env; URL is the tunnel in front of it")
        command.add_argument("--env-file", default=".env", help="the .env file of `make serve` (default: .env)")
        if name == "setup":
            command.add_argument("--org", default="", help="register the app for this organization (default: ask)")
            command.add_argument("--name", default="", help="the app's name (GitHub's page lets you change it)")
            command.add_argument("--test-message", action="store_true", help="send a test message even if nothing changed")
            command.add_argument("--workflows", action=argparse.BooleanOptionalAction, default=None,
                                 help="give the app Workflows: write, to merge release pull requests that change "
                                      ".github/workflows/, or not (default: ask when it registers the app)")
            command.add_argument("--time-zone", type=_answer("time_zone_answer"), default=None, metavar="ZONE",
                                 help="your IANA time zone, such as Europe/Berlin (default: ask, offering this "
                                      "machine's, while no quiet hours are chosen)")
            command.add_argument("--quiet-hours", type=_answer("quiet_hours_answer"), default=None,
                                 metavar="HH:MM-HH:MM|none", help="when nothing buzzes, on that clock, or none "
                                                                 "(default: ask, offering 22:00-07:00, while none are chosen)")
    return top


def _answer(name: str) -> Callable[[str], str]:
    """A flag's value taken as setup takes the answer to its question (pager.admin.setup's `name`), or refused
    with setup's words before anything runs."""
    def take(text: str) -> str:
        from .admin import setup

        try:
            return str(getattr(setup, name)(text))
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    return take


def locate(args: argparse.Namespace, context: Context) -> Any:
    """The target: the stack found on AWS, or `.env` (asked for with --local, or when there is no stack). A
    secret `.env` names (PAGER_SECRET_ID) is read in the region `make serve` reads it in (`aws_region`)."""
    from botocore.exceptions import NoRegionError

    from .admin.deployment import (
        DEPLOY_FILE,
        NoStack,
        SamConfig,
        SecretStore,
        Target,
        aws_region,
        find_stack,
        serve_environ,
    )

    samconfig = SamConfig(context.cwd / DEPLOY_FILE)
    dotenv = context.cwd / args.env_file

    def for_serve(**given: Any) -> Target:
        region = aws_region(args.region, None, serve_environ(dotenv, context.environ))
        return Target("local", dotenv, samconfig, read_secret=_secret_reader(context, region), **given)

    if args.local is not None:
        return for_serve(base_url=args.local)
    region = aws_region(args.region, samconfig, context.environ)
    name = args.stack or samconfig.stack_name() or "pager"
    try:
        stack, missing = find_stack(context.client("cloudformation", region), name, region)
    except NoRegionError:  # no region anywhere: say how to give one, and read .env as `make serve` does
        stack, missing = None, NoStack("no AWS region to look for the stack in (pass --region, set AWS_REGION, or "
                                       f"keep `region` in {DEPLOY_FILE})")
    if stack is None:
        assert missing is not None
        # A stack asked for (by --stack or --region, or the one `make deploy` saved) that cannot be found, or
        # not asked about: never checked in its place with .env's values
        wanted = bool(args.stack or args.region or (samconfig.stack_name() and missing.asking))
        return for_serve(note=missing.why, stack_wanted=(f"{name} ({region})" if region else name) if wanted else "", aws_unasked=missing.asking)
    secret = SecretStore(lambda service: context.client(service, stack.region), stack.secret_id)
    return Target("stack", dotenv, samconfig, stack=stack, secret=secret)


def _secret_reader(context: Context, region: str) -> Callable[[str], Any]:
    def read(secret_id: str) -> Any:
        from .admin.deployment import SecretStore

        return SecretStore(lambda service: context.client(service, region), secret_id).read()

    return read


def setup(args: argparse.Namespace, context: Context, console: Any) -> int:
    from .admin.setup import Options, Tools, machine_zone, run_setup

    target = locate(args, context)
    if target.mode == "local" and args.local is None:
        console.failed(f"no stack found: {target.note}", "then run `make setup` again" if target.aws_unasked else
                       "deploy it first (README, Deploy), or set up for `make serve`: "
                       '`make setup SETUP_ARGS="--local <tunnel URL>"`')
        return 1
    tools = Tools(console=console, session=context.http(), now=context.now, sleep=context.sleep,
                  open_browser=context.open_browser, ask_secret=context.secret_input, token=context.token,
                  environ=context.environ, machine_zone=lambda: machine_zone(context.environ, context.etc))
    return run_setup(target, tools, Options(org=args.org, name=args.name, test_message=args.test_message,
                                            workflows=args.workflows, quiet_hours=args.quiet_hours,
                                            time_zone=args.time_zone))


def doctor(args: argparse.Namespace, context: Context, console: Any) -> int:
    from .admin import doctor as checkup
    from .admin.clients import AppGitHub, BotTelegram
    from .admin.deployment import make_command

    target = locate(args, context)
    console.line(f"pager doctor: {target.describe()}")
    if target.stack_wanted:  # never .env's values checked in the place of the stack asked for
        local = f"`make serve`'s .env instead: `{make_command('doctor', ['--local'])}`"
        console.failed(target.note, f"then run `{make_command('doctor', [])}` again; or, for {local}"
                       if target.aws_unasked else f"for {local}")
        return 1
    if target.note:
        console.line(f"  (no stack: {target.note}; the checks that need it are skipped)")

    def github(values: dict[str, str], found: dict[str, str]) -> Any:
        console.hide(*found.values())
        return AppGitHub(context.http(), app_id=values["GITHUB_APP_ID"], private_key=found["GITHUB_PRIVATE_KEY"],
                         api_url=values.get("GITHUB_API_URL") or "https://api.github.com", clock=context.now)

    def telegram(values: dict[str, str], found: dict[str, str]) -> Any:
        console.hide(*found.values())
        return BotTelegram(context.http(), token=found["TELEGRAM_BOT_TOKEN"],
                           api_url=values.get("TELEGRAM_API_URL") or "https://api.telegram.org", sleep=context.sleep)

    dynamodb = (lambda: context.client("dynamodb", target.stack.region)) if target.stack is not None else None
    facts = checkup.gather(target, environ=context.environ, github=github, telegram=telegram, dynamodb=dynamodb,
                           now=context.now())
    console.hide(*facts.secrets.values())
    return checkup.report(checkup.checks(facts), console.line)


def deployed(args: argparse.Namespace, context: Context) -> tuple[str, str]:
    """The stack's name and region: --stack, else samconfig.local.toml's, else pager; the region's one rule
    (`aws_region`), else the AWS profile's, where the AWS and SAM CLIs would look last ("" when none)."""
    from .admin.deployment import DEPLOY_FILE, SamConfig, aws_region, profile_region

    samconfig = SamConfig(context.cwd / DEPLOY_FILE)
    name = args.stack or samconfig.stack_name() or "pager"
    return name, aws_region(args.region, samconfig, context.environ) or profile_region(context.environ)


NO_REGION = ("no AWS region for the stack {name}: `make deploy` saves the one you choose in samconfig.local.toml; "
             "else set AWS_REGION in the environment (`AWS_REGION=eu-central-1 make remove`, or logs, outputs), "
             "or give pager --region")


def where(args: argparse.Namespace, context: Context, console: Any) -> int:
    """`<stack> <region>` on one line, for the Makefile; without a region, why on stderr and status 1."""
    name, region = deployed(args, context)
    if not region:
        context.stderr.write(NO_REGION.format(name=name) + "\n")
        return 1
    console.line(f"{name} {region}")
    return 0


def remove(args: argparse.Namespace, context: Context, console: Any) -> int:
    from .admin.clients import BotTelegram
    from .admin.deployment import DEPLOY_FILE, SamConfig
    from .admin.remove import Tools, run_remove

    name, region = deployed(args, context)
    if not region:
        console.failed(NO_REGION.format(name=name))
        return 1
    tools = Tools(console=console, aws=lambda service: context.client(service, region), now=context.now,
                  sleep=context.sleep, telegram=lambda api_url, token: BotTelegram(
                      context.http(), token=token, api_url=api_url, sleep=context.sleep))
    s3_prefix = str(SamConfig(context.cwd / DEPLOY_FILE).read().get("s3_prefix") or "")
    return run_remove(tools, name, region, s3_prefix=s3_prefix, yes=args.yes, environ=context.environ)


COMMANDS = {"setup": setup, "doctor": doctor, "where": where, "remove": remove}


def main(argv: Sequence[str] | None = None, context: Context | None = None) -> int:
    """Run one of the commands; the exit status."""
    from botocore.exceptions import BotoCoreError, ClientError, HTTPClientError
    from botocore.exceptions import ConnectionError as AWSConnectionError

    from . import observe  # noqa: F401  (first: no log line of any library shows a secret, pager.redact)
    from .admin.console import Console
    from .errors import ConfigError, PagerError

    context = context or Context()
    args = parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    console = Console(context.stdout, context.input)
    command = COMMANDS[args.command]
    try:
        return command(args, context, console)
    except KeyboardInterrupt:
        console.line("\nstopped; run it again to go on from where it stopped")
        return 130
    except EOFError:  # a question met a closed input (a pipe, a script, Ctrl-D): no answer is taken for one
        console.line()
        console.failed("stopped: the input closed before an answer came",
                       "run it where it can ask (a terminal); it goes on from where it stopped")
        return 1
    except ConfigError as exc:  # a setting, or .env itself, is not right: no point running it again as it is
        console.failed(str(exc), "fix what it names, then run it again")
        return 1
    except (AWSConnectionError, HTTPClientError) as exc:  # no answer from AWS: the network, not the credentials
        console.failed(f"AWS could not be asked ({type(exc).__name__}): {exc}",  # (before OSError: some are)
                       "check this machine's network, then run it again; it goes on from where it stopped")
        return 1
    except (PagerError, ValueError, OSError) as exc:
        console.failed(f"{type(exc).__name__}: {exc}", "run it again; it goes on from where it stopped")
        return 1
    except (BotoCoreError, ClientError) as exc:  # AWS refused (credentials, permissions): said, without a traceback
        console.failed(f"AWS: {exc}", "check your AWS credentials and their permissions "
                                                "(docs/deploy.md#pager-setup-step-by-step)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
