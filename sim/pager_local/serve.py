"""`make serve`: pager's two endpoints on a local port, its sweep every 15 minutes and its recovery check
every minute.

Settings come from the environment and a `.env` file (KEY=value lines; the environment wins), so it
talks to the real GitHub and Telegram. DynamoDB is embedded (moto's server in this process) unless
`PAGER_TABLE` is set and AWS credentials are found, in which case that real table is used. The settings
are checked before anything starts, every problem named at once: a required setting left empty (such
as `PAGER_TABLE=`) is missing, and so named.

Behind a tunnel (for example `cloudflared tunnel --url http://127.0.0.1:8080` or `ngrok http 8080`),
point the GitHub App's webhook at <tunnel>/github and Telegram's setWebhook at <tunnel>/telegram.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import Any

from pager.admin.deployment import aws_region, local_table, serve_environ, unreadable
from pager.errors import ConfigError
from pager.redact import redact
from pager.waiting import CHECK_EVENT
from pager_world.events import LambdaContext, scheduled_event

from .local import PagerServer, embedded_dynamodb, load_handler

SWEEP_SECONDS = 15 * 60
CHECK_SECONDS = 60


def has_aws_credentials() -> bool:
    import boto3

    return boto3.session.Session().get_credentials() is not None


@contextlib.contextmanager
def table(environ: MutableMapping[str, str], named: bool) -> Iterator[None]:
    """The table PAGER_TABLE names (checked by then: never empty): the real one when the settings named it
    and AWS credentials are found, else one embedded in this process under that name."""
    if named and has_aws_credentials() and not environ.get("PAGER_DYNAMODB_ENDPOINT"):
        print(f"DynamoDB: the real table {environ['PAGER_TABLE']}")
        yield
        return
    environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    if not has_aws_credentials():  # the embedded table takes any; real ones (a profile's) stay for the secret
        environ.setdefault("AWS_ACCESS_KEY_ID", "local")
        environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    with embedded_dynamodb(environ["PAGER_TABLE"]) as endpoint:
        environ["PAGER_DYNAMODB_ENDPOINT"] = endpoint
        print(f"DynamoDB: embedded at {endpoint} (state is lost when this stops)")
        yield


def sweep_forever(stop: threading.Event, every: float) -> None:
    """The sweep function's two schedules: the run every `every` seconds, the recovery check each minute."""
    sweep = load_handler("sweep")
    last_run = time.time()
    while not stop.wait(CHECK_SECONDS):
        now = time.time()
        scheduled = now - last_run >= every
        event = scheduled_event(f"local-{int(now)}", now) if scheduled else dict(CHECK_EVENT)
        last_run = now if scheduled else last_run
        try:
            summary = sweep(event, LambdaContext("SweepFunction", 300))
            if scheduled or summary.get("outcome") != "nothing waits":
                print(f"sweep: {summary}")
        except Exception as exc:  # the next run reads back as far; say what happened and go on
            print(redact(f"sweep failed: {type(exc).__name__}: {exc}"))  # not a log line: redacted here


def settings_problems(environ: Mapping[str, str], env_file: str = ".env") -> list[str]:
    """Every problem of the settings as the functions would read them (missing, malformed, out of range;
    a required setting left empty is missing), a secret that cannot be read among them (for want of a region:
    where to set one, `env_file` among them)."""
    from pager.errors import SecretsUnavailable
    from pager.settings import Settings, read_secret_with_powertools

    def read_secret(secret_id: str) -> Any:
        from botocore.exceptions import BotoCoreError

        try:
            return read_secret_with_powertools(secret_id)
        except BotoCoreError as exc:  # no region, no credentials: a setting of this machine, not a traceback
            hint = f"set AWS_REGION in the environment or in {env_file}"
            raise ConfigError(unreadable(secret_id, exc, region_hint=hint)) from None
        except SecretsUnavailable as exc:  # throttled, or failing: said with the others, try again
            raise ConfigError(str(exc)) from None

    try:
        Settings.from_env(environ, read_secret)
    except ConfigError as exc:
        return exc.problems
    return []


def prepare(environ: MutableMapping[str, str], env_file: str) -> bool:
    """Set the settings `make serve` runs with in `environ`: `.env`'s under the environment's, the embedded
    table's name when PAGER_TABLE is not named at all, and AWS_DEFAULT_REGION, the one boto3 reads, to the
    region of `aws_region`'s rule for `.env` (AWS_REGION first, as Lambda, which sets both alike, and as
    `make doctor DOCTOR_ARGS=--local`). Whether PAGER_TABLE named a table."""
    environ.update(serve_environ(Path(env_file), environ))
    named = "PAGER_TABLE" in environ
    environ["PAGER_TABLE"] = local_table(environ)
    region = aws_region("", None, environ)
    if region:
        environ["AWS_DEFAULT_REGION"] = region
    return named


def serve(args: argparse.Namespace) -> int:
    """Both endpoints on the port and the sweep on its timer, until Ctrl-C."""
    server = PagerServer(args.port).start()
    print(f"pager listens on {server.url}/github and {server.url}/telegram; sweep every {args.sweep_minutes:g} min")
    stop = threading.Event()
    threading.Thread(target=sweep_forever, args=(stop, args.sweep_minutes * 60), daemon=True).start()
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping")
    finally:
        stop.set()
        server.stop()
    return 0


def main(argv: Sequence[str] | None = None, environ: MutableMapping[str, str] | None = None) -> int:
    """`make serve`: check the settings (every problem at once, exit 2), then the table, then serve."""
    environ = os.environ if environ is None else environ
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, help="default: PORT (the environment, then .env), else 8080")
    parser.add_argument("--env-file", default=".env")
    parser.add_argument("--sweep-minutes", type=float, default=SWEEP_SECONDS / 60)
    args = parser.parse_args(argv)
    try:
        named = prepare(environ, args.env_file)
        problems = settings_problems(dict(environ), args.env_file)  # before anything starts: an empty PAGER_TABLE is named here
    except ConfigError as exc:  # .env itself cannot be read as settings
        named, problems = False, exc.problems
    port = str(environ.get("PORT") or "8080") if args.port is None else str(args.port)
    if not port.isdigit() or not 0 < int(port) < 65536:
        problems = [*problems, "PORT must be a port number (1 to 65535)"]
    if problems:
        print(f"pager cannot start: its settings ({args.env_file} and the environment) are not right:")
        for problem in problems:
            print(f"  - {problem}")
        print(f'fix: run `make setup SETUP_ARGS="--local <tunnel URL>"`, or edit {args.env_file}; '
              "then `make doctor DOCTOR_ARGS=--local`")
        return 2
    args.port = int(port)
    with table(environ, named):
        return serve(args)


if __name__ == "__main__":
    raise SystemExit(main())
