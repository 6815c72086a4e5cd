"""The upgrade from a version whose guided deploy saved the answers into the tracked samconfig.toml, run for real
with git: a bare "origin" whose samconfig.toml held placeholders, a clone where `sam deploy --guided` wrote the
answers into it (left uncommitted, or committed), then origin moving on to the layout of today (the answers in the
ignored samconfig.local.toml). `git pull` stops; the commands of docs/snippets/ must leave the clone pulled and clean,
with the answers where `make deploy` reads them, so that it deploys without asking again.

The snippets are the one copy of those commands: a page that shows one marks it `<!-- snippet: docs/snippets/NAME -->`
and shows it, verbatim, in the fenced block that follows (checked below).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from pager.admin.deployment import SamConfig

ROOT = Path(__file__).resolve().parents[1]
SNIPPETS = ROOT / "docs" / "snippets"
MAKE = shutil.which("make") or "make"

# samconfig.toml as the first versions kept it (its placeholders, its global stack_name)
OLD = '''# SAM CLI settings (README, "Deploy"). `sam deploy --guided` asks for every parameter below and
# offers to save the answers here.
version = 0.1

[default.global.parameters]
stack_name = "pager"

[default.build.parameters]
cached = true
parallel = true

[default.deploy.parameters]
resolve_s3 = true
capabilities = "CAPABILITY_IAM"
confirm_changeset = true
fail_on_empty_changeset = false
parameter_overrides = "GitHubAppId=\\"<app-id>\\" ControlRepository=\\"<owner>/<repository>\\" TelegramChatId=\\"<chat-id>\\""
'''
ANSWERS = {"GitHubAppId": "123456", "ControlRepository": "acme/pager-control", "TelegramChatId": "-1001234"}
# What SAM CLI 1.170's guided deploy made of it (samcli.commands.deploy.guided_config, samcli.lib.config.samconfig):
# stack_name left only in the global table, where it was already; region saved in both tables; the new keys
# appended to [default.deploy.parameters]
GUIDED = OLD.replace('stack_name = "pager"\n', 'stack_name = "pager"\nregion = "eu-central-1"\n').replace(
    'parameter_overrides = "GitHubAppId=\\"<app-id>\\" ControlRepository=\\"<owner>/<repository>\\" TelegramChatId=\\"<chat-id>\\""\n',
    'parameter_overrides = "GitHubAppId=\\"123456\\" ControlRepository=\\"acme/pager-control\\" TelegramChatId=\\"-1001234\\""\n'
    's3_prefix = "pager"\nregion = "eu-central-1"\nimage_repositories = []\n')
OLD_IGNORED = ".venv/\n.aws-sam/\n"


def snippet(name: str) -> str:
    return (SNIPPETS / name).read_text()


# git with no configuration of this machine's, as a maintainer who has committed before
ENV = {"PATH": os.environ.get("PATH", ""), "LANG": "C.UTF-8", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "Maintainer", "GIT_AUTHOR_EMAIL": "m@example.com",
       "GIT_COMMITTER_NAME": "Maintainer", "GIT_COMMITTER_EMAIL": "m@example.com"}


def git(folder: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=folder, env=ENV, capture_output=True, text=True, check=check)


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """origin at the old layout, a clone where the guided deploy wrote the answers, and origin moved on since."""
    work, origin, user = tmp_path / "work", tmp_path / "origin.git", tmp_path / "user"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    git(tmp_path, "clone", "-q", str(origin), str(work))
    (work / "samconfig.toml").write_text(OLD)
    (work / ".gitignore").write_text(OLD_IGNORED)
    git(work, "add", "samconfig.toml", ".gitignore")
    git(work, "commit", "-q", "-m", "the old layout")
    git(work, "push", "-q", "origin", "HEAD:main")
    git(tmp_path, "clone", "-q", str(origin), str(user))
    (user / "samconfig.toml").write_text(GUIDED)  # `sam deploy --guided`, saving into samconfig.toml
    # origin moves on: today's samconfig.toml, .gitignore and Makefile
    shutil.copy(ROOT / "samconfig.toml", work / "samconfig.toml")
    shutil.copy(ROOT / "Makefile", work / "Makefile")
    (work / ".gitignore").write_text(OLD_IGNORED + "samconfig.local.toml\n")
    git(work, "add", "samconfig.toml", ".gitignore", "Makefile")
    git(work, "commit", "-q", "-m", "the answers in samconfig.local.toml")
    git(work, "push", "-q", "origin", "HEAD:main")
    return user


def run_snippet(folder: Path, name: str) -> list[str]:
    """The snippet run as bash runs it line by line (stopping at a failure), `make` recorded instead of run."""
    bin_dir = folder.parent / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "make"
    fake.write_text(f"#!/bin/sh\necho \"$@\" >> {folder.parent / 'make-ran'}\n")
    fake.chmod(0o755)
    env = {**ENV, "PATH": f"{bin_dir}{os.pathsep}{ENV['PATH']}"}
    result = subprocess.run(["bash", "-e", "-c", snippet(name)], cwd=folder, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    ran = folder.parent / "make-ran"
    return ran.read_text().splitlines() if ran.exists() else []


def assert_upgraded(user: Path) -> None:
    """Pulled and clean, samconfig.toml as origin has it, the answers in samconfig.local.toml, `make deploy` not guided."""
    assert git(user, "status", "--porcelain").stdout == ""
    assert git(user, "merge-base", "--is-ancestor", "origin/main", "HEAD", check=False).returncode == 0
    assert (user / "samconfig.toml").read_text() == (ROOT / "samconfig.toml").read_text()
    saved = SamConfig(user / "samconfig.local.toml")
    assert saved.parameters() == ANSWERS and saved.stack_name() == "pager" and saved.region() == "eu-central-1"
    sam = user.parent / "sam"
    sam.write_text("#!/bin/sh\nexit 0\n")
    sam.chmod(0o755)
    printed = subprocess.run([MAKE, "-n", "deploy", f"SAM={sam}", "PYTHON313=none"], cwd=user, env=ENV,
                             capture_output=True, text=True, check=True).stdout
    assert "deploy --config-file samconfig.local.toml" in printed and "--guided" not in printed, printed


def test_answers_left_uncommitted_move_to_samconfig_local_and_the_pull_goes_through(clone):
    pulled = git(clone, "pull", check=False)
    assert pulled.returncode != 0 and "would be overwritten by merge" in pulled.stderr and "samconfig.toml" in pulled.stderr
    assert run_snippet(clone, "upgrade-samconfig-uncommitted.sh") == []  # the deploy comes after the other steps
    assert_upgraded(clone)


@pytest.mark.parametrize("pull", ["default", "merge", "rebase"])
def test_answers_committed_move_to_samconfig_local_and_the_pull_goes_through(clone, pull):
    git(clone, "commit", "-q", "-m", "my answers", "--", "samconfig.toml")
    if pull != "default":  # git's own default refuses to reconcile the two branches at all
        git(clone, "config", "pull.rebase", "true" if pull == "rebase" else "false")
    stopped = git(clone, "pull", check=False)
    assert stopped.returncode != 0, stopped.stdout  # refused, or stopped in a conflict on samconfig.toml
    assert run_snippet(clone, "upgrade-samconfig-committed.sh") == []  # the deploy comes after the other steps
    assert_upgraded(clone)
    assert "my answers" in git(clone, "log", "--format=%s").stdout  # the local history is kept, not rewritten


def test_a_page_that_shows_a_snippet_shows_it_verbatim():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        text = page.read_text()
        for name, block in re.findall(r"<!-- snippet: docs/snippets/([\w.-]+) -->\s*```\w*\n(.*?)```", text, re.DOTALL):
            assert block == snippet(name), f"{page.name} shows docs/snippets/{name} otherwise: copy it verbatim"
    for path in SNIPPETS.iterdir():
        assert path.read_text().endswith("\n") and "\t" not in path.read_text(), path.name
