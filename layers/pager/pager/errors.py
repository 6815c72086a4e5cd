"""The one exception root of pager.

    PagerError
    ├── ConfigError              a required setting is missing or malformed (names it, never its value)
    ├── BadRequest               the caller sent something the pager refuses (answered with a 4xx)
    │   └── BadSignature         signature or secret token missing or wrong (401)
    ├── Transient                a later attempt can succeed: the webhook answers 500, the sweep brings it back
    │   ├── GitHubUnavailable    GitHub 5xx, rate limit, no answer
    │   ├── TelegramUnavailable  Telegram 5xx, 429 past the short wait, no answer
    │   ├── StoreUnavailable     DynamoDB throttled or unavailable
    │   ├── SecretsUnavailable   the secrets' store throttled or unavailable (not a missing secret)
    │   ├── DeadlineExceeded     the handler's own deadline passed before a step could start
    │   ├── Uncertain            an effect may have happened, but pager cannot tell or could not record
    │                            it (its answer never came, or the table refused the record)
    │   └── Partial              what a press asked for happened (`said`), a later step failed: a retry finishes it
    ├── Permanent                a refusal that no retry can fix (logged, not a 500)
    │   ├── GitHubRefused        GitHub answered another 4xx (status kept)
    │   │   └── WorkflowsRefused  a merge refused: it changes .github/workflows/, the app lacks Workflows
    │   └── TelegramRefused      Telegram answered another 4xx (description kept)
    │       ├── MessageNotEditable  the message cannot be edited (gone, not the bot's…): send it anew
    │       └── ChatMigrated        the group became a supergroup (`to_chat`): write there instead
    └── Conflict                 a conditional write lost its race: someone else wrote first

`Transient` versus `Permanent` is a type, never a string match; wrap with `raise ... from exc`.
Messages carry the step and the status, never a token, a secret or a signature.
"""

from __future__ import annotations


class PagerError(Exception):
    """Root of everything pager raises on purpose."""


class ConfigError(PagerError):
    """Settings missing or malformed: `problems` names each one (never a value)."""

    def __init__(self, message: str, *, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = list(problems) if problems is not None else [message]


class BadRequest(PagerError):
    """A request the pager refuses; `status` is the HTTP answer."""

    status = 400


class BadSignature(BadRequest):
    status = 401


class Transient(PagerError):
    """A failure that a later attempt can fix."""


class GitHubUnavailable(Transient):
    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None, sent: bool = False):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.sent = sent  # the request went out and its answer never came: it may have acted


class TelegramUnavailable(Transient):
    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None, sent: bool = False):
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.sent = sent  # the request went out and its answer never came: it may have acted


class SecretsUnavailable(Transient):
    """The secrets could not be read now: Parameter Store or Secrets Manager throttled or failing."""


class StoreUnavailable(Transient):
    pass


class DeadlineExceeded(Transient):
    pass


class Uncertain(Transient):
    """An effect may have happened although pager has no record of it: doing it again may repeat it.
    `performed`: what the settle it came from had done, as its outcome tells it (an effect that happened,
    whose recording then failed, among them)."""

    def __init__(self, message: str, *, performed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.performed = performed


class Partial(Transient):
    """What a press asked for happened (a merge GitHub made), and a step after it failed (the message's
    edit): the person is told `said`, the truth; a retry, or the thing's next event, finishes the rest."""

    def __init__(self, message: str, *, said: str) -> None:
        super().__init__(message)
        self.said = said


class Permanent(PagerError):
    """A refusal that no retry can fix."""


class GitHubRefused(Permanent):
    def __init__(self, message: str, *, status: int, reason: str = ""):
        super().__init__(message)
        self.status = status
        self.reason = reason


class WorkflowsRefused(GitHubRefused):
    """GitHub refused to merge a pull request that changes a file under .github/workflows/ (`file`, the one it
    named): the app lacks the Workflows permission. No retry helps; the permission, or a merge on GitHub, does."""

    def __init__(self, message: str, *, status: int, reason: str = "", file: str = ""):
        super().__init__(message, status=status, reason=reason)
        self.file = file


class TelegramRefused(Permanent):
    def __init__(self, message: str, *, status: int, description: str = ""):
        super().__init__(message)
        self.status = status
        self.description = description


class MessageNotEditable(TelegramRefused):
    """editMessageText refused with a 400 other than "not modified" or a migrated group: the message is
    gone, not the bot's, or its new text cannot be taken. Nothing edits it: send it anew."""


class Conflict(PagerError):
    """A conditional write lost its race. `keys`: the records (key, item) that changed, when the store says
    which (a write of several records together names those whose version had moved)."""

    def __init__(self, message: str, *, keys: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.keys = keys


class ChatMigrated(TelegramRefused):
    """The group was upgraded to a supergroup: a new chat id, which every later call must use."""

    def __init__(self, message: str, *, status: int, description: str = "", to_chat: str):
        super().__init__(message, status=status, description=description)
        self.to_chat = to_chat
