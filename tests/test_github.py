"""Adapter tests of pager.github.GitHub: the HTTP client against GitHub's REST API, faked with `responses`.

Covers the app JWT (claims, reuse), installation tokens (caching, refresh near expiry), paging by the
`Link` header, the mapping of every kind of failure onto pager.errors, call counting, the deadline,
and that no exception text carries the JWT, a token or the private key.
"""

from __future__ import annotations

import json
import traceback

import jwt
import pytest
import requests
import responses
from cryptography.hazmat.primitives import serialization

from pager import deadline
from pager.errors import ConfigError, DeadlineExceeded, GitHubRefused, GitHubUnavailable
from pager.github import DeliveryPage, GitHub
from pager.values import iso

API = "https://api.github.test"
NOW = 1_796_198_400.0
REPO = "octo-org/octo-repo"
INSTALLATION = 4242
TOKEN = "v1.an-installation-token-of-no-particular-format"
DELIVERIES = f"{API}/app/hook/deliveries"


class Clock:
    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def mock():
    with responses.RequestsMock(assert_all_requests_are_fired=False) as rsps:
        yield rsps


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def github(private_key_pem: str, clock: Clock) -> GitHub:
    return GitHub(requests.Session(), app_id="12345", private_key=private_key_pem, api_url=API, clock=clock)


def public_key(private_key_pem: str):
    key = serialization.load_pem_private_key(private_key_pem.encode(), password=None)
    return key.public_key()


def token_answer(mock, *, token: str = TOKEN, expires_at: float = NOW + 3600, installation: int = INSTALLATION):
    return mock.post(
        f"{API}/app/installations/{installation}/access_tokens",
        status=201,
        json={"token": token, "expires_at": iso(expires_at), "permissions": {"contents": "write"}},
    )


def delivery(id: int, guid: str = "g", status_code: int = 200) -> dict:
    return {
        "id": id,
        "guid": guid,
        "delivered_at": "2026-12-02T08:00:00Z",
        "redelivery": False,
        "duration": 0.2,
        "status": "OK" if status_code == 200 else f"Invalid HTTP Response: {status_code}",
        "status_code": status_code,
        "event": "issues",
        "action": "opened",
        "installation_id": INSTALLATION,
        "repository_id": 1,
    }


# -- the app JWT ------------------------------------------------------------------------------------------


def test_the_app_jwt_is_rs256_issued_by_the_app_a_minute_back_and_expiring_in_nine_minutes(github, private_key_pem):
    token = github.app_jwt()

    assert jwt.get_unverified_header(token)["alg"] == "RS256"
    claims = jwt.decode(token, public_key(private_key_pem), algorithms=["RS256"], options={"verify_exp": False, "verify_iat": False})
    assert claims == {"iss": "12345", "iat": int(NOW) - 60, "exp": int(NOW) + 9 * 60}


def test_the_app_jwt_is_reused_while_more_than_a_minute_is_left(github, clock):
    first = github.app_jwt()
    clock.now = NOW + 7 * 60
    assert github.app_jwt() == first


def test_the_app_jwt_is_signed_anew_a_minute_before_it_expires(github, clock):
    first = github.app_jwt()
    clock.now = NOW + 8 * 60
    second = github.app_jwt()

    assert second != first
    assert jwt.decode(second, options={"verify_signature": False})["exp"] == int(clock.now) + 9 * 60


def test_one_jwt_serves_every_call_of_a_run(mock, github):
    mock.get(DELIVERIES, json=[])
    mock.post(f"{API}/app/hook/deliveries/7/attempts", status=202)

    github.list_deliveries()
    github.redeliver(7)

    first, second = (call.request.headers["Authorization"] for call in mock.calls)
    assert first == second == f"Bearer {github.app_jwt()}"


def test_a_private_key_that_is_not_a_key_is_a_config_error_that_does_not_quote_it(clock):
    secret_garbage = "-----BEGIN PRIVATE KEY-----\nnot-really-a-key-but-secret\n-----END PRIVATE KEY-----"
    github = GitHub(requests.Session(), app_id="1", private_key=secret_garbage, api_url=API, clock=clock)

    with pytest.raises(ConfigError) as caught:
        github.app_jwt()

    assert "GITHUB_PRIVATE_KEY" in str(caught.value)
    assert "not-really-a-key-but-secret" not in "".join(traceback.format_exception(caught.value))


def test_a_private_key_with_escaped_line_breaks_still_signs(private_key_pem, clock):
    escaped = private_key_pem.replace("\n", "\\n")
    github = GitHub(requests.Session(), app_id="1", private_key=escaped, api_url=API, clock=clock)

    claims = jwt.decode(github.app_jwt(), public_key(private_key_pem), algorithms=["RS256"], options={"verify_exp": False, "verify_iat": False})
    assert claims["iss"] == "1"


# -- headers and timeouts ----------------------------------------------------------------------------------


def test_every_call_sends_githubs_media_type_api_version_and_a_user_agent(mock, github):
    mock.get(DELIVERIES, json=[])

    github.list_deliveries()

    headers = mock.calls[0].request.headers
    assert headers["Accept"] == "application/vnd.github+json"
    assert headers["X-GitHub-Api-Version"] == "2022-11-28"
    assert headers["User-Agent"] == "pager"


def test_every_call_has_a_connect_and_read_timeout(mock, github):
    mock.get(DELIVERIES, json=[])

    github.list_deliveries()

    assert mock.calls[0].request.req_kwargs["timeout"] == (3.05, 5.0)


def test_the_timeout_shrinks_to_what_the_deadline_leaves(mock, github):
    mock.get(DELIVERIES, json=[])
    fake = Clock(100.0)

    with deadline.within(2.0, clock=fake):
        github.list_deliveries()

    assert mock.calls[0].request.req_kwargs["timeout"] == (2.0, 2.0)


def test_no_call_starts_once_the_deadline_has_passed(mock, github):
    fake = Clock(100.0)

    with deadline.within(1.0, clock=fake):
        fake.now = 101.5
        with pytest.raises(DeadlineExceeded):
            github.redeliver(7)

    assert github.calls == 0
    assert len(mock.calls) == 0


# -- installation tokens and installations ------------------------------------------------------------------


def test_an_installation_token_is_fetched_with_the_jwt_and_used_as_given(mock, github):
    token_answer(mock)
    mock.post(f"{API}/repos/{REPO}/dispatches", status=204)

    github.dispatch(REPO, "pager-draft", {"number": 1}, installation_id=INSTALLATION)

    token_call, dispatch_call = mock.calls
    assert token_call.request.headers["Authorization"] == f"Bearer {github.app_jwt()}"
    assert dispatch_call.request.headers["Authorization"] == f"Bearer {TOKEN}"


def test_an_installation_token_is_reused_until_five_minutes_before_it_expires(mock, github, clock):
    tokens = token_answer(mock, expires_at=NOW + 3600)
    mock.get(f"{API}/repos/{REPO}/pulls/5", json={"number": 5})

    github.get_pull(REPO, 5, installation_id=INSTALLATION)
    clock.now = NOW + 3600 - 301
    github.get_pull(REPO, 5, installation_id=INSTALLATION)

    assert tokens.call_count == 1


def test_an_installation_token_is_fetched_anew_within_five_minutes_of_its_expiry(mock, github, clock):
    token_answer(mock, expires_at=NOW + 3600)
    mock.get(f"{API}/repos/{REPO}/pulls/5", json={"number": 5})
    github.get_pull(REPO, 5, installation_id=INSTALLATION)

    clock.now = NOW + 3600 - 299
    mock.replace(
        responses.POST,
        f"{API}/app/installations/{INSTALLATION}/access_tokens",
        status=201,
        json={"token": "a-second-token", "expires_at": iso(clock.now + 3600)},
    )
    github.get_pull(REPO, 5, installation_id=INSTALLATION)

    assert mock.calls[-1].request.headers["Authorization"] == "Bearer a-second-token"
    assert github.calls == 4


def test_tokens_are_cached_per_installation(mock, github):
    token_answer(mock, token="token-one", installation=1)
    token_answer(mock, token="token-two", installation=2)

    assert github.installation_token(1) == "token-one"
    assert github.installation_token(2) == "token-two"
    assert github.installation_token(1) == "token-one"
    assert github.calls == 2


def test_a_token_refused_with_401_is_dropped_and_the_call_made_once_more_with_a_fresh_one(mock, github):
    tokens = token_answer(mock)
    mock.get(f"{API}/repos/{REPO}/pulls/5", status=401, json={"message": "Bad credentials"})
    mock.get(f"{API}/repos/{REPO}/pulls/5", json={"number": 5})

    assert github.get_pull(REPO, 5, installation_id=INSTALLATION) == {"number": 5}
    assert tokens.call_count == 2


def test_a_second_401_with_a_fresh_token_is_a_refusal(mock, github):
    tokens = token_answer(mock)
    mock.get(f"{API}/repos/{REPO}/pulls/5", status=401, json={"message": "Bad credentials"})

    with pytest.raises(GitHubRefused):
        github.get_pull(REPO, 5, installation_id=INSTALLATION)
    assert tokens.call_count == 2


def test_a_jwt_refused_with_401_is_signed_anew_for_the_next_call(mock, github, clock):
    mock.get(DELIVERIES, status=401, json={"message": "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"})
    first = github.app_jwt()

    with pytest.raises(GitHubRefused):
        github.list_deliveries()
    clock.now = NOW + 1

    assert github.app_jwt() != first


def test_the_installation_of_a_repository_is_looked_up_with_the_jwt_and_cached(mock, github):
    lookup = mock.get(f"{API}/repos/{REPO}/installation", json={"id": INSTALLATION, "account": {"login": "octo-org"}})

    assert github.installation_for(REPO) == INSTALLATION
    assert github.installation_for(REPO) == INSTALLATION
    assert lookup.call_count == 1
    assert mock.calls[0].request.headers["Authorization"] == f"Bearer {github.app_jwt()}"


def test_a_dispatch_without_an_installation_finds_it_then_sends_the_event(mock, github):
    mock.get(f"{API}/repos/{REPO}/installation", json={"id": INSTALLATION})
    token_answer(mock)
    dispatches = mock.post(f"{API}/repos/{REPO}/dispatches", status=204)

    github.dispatch(REPO, "pager-fix", {"repository": "octo-org/other", "entries": ["workflow:1"]})
    github.dispatch(REPO, "pager-fix", {"repository": "octo-org/other", "entries": ["workflow:2"]})

    assert github.calls == 4  # installation, token, dispatch, dispatch
    assert dispatches.call_count == 2
    assert json.loads(mock.calls[2].request.body) == {
        "event_type": "pager-fix",
        "client_payload": {"repository": "octo-org/other", "entries": ["workflow:1"]},
    }


# -- pull requests --------------------------------------------------------------------------------------------


def test_get_pull_returns_the_pull_request_as_github_shows_it(mock, github):
    token_answer(mock)
    mock.get(f"{API}/repos/{REPO}/pulls/7", json={"number": 7, "mergeable_state": "clean", "head": {"sha": "abc"}})

    pull = github.get_pull(REPO, 7, installation_id=INSTALLATION)

    assert pull["mergeable_state"] == "clean"


def test_merge_pull_sends_the_head_sha_and_the_method(mock, github):
    token_answer(mock)
    merge = mock.put(f"{API}/repos/{REPO}/pulls/7/merge", json={"sha": "merged", "merged": True, "message": "Pull Request successfully merged"})

    result = github.merge_pull(REPO, 7, sha="abc", method="squash", installation_id=INSTALLATION)

    assert result["merged"] is True
    assert json.loads(merge.calls[0].request.body) == {"sha": "abc", "merge_method": "squash"}


@pytest.mark.parametrize(
    ("status", "message"),
    [(405, "Pull Request is not mergeable"), (409, "Head branch was modified. Review and try the merge again.")],
)
def test_a_refused_merge_keeps_githubs_reason(mock, github, status, message):
    token_answer(mock)
    mock.put(f"{API}/repos/{REPO}/pulls/7/merge", status=status, json={"message": message, "documentation_url": "https://docs.github.com"})

    with pytest.raises(GitHubRefused) as caught:
        github.merge_pull(REPO, 7, sha="abc", method="squash", installation_id=INSTALLATION)

    assert caught.value.status == status
    assert caught.value.reason == message


# -- the app's webhook deliveries -------------------------------------------------------------------------------


def test_the_first_page_asks_for_a_hundred_deliveries_of_the_status(mock, github):
    listing = mock.get(
        DELIVERIES,
        match=[responses.matchers.query_param_matcher({"per_page": "100", "status": "failure"})],
        json=[delivery(2, status_code=502), delivery(1, status_code=500)],
    )

    page = github.list_deliveries(status="failure")

    assert listing.call_count == 1
    assert [item["id"] for item in page.items] == [2, 1]
    assert page.next_url is None


def test_items_come_back_exactly_as_github_lists_them(mock, github):
    items = [delivery(9, guid="a"), dict(delivery(8, guid="b"), throttled_at="2026-12-02T08:00:00Z", action=None)]
    mock.get(DELIVERIES, json=items)

    assert github.list_deliveries() == DeliveryPage(items=items, next_url=None)


def test_pages_follow_the_link_header_exactly_as_github_wrote_it(mock, github):
    next_url = f"{DELIVERIES}?per_page=100&cursor=v1_opaque%3D%3D"
    mock.get(
        DELIVERIES,
        match=[responses.matchers.query_param_matcher({"per_page": "100"})],
        json=[delivery(3)],
        headers={"Link": f'<{next_url}>; rel="next"'},
    )
    mock.get(
        DELIVERIES,
        match=[responses.matchers.query_param_matcher({"per_page": "100", "cursor": "v1_opaque=="})],
        json=[delivery(2), delivery(1)],
        headers={"Link": f'<{DELIVERIES}?per_page=100>; rel="first"'},
    )

    first = github.list_deliveries()
    second = github.list_deliveries(url=first.next_url)

    assert first.next_url == next_url
    assert [item["id"] for item in second.items] == [2, 1]
    assert second.next_url is None
    assert mock.calls[1].request.url == next_url
    assert github.calls == 2


@pytest.mark.parametrize("url", ["https://evil.test/app/hook/deliveries?cursor=x", "http://api.github.test/app/hook/deliveries",
                                 "https://api.github.test:8443/app/hook/deliveries", "https://api.github.test:x/", "garbage"])
def test_a_next_url_on_another_host_is_refused_before_the_jwt_leaves(mock, github, url):
    from pager.errors import GitHubRefused

    with pytest.raises(GitHubRefused):  # a link pager does not follow: its pass begins anew at the head
        github.list_deliveries(url=url)

    assert github.calls == 0
    assert len(mock.calls) == 0


def test_a_redelivery_is_a_post_of_an_attempt_with_the_jwt(mock, github):
    attempts = mock.post(f"{API}/app/hook/deliveries/123456789012/attempts", status=202, json={})

    github.redeliver(123456789012)

    assert attempts.call_count == 1
    assert mock.calls[0].request.headers["Authorization"] == f"Bearer {github.app_jwt()}"


def test_one_delivery_is_read_with_the_jwt_with_its_request_payload(mock, github):
    detail = {"id": 7, "guid": "g", "event": "issues", "request": {"headers": {}, "payload": {"repository": {"full_name": "o/r"}}}}
    mock.get(f"{API}/app/hook/deliveries/7", json=detail)

    assert github.get_delivery(7)["request"]["payload"]["repository"]["full_name"] == "o/r"
    assert mock.calls[0].request.headers["Authorization"] == f"Bearer {github.app_jwt()}"


def test_an_invalid_cursor_is_a_refusal(mock, github):
    mock.get(DELIVERIES, status=422, json={"message": "Validation Failed"})

    with pytest.raises(GitHubRefused) as caught:
        github.list_deliveries()

    assert (caught.value.status, caught.value.reason) == (422, "Validation Failed")


def test_an_answer_that_is_not_json_is_unavailable(mock, github):
    mock.get(DELIVERIES, body="<html>unicorn</html>", content_type="text/html")

    with pytest.raises(GitHubUnavailable):
        github.list_deliveries()


# -- failures --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_a_server_error_is_unavailable(mock, github, status):
    mock.post(f"{API}/app/hook/deliveries/7/attempts", status=status, body="")

    with pytest.raises(GitHubUnavailable) as caught:
        github.redeliver(7)

    assert caught.value.status == status


@pytest.mark.parametrize(
    ("status", "message"),
    [(404, "Not Found"), (422, "Validation Failed"), (403, "Resource not accessible by integration"), (400, "Bad request")],
)
def test_another_client_error_is_a_refusal_with_githubs_message(mock, github, status, message):
    mock.post(f"{API}/app/hook/deliveries/7/attempts", status=status, json={"message": message})

    with pytest.raises(GitHubRefused) as caught:
        github.redeliver(7)

    assert caught.value.status == status
    assert caught.value.reason == message
    assert message in str(caught.value)


def test_a_refusal_without_a_json_body_has_an_empty_reason(mock, github):
    mock.post(f"{API}/app/hook/deliveries/7/attempts", status=404, body="nope")

    with pytest.raises(GitHubRefused) as caught:
        github.redeliver(7)

    assert caught.value.reason == ""


def test_a_403_with_no_requests_remaining_is_a_rate_limit_until_the_reset(mock, github):
    mock.get(
        DELIVERIES,
        status=403,
        json={"message": "API rate limit exceeded for installation ID 4242."},
        headers={"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 120)},
    )

    with pytest.raises(GitHubUnavailable) as caught:
        github.list_deliveries()

    assert caught.value.status == 403
    assert caught.value.retry_after == pytest.approx(120)


def test_a_403_with_retry_after_is_a_rate_limit(mock, github):
    mock.get(DELIVERIES, status=403, json={"message": "Forbidden"}, headers={"retry-after": "30"})

    with pytest.raises(GitHubUnavailable) as caught:
        github.list_deliveries()

    assert caught.value.retry_after == 30


def test_a_secondary_rate_limit_without_headers_waits_a_minute(mock, github):
    mock.get(DELIVERIES, status=403, json={"message": "You have exceeded a secondary rate limit. Please wait a few minutes before you try again."})

    with pytest.raises(GitHubUnavailable) as caught:
        github.list_deliveries()

    assert caught.value.retry_after == 60


def test_a_429_is_a_rate_limit(mock, github):
    mock.get(DELIVERIES, status=429, json={"message": "Too many requests"}, headers={"retry-after": "5"})

    with pytest.raises(GitHubUnavailable) as caught:
        github.list_deliveries()

    assert (caught.value.status, caught.value.retry_after) == (429, 5)


def test_a_429_without_headers_is_still_a_rate_limit(mock, github):
    mock.get(DELIVERIES, status=429, body="")

    with pytest.raises(GitHubUnavailable) as caught:
        github.list_deliveries()

    assert caught.value.retry_after is None


@pytest.mark.parametrize(
    "failure",
    [requests.ReadTimeout("read timed out"), requests.ConnectTimeout("connect timed out")],
)
def test_a_timeout_is_unavailable(mock, github, failure):
    mock.get(DELIVERIES, body=failure)

    with pytest.raises(GitHubUnavailable, match="no answer in time"):
        github.list_deliveries()


def test_a_connection_error_is_unavailable(mock, github):
    mock.get(DELIVERIES, body=requests.ConnectionError("connection refused"))

    with pytest.raises(GitHubUnavailable, match="no answer"):
        github.list_deliveries()


def test_every_http_call_counts_also_the_failed_ones(mock, github):
    token_answer(mock)
    mock.get(f"{API}/repos/{REPO}/pulls/1", status=502)
    mock.get(DELIVERIES, body=requests.ConnectionError("down"))
    mock.post(f"{API}/app/hook/deliveries/7/attempts", status=404, json={"message": "Not Found"})

    for attempt in (
        lambda: github.get_pull(REPO, 1, installation_id=INSTALLATION),
        github.list_deliveries,
        lambda: github.redeliver(7),
    ):
        with pytest.raises((GitHubUnavailable, GitHubRefused)):
            attempt()

    assert github.calls == 4  # token, pull, deliveries, redelivery
    assert len(mock.calls) == 4


def test_a_failed_token_request_is_unavailable_and_caches_nothing(mock, github):
    mock.post(f"{API}/app/installations/{INSTALLATION}/access_tokens", status=503)

    with pytest.raises(GitHubUnavailable):
        github.installation_token(INSTALLATION)
    token_answer(mock)

    assert github.installation_token(INSTALLATION) == TOKEN


def test_no_exception_text_carries_the_jwt_the_token_or_the_key(mock, github, private_key_pem):
    token_answer(mock)
    mock.get(f"{API}/repos/{REPO}/pulls/1", status=401, json={"message": "Bad credentials"})
    mock.get(f"{API}/repos/{REPO}/pulls/2", status=502)
    mock.get(f"{API}/repos/{REPO}/pulls/3", body=requests.ConnectionError("connection reset"))
    mock.get(f"{API}/repos/{REPO}/pulls/4", body=requests.ReadTimeout("read timed out"))
    mock.get(f"{API}/repos/{REPO}/pulls/5", status=429, json={"message": "slow down"})
    mock.get(DELIVERIES, status=403, json={"message": "Forbidden"}, headers={"x-ratelimit-remaining": "0"})
    app_jwt = github.app_jwt()
    key_body = private_key_pem.splitlines()[1]

    texts = []
    for attempt in [lambda n=n: github.get_pull(REPO, n, installation_id=INSTALLATION) for n in (1, 2, 3, 4, 5)] + [
        github.list_deliveries
    ]:
        with pytest.raises((GitHubUnavailable, GitHubRefused)) as caught:
            attempt()
        texts.append("".join(traceback.format_exception(caught.value)) + repr(caught.value))

    assert len(texts) == 6
    for text in texts:
        assert TOKEN not in text
        assert app_jwt not in text
        assert key_body not in text
    assert TOKEN not in repr(github) and app_jwt not in repr(github)


# -- an installation that is gone (the app uninstalled and installed again) -------------------------------


def test_an_installation_github_no_longer_knows_is_looked_up_anew_and_the_call_made_once_more(mock, github):
    mock.get(f"{API}/repos/{REPO}/installation", json={"id": INSTALLATION})
    token_answer(mock)
    dispatches = mock.post(f"{API}/repos/{REPO}/dispatches", status=204)
    github.dispatch(REPO, "pager-draft", {})  # the installation is cached now

    github._tokens.clear()  # its token expired meanwhile
    mock.replace(responses.POST, f"{API}/app/installations/{INSTALLATION}/access_tokens", status=404,
                 json={"message": "Not Found"})
    mock.replace(responses.GET, f"{API}/repos/{REPO}/installation", json={"id": INSTALLATION + 1})
    mock.post(f"{API}/app/installations/{INSTALLATION + 1}/access_tokens", status=201,
              json={"token": TOKEN, "expires_at": iso(NOW + 3600)})
    github.dispatch(REPO, "pager-draft", {})

    lookups = [c for c in mock.calls if c.request.url.endswith(f"/repos/{REPO}/installation")]
    assert dispatches.call_count == 2 and len(lookups) == 2
    assert github.installation_for(REPO) == INSTALLATION + 1


def test_an_installation_given_by_a_record_that_is_gone_is_looked_up_for_the_repository(mock, github):
    mock.post(f"{API}/app/installations/{INSTALLATION}/access_tokens", status=404, json={"message": "Not Found"})
    mock.get(f"{API}/repos/{REPO}/installation", json={"id": INSTALLATION + 1})
    mock.post(f"{API}/app/installations/{INSTALLATION + 1}/access_tokens", status=201,
              json={"token": TOKEN, "expires_at": iso(NOW + 3600)})
    mock.get(f"{API}/repos/{REPO}/pulls/7", json={"number": 7})

    assert github.get_pull(REPO, 7, installation_id=INSTALLATION) == {"number": 7}


def test_an_app_no_longer_installed_on_the_repository_is_a_refusal(mock, github):
    mock.post(f"{API}/app/installations/{INSTALLATION}/access_tokens", status=404, json={"message": "Not Found"})
    mock.get(f"{API}/repos/{REPO}/installation", status=404, json={"message": "Not Found"})

    with pytest.raises(GitHubRefused) as refused:
        github.dispatch(REPO, "pager-draft", {}, installation_id=INSTALLATION)
    assert refused.value.status == 404
