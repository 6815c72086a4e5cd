"""The Makefile as a person runs it: `make help` made from the targets' own descriptions, and the targets that act
on the deployed stack (logs, outputs, remove) handed its name and region the one way every pager command finds them
(`pager where`). `make -n` prints the command lines a target would run, in a copy of the Makefile beside a
samconfig.local.toml as `sam deploy --guided` writes it, with a stand-in for the SAM CLI that records any run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pager.admin.deployment import SamConfig

ROOT = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make") or "make"  # `make test` runs the suite: there is one

# samconfig.local.toml as SAM CLI 1.170's guided deploy saves it (samcli.commands.deploy.guided_config): the region
# in [default.deploy.parameters] and again in [default.global.parameters]
GUIDED = """version = 0.1

[default.deploy.parameters]
stack_name = "pager-prod"
resolve_s3 = true
s3_prefix = "pager-prod"
region = "eu-central-1"
confirm_changeset = true
capabilities = "CAPABILITY_IAM"
parameter_overrides = "GitHubAppId=\\"123\\" GitHubAppSlug=\\"pager-prod\\""
image_repositories = []

[default.global.parameters]
region = "eu-central-1"
"""


def phony_targets() -> list[str]:
    text = (ROOT / "Makefile").read_text()
    return [name for line in re.findall(r"^\.PHONY:(.*)$", text, re.MULTILINE) for name in line.split()]


def descriptions() -> dict[str, str]:
    text = (ROOT / "Makefile").read_text()
    return dict(re.findall(r"^([a-z][a-z-]*):.*?## (.+)$", text, re.MULTILINE))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A copy of the Makefile with its venv made already, a SAM CLI stand-in, and a home without AWS settings."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / ".installed").write_text("")
    os.utime(tmp_path / "pyproject.toml", (1, 1))  # older than .installed: nothing to install again
    sam = tmp_path / "sam"
    sam.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'sam-ran'}\n")
    sam.chmod(0o755)
    (tmp_path / "home").mkdir()
    return tmp_path


def make(folder: Path, *args: str, **environ: str) -> subprocess.CompletedProcess[str]:
    """make in `folder`, pager run from this interpreter, in an environment with no AWS setting but those given."""
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(folder / "home"), "LANG": "C.UTF-8", **environ}
    if "PYTHONPATH" in os.environ:  # pager imported from where this test imports it
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run([str(MAKE), "--no-print-directory", *args, f"PAGER={sys.executable} -m pager.cli",
                           f"SAM={folder / 'sam'}", "PYTHON313=none"],
                          cwd=folder, env=env, capture_output=True, text=True, timeout=60)


def command(output: str, words: str) -> list[str]:
    """The printed command line that contains `words`, split into its arguments."""
    lines = [line for line in output.replace("\\\n", " ").splitlines() if words in line]
    assert len(lines) == 1, (words, output)
    return lines[0].split()


def after(argv: list[str], flag: str) -> str:
    return argv[argv.index(flag) + 1]


def test_every_phony_target_has_a_description_and_make_help_lists_them_all():
    described = descriptions()
    missing = [name for name in phony_targets() if name not in described]
    assert not missing, f"give these targets a '## ' description on their line: {missing}"
    listed = subprocess.run([str(MAKE), "--no-print-directory", "help"], cwd=ROOT, capture_output=True, text=True,
                            check=True).stdout
    for name in phony_targets():
        assert re.search(rf"^  {re.escape(name)} +{re.escape(described[name])}$", listed, re.MULTILINE), (name, listed)


def test_make_alone_still_runs_the_tests():
    printed = subprocess.run([str(MAKE), "-n"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert re.search(r"^\.venv/bin/python -m pytest", printed, re.MULTILINE), printed


def test_the_stack_targets_pass_the_saved_stack_and_region_to_sam_the_aws_cli_and_pager(folder):
    (folder / "samconfig.local.toml").write_text(GUIDED)
    environ = {"AWS_REGION": "us-west-2", "AWS_DEFAULT_REGION": "us-west-2"}  # the saved region wins

    logs = make(folder, "-n", "logs", **environ)
    argv = command(logs.stdout, " logs ")
    assert after(argv, "--stack-name") == "pager-prod" and after(argv, "--region") == "eu-central-1", logs.stdout
    assert "--tail" in argv and "--name" not in argv  # both functions: sam logs reads every resource of the stack
    argv = command(make(folder, "-n", "logs", "FUNCTION=SweepFunction", **environ).stdout, " logs ")
    assert after(argv, "--name") == "SweepFunction" and after(argv, "--region") == "eu-central-1"

    argv = command(make(folder, "-n", "outputs", **environ).stdout, "describe-stacks")
    assert argv[:3] == ["aws", "cloudformation", "describe-stacks"]
    assert after(argv, "--stack-name") == "pager-prod" and after(argv, "--region") == "eu-central-1"

    argv = command(make(folder, "-n", "remove", "REMOVE_ARGS=--yes", **environ).stdout, " remove ")
    assert after(argv, "--stack") == "pager-prod" and after(argv, "--region") == "eu-central-1" and argv[-1] == "--yes"
    assert not (folder / "sam-ran").exists()


def test_a_region_sam_kept_only_in_the_global_table_is_read_there(folder):
    # a second guided run keeps a value only in [default.global.parameters] when it is there already
    (folder / "samconfig.local.toml").write_text(GUIDED.replace('region = "eu-central-1"\nconfirm', "confirm"))
    assert SamConfig(folder / "samconfig.local.toml").region() == "eu-central-1"
    argv = command(make(folder, "-n", "logs", AWS_REGION="us-west-2").stdout, " logs ")
    assert after(argv, "--region") == "eu-central-1"


@pytest.mark.parametrize("environ, region", [
    ({"AWS_REGION": "ap-south-1", "AWS_DEFAULT_REGION": "us-east-2"}, "ap-south-1"),
    ({"AWS_DEFAULT_REGION": "us-east-2"}, "us-east-2"),
    ({}, "eu-north-1"),  # the AWS profile's, from the config file
])
def test_without_a_saved_region_the_environment_then_the_aws_profile_names_it(folder, environ, region):
    (folder / "home" / ".aws").mkdir()
    (folder / "home" / ".aws" / "config").write_text("[default]\nregion = eu-north-1\n")
    argv = command(make(folder, "-n", "logs", **environ).stdout, " logs ")
    assert after(argv, "--stack-name") == "pager" and after(argv, "--region") == region


@pytest.mark.parametrize("target", ["logs", "outputs", "remove"])
def test_with_no_region_anywhere_a_target_stops_with_why_and_runs_nothing(folder, target):
    for dry in (["-n"], []):
        result = make(folder, *dry, target)
        assert result.returncode != 0, result.stdout
        assert "no AWS region for the stack pager" in result.stderr and "set AWS_REGION" in result.stderr
        assert "--stack-name" not in result.stdout and "--stack " not in result.stdout
    assert not (folder / "sam-ran").exists()
    # the way it says to give one works from make
    region = re.search(r"`AWS_REGION=(\S+) make remove`", result.stderr)
    assert region, result.stderr
    argv = command(make(folder, "-n", "remove", AWS_REGION=region[1]).stdout, " remove ")
    assert after(argv, "--region") == region[1]
