"""The project's own files, read as data: pyproject.toml's requirements and the Lambda layer's pins.

The tests run pager with pyproject.toml's ranges; Lambda runs it with layers/pager/requirements.txt's pins.
Dependabot bumps the two in separate pull requests (.github/dependabot.yml), so a pin can leave its range,
or a new requirement miss the layer, without anything else failing before a deploy.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from importlib.metadata import PackageNotFoundError
from importlib.metadata import requires as requires_of
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import NormalizedName, canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
PINS = ROOT / "layers" / "pager" / "requirements.txt"
PINS_NAME = "layers/pager/requirements.txt"

# What pager requires but the layer does not ship, and why (requirements.txt's opening comment says it too).
NOT_IN_THE_LAYER = {"boto3": "the python3.13 runtime brings its own",
                    "python-dotenv": "only the operator's commands read .env (pager.admin), which the layer leaves out"}

# Where the layer runs (layers/pager/Makefile: CPython 3.13 on x86_64 Linux): a requirement's marker is read
# for it, not for the Python running the tests.
LAMBDA = {
    "implementation_name": "cpython",
    "platform_python_implementation": "CPython",
    "os_name": "posix",
    "sys_platform": "linux",
    "platform_system": "Linux",
    "platform_machine": "x86_64",
    "python_version": "3.13",
    "python_full_version": "3.13.0",
}


def requirements() -> dict[NormalizedName, Requirement]:
    """pyproject.toml's [project.dependencies], by name: what the functions import (the `test` extra is the
    suite's, not the layer's)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    found = [Requirement(line) for line in project["dependencies"]]
    return {canonicalize_name(r.name): r for r in found}


def pin_lines() -> Iterator[tuple[int, str]]:
    for number, line in enumerate(PINS.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if line:
            yield number, line


def pins() -> dict[NormalizedName, Version]:
    """The layer's pins, by name: the version each `name==version` line names (a line of another form is
    the first test's failure)."""
    found = {}
    for _, line in pin_lines():
        pin = Requirement(line)
        specs = list(pin.specifier)
        if len(specs) == 1 and specs[0].operator == "==":
            found[canonicalize_name(pin.name)] = Version(specs[0].version)
    return found


def needs(requirement: Requirement) -> list[Requirement]:
    """What a distribution requires where the layer runs, with the extras `requirement` asks for: the
    metadata of the version installed here (the suite's), as pip reads it when it builds the layer.
    Nothing for one not installed here."""
    try:
        listed = requires_of(requirement.name) or []
    except PackageNotFoundError:
        return []
    extras = {""} | {canonicalize_name(extra) for extra in requirement.extras}
    found = [Requirement(line) for line in listed]
    return [r for r in found if r.marker is None or any(r.marker.evaluate({**LAMBDA, "extra": e}) for e in extras)]


def ranges_below(roots: dict[NormalizedName, Requirement]) -> dict[NormalizedName, list[tuple[str, Requirement]]]:
    """Every distribution pager's requirements bring in, at any depth, with each range put on it and by whom."""
    found: dict[NormalizedName, list[tuple[str, Requirement]]] = {}
    todo = list(roots.values())
    walked: set[tuple[NormalizedName, frozenset[str]]] = set()
    while todo:
        requirement = todo.pop()
        name = canonicalize_name(requirement.name)
        if (name, frozenset(requirement.extras)) in walked:
            continue
        walked.add((name, frozenset(requirement.extras)))
        for needed in needs(requirement):
            found.setdefault(canonicalize_name(needed.name), []).append((name, needed))
            todo.append(needed)
    return found


def test_each_line_of_the_layers_requirements_pins_one_version():
    for number, line in pin_lines():
        pin = Requirement(line)
        specs = list(pin.specifier)
        assert len(specs) == 1 and specs[0].operator == "==" and not pin.marker and not pin.extras, (
            f"{PINS_NAME}:{number}: {line!r} is not name==version (the layer must be the same at every build)")


def test_every_requirement_of_pager_is_pinned_in_the_layer_but_what_lambda_brings():
    pinned = pins()
    missing = [f"{name}: pyproject.toml requires {r.specifier or 'any version'}, but {PINS_NAME} pins no version of it"
               for name, r in requirements().items() if name not in pinned and name not in NOT_IN_THE_LAYER]
    assert not missing, "; ".join(missing)
    shadowed = [f"{name}: pinned in {PINS_NAME} at {pinned[name]}, but the layer leaves it out: {why}"
                for name, why in NOT_IN_THE_LAYER.items() if name in pinned]
    assert not shadowed, "; ".join(shadowed)


def test_each_pin_of_the_layer_is_a_version_pyproject_allows():
    declared = requirements()
    outside = [f"{name}: {PINS_NAME} pins {version}, outside pyproject.toml's {declared[name].specifier}"
               for name, version in pins().items()
               if name in declared and not declared[name].specifier.contains(version, prereleases=True)]
    assert not outside, "; ".join(outside)


def test_a_pin_of_what_pagers_requirements_bring_in_is_allowed_within_their_ranges():
    """A distribution pager does not require itself may be pinned (to hold it at a version that works),
    if a requirement brings it in where the layer runs and the pin is one every range on it allows: boto3's
    too, since the runtime's botocore imports the layer's urllib3 (the mismatch AWS warns of in "Working
    with .zip file archives for Python Lambda functions")."""
    declared = requirements()
    below = ranges_below(declared)
    problems = []
    for name, version in pins().items():
        if name in declared:
            continue
        if name not in below:
            problems.append(f"{name}: {PINS_NAME} pins {version}, but nothing pyproject.toml requires needs it")
            continue
        problems += [f"{name}: {PINS_NAME} pins {version}, outside what {by} requires: {needed.specifier}"
                     for by, needed in below[name] if not needed.specifier.contains(version, prereleases=True)]
    assert not problems, "; ".join(problems)


def test_what_the_requirements_bring_in_is_read_for_the_lambda_runtime():
    below = ranges_below({canonicalize_name(name): Requirement(line) for name, line in
                          [("requests", "requests"), ("pyjwt", "pyjwt[crypto]")]})
    assert "urllib3" in below and "cryptography" in below  # pyjwt's through its extra `crypto`
    assert "typing-extensions" not in below  # pyjwt needs it only below Python 3.11, the runtime is 3.13
