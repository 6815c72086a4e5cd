"""The offline demo: pager's real handlers over HTTP on loopback, with GitHub, Telegram and DynamoDB local.

    python -m pager_local.demo        (or: make demo)

A maintainer's day and night on a virtual clock, as their phone lives it: a flaky CI run that a rerun clears
before anyone is woken, a failure still red past its grace that buzzes once and a fix started from the chat,
an outsider's discussion during a Telegram outage, a release ready to merge shown while the phone rests, a
repository muted from the chat, a second repository turning red during the phone's rest that rings at once
(what the rest kept follows it silently) and is acknowledged with 👀, an event that fails three times and
lands in pager's own alarm, /status, and a night of quiet hours whose one kept contact comes as itself. It prints each step, the chat as the maintainer
sees it (🔔 sent with a sound, 🔕 without; ↳ a reply) and each sweep's summary.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
import time
from typing import Any

import requests

from pager.permissions import needed_permissions
from pager_world import payloads as p
from pager_world.clock import Clock
from pager_world.events import LambdaContext, scheduled_event, sign
from pager_world.github import FakeGitHub
from pager_world.telegram import FakeTelegram

from .local import FakeServer, PagerServer, embedded_dynamodb, load_handler

START = 1_796_112_000.0  # 2026-12-01T08:00:00Z
CONTROL = "maintainer/pager"
CHAT_ID = "-1001000000001"
MAINTAINER_ID = 4242
WEBHOOK_SECRET = "demo-webhook-secret"
TELEGRAM_SECRET = "demo-telegram-secret"


def private_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


class Demo:
    def __init__(self, out=sys.stdout, environ: dict[str, str] | None = None) -> None:
        self.out = out
        environ = os.environ if environ is None else environ
        # Bold headings only on a terminal, and never with NO_COLOR set (no-color.org): a file or a pipe
        # gets plain text.
        self.bold = bool(getattr(out, "isatty", lambda: False)()) and not environ.get("NO_COLOR")
        self.clock = Clock(START)
        self.telegram = FakeTelegram(clock=self.clock)
        self.telegram.add_chat(CHAT_ID, "supergroup", title="acme alarms")  # the maintainer's chat, the bot in it
        self.github = FakeGitHub(clock=self.clock, endpoint=self._post_webhook)
        self.github.app_id = "1"
        self.github.installations.update({"acme/app": 1, "acme/lib": 1, "acme/web": 1, CONTROL: 1})  # where it is installed
        self.github.repository_ids.update({"acme/app": 101, "acme/lib": 102, "acme/web": 103})
        self.github.installation_permissions[1] = needed_permissions()  # as the README has the maintainer accept
        self.pager = PagerServer()
        self.github_server = FakeServer(self.github)
        self.telegram_server = FakeServer(self.telegram)
        self.github.api_url = self.github_server.url
        self.sweep = load_handler("sweep")
        self.shown = 0
        self.http = requests.Session()

    # -- the wiring

    def env(self, dynamodb_endpoint: str) -> dict[str, str]:
        return {
            "PAGER_TABLE": "pager-demo",
            "PAGER_DYNAMODB_ENDPOINT": dynamodb_endpoint,
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "GITHUB_APP_ID": "1",
            "GITHUB_APP_SLUG": "pager-demo",
            "GITHUB_PRIVATE_KEY": private_key(),
            "GITHUB_WEBHOOK_SECRET": WEBHOOK_SECRET,
            "TELEGRAM_BOT_TOKEN": "1:demo-token",
            "TELEGRAM_WEBHOOK_SECRET": TELEGRAM_SECRET,
            "TELEGRAM_CHAT_ID": CHAT_ID,
            "TELEGRAM_ALLOWED_USERS": str(MAINTAINER_ID),
            "CONTROL_REPOSITORY": CONTROL,
            "GITHUB_API_URL": self.github_server.url,
            "TELEGRAM_API_URL": self.telegram_server.url,
            "QUIET_HOURS": "22:00-07:00",  # on the UTC clock (TIMEZONE's default)
        }

    def _post_webhook(self, guid: str, event: str, payload: dict[str, Any], redelivery: bool) -> tuple[int, str]:
        """GitHub delivering a webhook to the pager's endpoint."""
        body = json.dumps(payload).encode()
        signature = sign(body, WEBHOOK_SECRET)
        try:
            answer = self.http.post(f"{self.pager.url}/github", data=body, timeout=10, headers={
                "content-type": "application/json", "x-github-event": event, "x-github-delivery": guid,
                "x-hub-signature-256": signature, "user-agent": "GitHub-Hookshot/demo"})
        except requests.Timeout:
            raise TimeoutError(guid) from None
        return answer.status_code, answer.text

    # -- the story's verbs

    def until(self, hh_mm: str) -> None:
        """Move the clock on to the next time of day `hh_mm` (UTC)."""
        hours, minutes = (int(n) for n in hh_mm.split(":"))
        now = self.clock.now
        target = now - now % 86400 + hours * 3600 + minutes * 60
        self.clock.advance((target if target > now else target + 86400) - now)

    def say(self, text: str) -> None:
        line = f"{time.strftime('%H:%M', time.gmtime(self.clock.now))}  {text}"
        print("\n" + (f"\033[1m{line}\033[0m" if self.bold else line), file=self.out)

    def deliver(self, event: str, payload: dict[str, Any], note: str = "") -> dict[str, Any]:
        item = self.github.deliver(event, payload)
        action = payload.get("action")
        print(f"       GitHub → pager  {event}{'.' + action if action else ''}  → {item['status_code']}"
              f"{'  ' + note if note else ''}", file=self.out)
        return item

    def run_sweep(self) -> dict[str, Any]:
        summary = self.sweep(scheduled_event(f"sweep-{int(self.clock.now)}", self.clock.now), LambdaContext("SweepFunction", 60)) or {}
        redelivered = self.github.deliver_pending()
        keys = ("calls_used", "redeliveries", "entries_opened", "entries_closed", "reach_gaps")
        shown = {k: summary.get(k) for k in keys if k in summary}
        print(f"       sweep: {json.dumps(shown)}", file=self.out)
        for item in redelivered:
            print(f"       GitHub → pager  {item['event']}.{item['action']} (redelivered)  → {item['status_code']}",
                  file=self.out)
        return summary

    def minute_check(self) -> None:
        """The every-minute schedule: what comes due without an event (an alarm past its grace, a summary)."""
        from pager.waiting import CHECK_EVENT  # (pager is imported once main() has quieted its logs)

        summary = self.sweep(dict(CHECK_EVENT), LambdaContext("SweepFunction", 60)) or {}
        done = [*summary.get("alarms_due", ()), *summary.get("summaries", ())]
        print(f"       the minute check: {'; '.join(done) or 'nothing due'}", file=self.out)

    def press(self, label: str) -> None:
        message = next(m for m in reversed(self.telegram.chat()) if any(b["text"] == label for row in m.buttons for b in row))
        query_id = f"cb-{int(self.clock.now)}"
        self.telegram.register_query(query_id)  # Telegram knows the press it sends
        update = {"update_id": self.telegram.next_update_id(), "callback_query": {
            "id": query_id, "from": {"id": MAINTAINER_ID, "is_bot": False, "first_name": "Ana"},
            "message": {"message_id": message.message_id, "chat": {"id": int(message.chat_id)}, "text": message.text},
            "chat_instance": "1", "data": self.telegram.button_data(message.message_id, label)}}
        answer = self._telegram(update)
        said = self.telegram.answers[-1][1] if self.telegram.answers else ""
        print(f"       Ana presses [{label}] → {answer}; Telegram shows: {said!r}", file=self.out)

    def command(self, text: str) -> None:
        """The maintainer types a command in the chat."""
        update = self.telegram.command_update(text, chat_id=CHAT_ID,
                                              user={"id": MAINTAINER_ID, "is_bot": False, "first_name": "Ana"})
        print(f"       Ana writes {text} → {self._telegram(update)}", file=self.out)

    def _telegram(self, update: dict[str, Any]) -> int:
        answer = self.http.post(f"{self.pager.url}/telegram", json=update, timeout=10,
                                headers={"x-telegram-bot-api-secret-token": TELEGRAM_SECRET})
        return answer.status_code

    def show_chat(self) -> None:
        print("       ┌─ the chat ─────────────────────────────────────────", file=self.out)
        for line in self.telegram.render().splitlines():
            print("       │ " + line, file=self.out)
        print("       └────────────────────────────────────────────────────", file=self.out)

    # -- the story

    def story(self) -> None:
        app = p.repository("acme/app", 101)
        lib = p.repository("acme/lib", 102)
        web = p.repository("acme/web", 103)
        c = self.clock

        self.say("1. CI fails on main of acme/lib: sent without a sound, 🛠 already there (it may be a flake)")
        self.deliver("workflow_run", p.workflow_run(lib, run_id=501, workflow_id=7, name="CI", conclusion="failure",
                                                    at=c(), run_number=88))
        c.advance(6 * 60)
        self.say("Its rerun passes within the grace: green again, and the phone never rang")
        self.deliver("workflow_run", p.workflow_run(lib, run_id=501, workflow_id=7, name="CI", conclusion="success",
                                                    at=c(), run_number=88, run_attempt=2))
        c.advance(3 * 60)
        stale = p.workflow_run(lib, run_id=501, workflow_id=7, name="CI", conclusion="failure", at=c() - 9 * 60,
                               run_number=88)
        self.deliver("workflow_run", stale, "(the first attempt's failure again, late: older than what the alarm applied, "
                                            "it reopens nothing)")
        self.show_chat()

        c.advance(2 * 60)
        self.say("2. Deploy fails on main of acme/lib, and stays red")
        self.deliver("workflow_run", p.workflow_run(lib, run_id=502, workflow_id=8, name="Deploy", conclusion="failure",
                                                    at=c(), run_number=41))
        c.advance(15 * 60)
        self.say("15 minutes later, still red: the minute check posts the alarm anew, with a sound, once; "
                 "the phone then rests two hours (BUZZ_GAP_MINUTES): what can wait, waits")
        self.minute_check()
        self.show_chat()
        c.advance(60)
        self.press("🛠 Start fix")
        self.show_chat()

        c.advance(2 * 60)
        self.say("3. Telegram is down while an outsider opens a discussion")
        self.telegram.fail(r"^sendMessage$", 502, count=1000)
        self.deliver("discussion", p.discussion("created", lib, 12, "How do I configure <retries>?",
                                                "I tried everything & it still fails.", "alice", at=c()),
                     "(Telegram answered 502: the pager answers 500, GitHub will not retry by itself)")
        c.advance(14 * 60)
        self.telegram.heal()
        self.say("Telegram is back; the sweep asks GitHub to deliver again what failed: alice's discussion is "
                 "shown, without a sound while the phone rests")
        self.run_sweep()
        self.show_chat()

        c.advance(4 * 60)
        self.say("4. release-please opens a release pull request on acme/app: silent, nothing to do yet")
        head = "c" * 40
        self.github.pulls[("acme/app", 40)] = {"number": 40, "state": "open", "merged": False, "mergeable": True,
                                               "mergeable_state": "clean", "head": {"sha": head, "ref": "release-please--branches--main"},
                                               "base": {"ref": "main"}, "html_url": "https://github.com/acme/app/pull/40"}
        self.deliver("pull_request", p.pull_request("opened", app, 40, title="chore(main): release 2.4.0",
                                                    head_ref="release-please--branches--main", head_sha=head,
                                                    author="release-please[bot]", bot=True, at=c()))
        c.advance(6 * 60)
        self.say("Its checks pass and GitHub would merge it: 🔀 Merge appears at once, without a sound while the phone "
                 "rests (a release can wait); Ana sees it and merges")
        self.deliver("check_suite", p.check_suite(app, suite_id=901, head_sha=head, conclusion="success", at=c(),
                                                  branch="release-please--branches--main",
                                                  pulls=[{"number": 40, "head": {"sha": head, "ref": "release-please--branches--main"},
                                                          "base": {"ref": "main"}}]))
        self.show_chat()
        c.advance(2 * 60)
        self.press("🔀 Merge")
        merged = self.github.pulls[("acme/app", 40)]
        self.deliver("pull_request", p.pull_request("closed", app, 40, title="chore(main): release 2.4.0",
                                                    head_ref="release-please--branches--main", head_sha=head,
                                                    author="release-please[bot]", bot=True, at=c(), merged=True,
                                                    merge_commit_sha=merged.get("merge_commit_sha")))
        c.advance(1 * 60)
        self.deliver("release", p.release(app, "v2.4.0", at=c()))

        c.advance(3 * 60)
        self.say("5. Ana mutes acme/app for two hours; an outsider's comment there arrives without a sound")
        self.command("/mute acme/app 2h")
        self.deliver("issue_comment", p.issue_comment(app, 13, 77000, "Same here, any workaround?", "carol", at=c(),
                                                      title="Retries are not applied to webhooks"))
        self.show_chat()

        c.advance(4 * 60)
        self.say("6. An outsider comments while GitHub refuses the pager's dispatches for an hour (503): shown "
                 "without a sound, kept for the phone's next call")
        self.github.fail(r"/dispatches$", 503, count=1000)
        self.deliver("issue_comment", p.issue_comment(lib, 3, 77001, "Any news on this?", "bob", at=c()))

        c.advance(2 * 60)
        self.say("7. Build fails on main of acme/web, while the phone rests")
        self.deliver("workflow_run", p.workflow_run(web, run_id=601, workflow_id=9, name="Build", conclusion="failure",
                                                    at=c(), run_number=17))
        c.advance(15 * 60)
        self.say("Still red when its grace ends: a broken main does not wait for the rest, it rings now")
        self.minute_check()
        c.advance(60)
        self.say("What the rest kept comes with that call, in one message without a sound; the phone rests anew")
        self.minute_check()
        self.show_chat()
        c.advance(60)
        self.say("Ana looks into it: 👀 keeps it in the chat and in /status, and it rings again only if something new "
                 "fails there")
        self.press("👀 Seen")
        for _ in range(3):
            c.advance(15 * 60)
            self.say("sweep")
            self.run_sweep()
        self.show_chat()
        self.github.heal()
        c.advance(10 * 60)
        self.say("GitHub is healthy again; Ana presses ↻ on pager's own alarm")
        again = next(b["text"] for m in self.telegram.chat() for row in m.buttons for b in row if b["text"].startswith("↻"))
        self.press(again)
        for item in self.github.deliver_pending():
            print(f"       GitHub → pager  {item['event']}.{item['action']} (delivered again)  → {item['status_code']}",
                  file=self.out)
        c.advance(5 * 60)
        self.say("The next sweep sees the passing attempt: pager is well again")
        self.run_sweep()
        c.advance(60)
        self.command("/status")
        self.show_chat()

        self.until("22:45")
        self.say("8. The night: quiet hours from 22:00 to 07:00. An outsider opens a discussion: no sound")
        self.deliver("discussion", p.discussion("created", lib, 14, "Crash on start with Python 3.13",
                                                "Traceback attached.", "dave", at=c()))
        self.until("07:01")
        self.say("Quiet hours are over: the one thing they kept comes as itself, posted anew with a sound")
        self.minute_check()
        self.show_chat()
        print(f"\n       GitHub saw {len(self.github.dispatches)} dispatches: "
              + ", ".join(f"{d['event_type']}→{d['repository']}" for d in self.github.dispatches), file=self.out)
        print(f"       and {len(self.github.merges)} merge: "
              + ", ".join(f"{m['repository']}#{m['number']} at {m['sha'][:7]}" for m in self.github.merges), file=self.out)
        print(f"       The phone buzzed {len(self.telegram.buzzes)} times in all:", file=self.out)
        for _, at, first in self.telegram.buzzes:
            plain = re.sub(r"<[^>]+>", "", first).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
            print(f"         {time.strftime('%H:%M', time.gmtime(at))}  {plain}", file=self.out)

    def run(self) -> None:
        logging.getLogger().setLevel(logging.WARNING)
        for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
            os.environ.setdefault(key, "local")
        os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "PagerDemo")
        started = time.monotonic()
        with embedded_dynamodb("pager-demo") as endpoint:
            env = self.env(endpoint)
            from pager import bootstrap

            self.github_server.start()
            self.telegram_server.start()
            self.pager.start()
            bootstrap.use(bootstrap.build_services(env, clock=self.clock, sleep=lambda s: None))
            try:
                self.story()
            finally:
                self.pager.stop()
                self.github_server.stop()
                self.telegram_server.stop()
                bootstrap.use(None)
        print(f"\n       (the whole story took {time.monotonic() - started:.1f} s of real time)", file=self.out)


def main() -> None:
    # The handlers log one JSON line per delivery; the demo shows the story instead.
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "CRITICAL")
    os.environ.setdefault("LOG_LEVEL", "CRITICAL")
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")
    Demo().run()


if __name__ == "__main__":
    main()
