"""The composition root: the one place where settings, clients and the table are put together.

Nothing is built at import. The first invocation of a container reads the settings (environment,
then the secrets' parameter) and builds the services; warm invocations reuse them. Tests, the
local server and the simulator hand in their own services with `use()`.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.typing import LambdaContext

from .errors import BadRequest, ConfigError, PagerError, Transient
from .observe import logger, metrics
from .routing import Request
from .services import Lazy, Services
from .settings import Settings
from .waiting import CHECK_EVENT

_services: Services | None = None
_checked_at = 0.0  # when the settings of built services were last compared with the environment's
_handed_in = False  # services handed in with use() are never rebuilt

# The secret is cached for as long by Powertools: a rotated secret reaches a warm container within
# twice this, without a redeploy.
SETTINGS_REFRESH_SECONDS = 300.0


def build_services(
    env: Mapping[str, str],
    *,
    settings: Settings | None = None,
    session: Any = None,
    dynamodb: Any = None,
    clock: Callable[[], float] = time.time,
    sleep: Callable[[float], None] = time.sleep,
) -> Services:
    """Services for a deployment: DynamoDB through boto3, GitHub and Telegram through requests.

    Each part is built on first use, so that a delivery pager ignores builds none of them (and
    imports neither requests, jwt, cryptography nor boto3). `session` and `dynamodb` replace the
    network (tests, the local server, the simulator)."""
    settings = settings or Settings.from_env(env)
    shared: dict[str, Any] = {}

    def http() -> Any:
        if "session" not in shared:
            import requests

            shared["session"] = session or configure_session(requests.Session(), os.environ)
        return shared["session"]

    def store() -> Any:
        from .dynamo import DynamoStore

        client = dynamodb
        if client is None:
            import boto3
            from botocore.config import Config

            client = boto3.client(
                "dynamodb",
                region_name=env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
                endpoint_url=env.get("PAGER_DYNAMODB_ENDPOINT") or None,
                config=Config(connect_timeout=2, read_timeout=3, retries={"mode": "standard", "max_attempts": 3}),
            )
        return DynamoStore(client, settings.table)

    def github() -> Any:
        from .github import GitHub

        return GitHub(http(), app_id=settings.github_app_id, private_key=settings.github_private_key,
                      api_url=settings.github_api_url, clock=clock)

    def telegram() -> Any:
        from .telegram import Telegram

        return Telegram(http(), token=settings.telegram_bot_token, api_url=settings.telegram_api_url, sleep=sleep)

    return Services(settings=settings, store=Lazy(store), github=Lazy(github), telegram=Lazy(telegram),
                    clock=clock, sleep=sleep)


_PROXY_SETTINGS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def configure_session(session: Any, environ: Mapping[str, str]) -> Any:
    """A session for pager's two APIs. `requests` reads proxy and CA settings from the environment on
    every call, scanning all of it, which costs a contribution about a third of its own time
    (docs/benchmarks.md). Without a proxy setting, the CA bundle it would find is read once here."""
    if any(name.lower() in _PROXY_SETTINGS for name in environ):
        return session
    bundle = environ.get("REQUESTS_CA_BUNDLE") or environ.get("CURL_CA_BUNDLE")
    if bundle:
        session.verify = bundle
    session.trust_env = False
    return session


def services(monotonic: Callable[[], float] = time.monotonic) -> Services:
    """The container's services, built on first use and kept for warm invocations. Every few minutes
    the settings are read again (the secret through Powertools' cache): when they changed, such as a
    rotated webhook secret or bot token, the services are built anew."""
    global _services, _checked_at
    now = monotonic()
    if _services is None:
        _services, _checked_at = build_services(os.environ), now
    elif not _handed_in and now - _checked_at >= SETTINGS_REFRESH_SECONDS:
        _checked_at = now
        try:
            settings = Settings.from_env(os.environ)
        except PagerError as exc:  # settings that worked stay: a throttled read, or a change that cannot work
            logger.warning("settings not read again: the services built before stay", extra={
                "error": str(exc), "problems": getattr(exc, "problems", None)})
            return _services
        if settings != _services.settings:
            logger.info("settings changed: services built anew")
            _services = build_services(os.environ, settings=settings)
    return _services


def use(built: Services | None) -> None:
    """Hand in services (tests, the local server, the simulator); None builds anew on next use."""
    global _services, _handed_in
    _services, _handed_in = built, built is not None


# debug=False always: with POWERTOOLS_DEV set, Powertools' debug mode would print() every raw request
# (its signature and Telegram's secret token among the headers) past pager's redaction, and answer a
# crash with its traceback.
app = APIGatewayHttpResolver(debug=False)


def _respond(answer: tuple[int, dict[str, Any]]) -> Response:
    status, body = answer
    return Response(status_code=status, content_type="application/json", body=json.dumps(body))


@app.post("/github")
def _github() -> Response:
    from .webhook import handle_github

    return _respond(handle_github(_request(), services(), seconds=_seconds_left(app.lambda_context)))


@app.post("/telegram")
def _telegram() -> Response:
    from .webhook import handle_telegram

    return _respond(handle_telegram(_request(), services()))


def _request() -> Request | dict[str, Any]:
    """The request `webhook_handler` read before resolving (read once), or the raw event of a resolve
    called without it."""
    request = app.context.get("request")
    return request if isinstance(request, Request) else app.current_event.raw_event


def _seconds_left(context: Any, ceiling: float = 8.0) -> float:
    """The deadline of an invocation: `ceiling`, shortened to what Lambda's timeout leaves."""
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if remaining is None:
        return ceiling
    return max(0.5, min(ceiling, remaining() / 1000 - 1.5))


@app.not_found
def _not_found(exc: Exception) -> Response:
    """A path or method pager does not serve: 404, with one log line (the path is text a client can send: the
    request was read before)."""
    event = app.current_event
    logger.warning("request refused", extra={"status": 404, "outcome": "refused", "reason": "no such endpoint",
                                             "method": event.http_method, "path": event.raw_path[:200]})
    return Response(status_code=404, content_type="application/json",
                    body=json.dumps({"error": "no such endpoint: POST /github or POST /telegram"}))


@app.exception_handler(ConfigError)
def _not_configured(exc: ConfigError) -> Response:
    """Settings missing or malformed: one log line naming every problem, a 500 (GitHub's list shows it,
    and the sweep asks for the delivery again once the settings are right)."""
    logger.error("configuration", extra={"error": str(exc), "problems": exc.problems})
    return Response(status_code=500, content_type="application/json",
                    body=json.dumps({"error": "pager is not configured: see its log"}))


@app.exception_handler(Transient)
def _unavailable(exc: Transient) -> Response:
    """The settings could not be read now (the secrets' store throttled): a 500 the sweep brings back."""
    logger.error("settings not read", extra={"error": str(exc), "kind": type(exc).__name__})
    return Response(status_code=500, content_type="application/json",
                    body=json.dumps({"error": "pager could not read its settings now: delivered again later"}))


@logger.inject_lambda_context
@metrics.log_metrics
def webhook_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """Each log line carries the request id and whether it was a cold start; the metrics are flushed
    when the invocation ends. No line carries the correlation id of an invocation before (Powertools
    keeps it in a warm container): the GitHub endpoint sets it once a delivery's signature holds. An event
    that is no request of API Gateway's, or holds text no client can send (`Request.from_apigw`), is
    answered here, 400 with its reason and one log line: the resolver would raise on it."""
    logger.set_correlation_id(None)
    try:
        request = Request.from_apigw(event)
    except BadRequest as exc:
        logger.warning("request refused", extra={"status": exc.status, "outcome": "refused", "reason": str(exc)})
        return {"statusCode": exc.status, "body": json.dumps({"error": str(exc)}), "isBase64Encoded": False,
                "headers": {"Content-Type": "application/json"}, "cookies": []}
    app.append_context(request=request)  # the endpoints take it as read (the resolver clears it after)
    return app.resolve(event, context)


@logger.inject_lambda_context
@metrics.log_metrics
def sweep_handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    from .sweep import run_sweep

    run_id = getattr(context, "aws_request_id", None) or str((event or {}).get("id") or uuid.uuid4())
    try:
        built = services()
        seconds = _seconds_left(context, ceiling=150.0)
        if (event or {}).get("pager") == CHECK_EVENT["pager"]:  # the every-minute schedule
            from .sweep.run import check

            return check(built, now=built.now(), run_id=run_id, seconds=seconds)
        event_id = (event or {}).get("id")
        return run_sweep(built, now=built.now(), run_id=run_id, seconds=seconds,
                         event_id=str(event_id) if event_id else None)
    except ConfigError as exc:
        logger.error("configuration", extra={"error": str(exc), "problems": exc.problems})
        raise
    except PagerError as exc:  # the table throttled before the run began: the next run reads back as far
        summary = {"run_id": run_id, "outcome": f"aborted: {type(exc).__name__}", "error": str(exc)}
        logger.error("sweep run", extra=summary)
        return summary
