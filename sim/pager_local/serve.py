"""`make serve`: pager's two endpoints on a local port, its sweep every 15 minutes and its recovery check
every minute.

Settings come from the environment and a `.env` file (KEY=value lines; the environment wins), so it
talks to the real GitHub and Telegram. DynamoDB is embedded (moto's server in this process) unless
`PAGER_TABLE` is set and AWS credentials are found, in which case that real table is used.

Behind a tunnel (for example `cloudflared tunnel --url http://127.0.0.1:8080` or `ngrok http 8080`),
point the GitHub App's webhook at <tunnel>/github and Telegram's setWebhook at <tunnel>/telegram.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from pager.admin.deployment import read_dotenv
from pager.sweep.recovery import CHECK_EVENT
from pager_world.events import LambdaContext, scheduled_event

from .local import PagerServer, embedded_dynamodb, load_handler

SWEEP_SECONDS = 15 * 60
CHECK_SECONDS = 60


def has_aws_credentials() -> bool:
    import boto3

    return boto3.session.Session().get_credentials() is not None


@contextlib.contextmanager
def table() -> Iterator[None]:
    if os.environ.get("PAGER_TABLE") and has_aws_credentials() and not os.environ.get("PAGER_DYNAMODB_ENDPOINT"):
        print(f"DynamoDB: the real table {os.environ['PAGER_TABLE']}")
        yield
        return
    os.environ.setdefault("PAGER_TABLE", "pager-local")
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "local")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "local")
    with embedded_dynamodb(os.environ["PAGER_TABLE"]) as endpoint:
        os.environ["PAGER_DYNAMODB_ENDPOINT"] = endpoint
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
            print(f"sweep failed: {type(exc).__name__}: {exc}")


def settings_problems(environ: dict[str, str]) -> list[str]:
    """Every problem of the settings as the functions would read them (missing, malformed, out of range)."""
    from pager.errors import ConfigError
    from pager.settings import Settings

    try:
        Settings.from_env(environ)
    except ConfigError as exc:
        return exc.problems
    return []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    parser.add_argument("--env-file", default=".env")
    parser.add_argument("--sweep-minutes", type=float, default=SWEEP_SECONDS / 60)
    args = parser.parse_args()
    for key, value in read_dotenv(Path(args.env_file)).items():
        os.environ.setdefault(key, value)
    with table():
        problems = settings_problems(dict(os.environ))
        if problems:
            print(f"pager cannot start: its settings ({args.env_file} and the environment) are not right:")
            for problem in problems:
                print(f"  - {problem}")
            print(f"fix: run `pager setup --local <tunnel URL>`, or edit {args.env_file}; then `pager doctor --local`")
            return 2
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


if __name__ == "__main__":
    raise SystemExit(main())
