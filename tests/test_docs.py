"""The README leads and the reference in docs/ is reachable from it: every relative link in the README and
in docs/ names a file that exists and a heading it has (as GitHub makes a heading's anchor), the README
stays short enough to read through, and every page of docs/ is linked from the README and from the
reference's table of contents."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lowercase, punctuation dropped but hyphens and
    underscores, spaces as hyphens; a repeated heading gets -1, -2…"""
    seen: dict[str, int] = {}
    found = set()
    for heading in re.findall(r"^#{1,6} (.+)$", FENCE.sub("", page.read_text(encoding="utf-8")), re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text(encoding="utf-8")))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_names_a_file_and_a_heading_it_has(page):
    broken = []
    for target in links(page):
        if re.match(r"^[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            broken.append(f"{target}: no such heading in {file.relative_to(ROOT)}")
    assert not broken, broken


def test_the_readme_is_read_through_in_one_sitting():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 450


def test_the_readme_leads_with_what_pager_is_then_the_commands_then_the_deploy_setup_first():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    order = [readme.index(mark) for mark in ("## Two commands", "## Deploy", "make setup", "## Day to day")]
    assert order == sorted(order)
    assert readme.index("make setup") < readme.index("make deploy    # the app's id")


def test_every_page_of_the_reference_is_linked_from_the_readme_and_the_table_of_contents():
    readme, contents = (ROOT / "README.md").read_text(encoding="utf-8"), (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        if page.name != "README.md":
            assert f"(docs/{page.name})" in readme, page.name
            assert f"({page.name})" in contents, page.name


def test_every_snippet_is_shown_on_a_page_that_marks_it():
    shown = "".join(page.read_text(encoding="utf-8") for page in PAGES)
    for snippet in sorted((ROOT / "docs" / "snippets").iterdir()):
        assert f"<!-- snippet: docs/snippets/{snippet.name} -->" in shown, snippet.name


def test_every_make_command_the_pages_print_is_a_target_of_the_makefile():
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    targets = set(re.findall(r"^([a-z][\w-]*):", makefile, re.MULTILINE))
    printed = {name for page in PAGES for name in re.findall(r"`make ([a-z][\w-]*)", page.read_text(encoding="utf-8"))}
    printed |= {name for page in PAGES for block in FENCE.findall(page.read_text(encoding="utf-8"))
                for name in re.findall(r"^make ([a-z][\w-]*)", block, re.MULTILINE)}
    assert {"setup", "deploy", "doctor", "logs", "remove"} <= printed
    assert printed <= targets, sorted(printed - targets)


def test_the_pages_way_to_the_stack_and_region_gives_them_to_the_aws_commands(tmp_path):
    """The two lines the pages print before their `aws` commands, run as printed (with this environment's
    `pager` for `.venv/bin/pager`) beside a samconfig.local.toml as `make deploy` saves it."""
    import os
    import shutil
    import subprocess
    import sys

    deploy = (ROOT / "docs" / "deploy.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(read -r STACK REGION < <\(\.venv/bin/pager where\)\nexport [^\n]*)\n```", deploy)
    assert block is not None
    operations = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    assert all(line in operations for line in block.group(1).splitlines())  # the same two lines, commented there
    (tmp_path / "samconfig.local.toml").write_text(
        'version = 0.1\n[default.deploy.parameters]\nstack_name = "fleet-pager"\nregion = "eu-west-1"\n')
    pager = shutil.which("pager", path=os.path.dirname(sys.executable)) or shutil.which("pager")
    assert pager is not None
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "pager").symlink_to(pager)
    env = {k: v for k, v in os.environ.items() if k not in ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE")}
    env["AWS_CONFIG_FILE"] = str(tmp_path / "no-config")
    script = block.group(1) + '\necho "$STACK|$AWS_REGION|$AWS_DEFAULT_REGION"'
    out = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "fleet-pager|eu-west-1|eu-west-1"


# A page named in the code, the tests, the template or the project's files, with the heading it points at:
# `docs/deploy.md#the-secrets-by-hand`, `docs/sweep.md, "The decision per event"`, `(README, Deploy)`.
REFERENCE = re.compile(r'(README(?:\.md)?|docs/[\w-]+\.md)(?:#([\w-]+)|,? \(?"([^"\n]+)"|, ([A-Z][^")\n]*)\))')
REFERRING = [*ROOT.glob("layers/pager/pager/**/*.py"), *ROOT.glob("sim/**/*.py"), *ROOT.glob("functions/**/*.py"),
             *ROOT.glob("tests/*.py"), *ROOT.glob(".github/**/*.*"), ROOT / "template.yaml", ROOT / "Makefile",
             ROOT / "pyproject.toml"]


def test_every_page_and_heading_the_code_names_is_there():
    """The README was split into docs/: a comment or a message that sends the reader to a section names the page
    that holds it now, and a heading that page has (its first words are enough: "Limits" for "Limits, and the
    figures behind them")."""
    stale = []
    for file in REFERRING:
        for found in REFERENCE.finditer(file.read_text(encoding="utf-8")):
            page, anchor, quoted, bare = found.groups()
            target = ROOT / ("README.md" if page.startswith("README") else page)
            slug = anchor or re.sub(r"[^\w\- ]", "", (quoted or bare).strip().lower()).replace(" ", "-")
            if not target.exists() or not any(heading.startswith(slug) for heading in anchors(target)):
                stale.append(f"{file.relative_to(ROOT)}: {found.group(0)}")
    assert not stale, stale
