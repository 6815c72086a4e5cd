"""What the GitHub and Telegram clients share about a request that failed on the way."""

from __future__ import annotations

import requests
from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

from . import redact

# Every log line from here on (urllib3's at DEBUG too) and http.client's debug output, should anyone turn them
# on, show no credential, even where the clients are imported without the rest of pager (pager.observe)
redact.install()

NEVER_SENT = (requests.ConnectTimeout, requests.exceptions.SSLError, requests.exceptions.ProxyError,
              requests.exceptions.InvalidURL, requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema,
              requests.exceptions.InvalidHeader)


def may_have_arrived(exc: requests.RequestException) -> bool:
    """Whether a request that got no answer may have reached the service, and so may have acted: a
    read timeout, or a connection reset or closed after it was sent, may; a connection that was never
    made (refused, unresolved, timed out connecting, a failed TLS handshake) or a request that was
    never built may not."""
    if isinstance(exc, NEVER_SENT):
        return False
    if isinstance(exc, requests.ConnectionError) and exc.args:
        reason = getattr(exc.args[0], "reason", exc.args[0])  # urllib3's MaxRetryError carries the cause
        return not isinstance(reason, (NewConnectionError, ConnectTimeoutError))
    return True
