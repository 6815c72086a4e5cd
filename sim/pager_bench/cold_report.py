"""docs/benchmarks.md's section "Cold start of each function": `costs.cold_imports`' measures of both
functions, with bytecode and without, the import and the first invocation beside a warm one; then the
webhook function's cold start for a delivery pager ignores, both ways side by side (`costs.WAYS`: as
deployed, and with the secrets in the environment), and what reading the secrets through boto3 costs.
`report.report` calls `section` once; it writes nothing without the measure."""

from __future__ import annotations

from typing import Any

from .costs import WAYS
from .markdown import Add, heading, paragraph, table

COLUMNS = ["function", "import", "first invocation", "import + first invocation", "a warm invocation",
           "once (clients, secret, key, imports)", "without bytecode: import", "without: import + first invocation"]
# A row's cells after the function's name: with bytecode ("compiled") or without ("bare"), which figure.
CELLS = (("compiled", "module"), ("compiled", "first"), ("compiled", "first_invocation"), ("compiled", "warm"),
         ("compiled", "one_time"), ("bare", "module"), ("bare", "first_invocation"))


def _intro(imports: dict[str, Any]) -> str:
    first = imports.get("first_event", {})
    return (f"A fresh `{imports['python']}` (`-I -S`) imports `app` from the function's folder with the layer and boto3 "
            f"(the runtime's) on its path, then invokes its `lambda_handler` twice; median of {imports['repeats']} runs. "
            "The first invocation is the first request of a new environment, everything in: building the clients "
            "(boto3's for Parameter Store and DynamoDB, the `requests` session), reading the secrets' SecureString "
            "through Powertools, parsing the app's private key for the JWT, the lazy imports, and the event's own work: "
            f"the webhook {first.get('webhook', 'its first event')}, the sweep {first.get('sweep', 'its first event')}. "
            "Its services are the real ones, on loopback: the table and the secret in moto's server, GitHub and "
            "Telegram as pager_world's fakes served over HTTP. The second invocation is a warm one of the same kind; "
            "\"once\" is what the first did that the second did not (each one's time less the time the fakes took to "
            f"answer). The layer: {imports['source']}, with the current `pager` copied in and everything compiled "
            "(unchecked-hash), as `layers/pager/Makefile` does; without bytecode: the same trees copied without "
            "`__pycache__`, run with `-B`.")


# The ignored delivery's table: a row per way (`costs.WAYS`), its figures with bytecode.
IGNORED_COLUMNS = ["import", "first invocation", "import + first invocation", "a warm invocation"]
IGNORED_CELLS = ("module", "first", "first_invocation", "warm")
# The secrets' read through boto3, measured alone: its parts, in the order they happen.
SECRET_READ = (("botocore", "importing botocore"), ("boto3", "boto3 on top"),
               ("client", "building the SSM client (its service model and endpoint rules)"),
               ("call", "the GetParameter on loopback"))


def _ms(seconds: float) -> str:
    """Milliseconds, with a decimal under ten."""
    return f"{seconds * 1000:.1f} ms" if seconds < 0.01 else f"{seconds * 1000:.0f} ms"


def _ignored(add: Add, imports: dict[str, Any], modules: dict[str, Any] | None) -> None:
    """The webhook function's cold start for an ignored delivery, both ways, and the secrets' read alone."""
    event = imports["ignored_event"]
    deployed, local = imports["ignored_deployed"], imports["ignored_local"]
    table(add, [f"an ignored delivery ({event})", *IGNORED_COLUMNS], "l" + "r" * len(IGNORED_COLUMNS),
          ([label, *(_ms(imports[f"ignored_{way}"][key]) for key in IGNORED_CELLS)] for way, label in WAYS.items()))
    more = (f" and loads {modules['deployed']['modules'] - modules['local']['modules']} more modules (see A lean hot path)"
            if modules else "")
    read = imports["secret_read"]
    parts = sum(read.values())
    bulk = read["botocore"] + read["client"]
    paragraph(add, f"The webhook function's cold start for a delivery pager ignores ({event}), the same layer and "
              f"interpreter, both ways in alternating runs ({imports['repeats']} each, medians): {WAYS['deployed']}, "
              "`PAGER_SECRET_ID` set as the template sets it, so that the first invocation reads the secrets' "
              "SecureString (from moto's Parameter Store on loopback) through Powertools and boto3, as the first request "
              f"of every new environment does; and {WAYS['local']}, the four secrets set there, as local runs and the "
              f"tests have them. As deployed the first invocation takes {_ms(deployed['first'] - local['first'])} more"
              f"{more}. Reading the parameter through boto3, measured alone between those runs: "
              + ", ".join(f"{label} {_ms(read[key])}" for key, label in SECRET_READ)
              + f"; {_ms(parts)} in all, {100 * bulk / parts:.0f}% of it botocore's import and its client. boto3's own "
              f"part is small ({_ms(read['boto3'])}), so reading the parameter with botocore alone would save little, and "
              "every delivery pager acts on, and every run of the sweep, builds a boto3 client for the table anyway.")


def section(add: Add, imports: dict[str, Any] | None, modules: dict[str, Any] | None = None) -> None:
    """Both functions' cold starts (`imports`, from `costs.cold_imports`); then the ignored delivery's both ways
    when they were measured, citing how many more modules it loads as deployed (`modules`, from
    `costs.ignored_delivery_modules`, when there)."""
    if not imports:
        return
    heading(add, "Cold start of each function")
    paragraph(add, _intro(imports))
    table(add, COLUMNS, "l" + "r" * (len(COLUMNS) - 1),
          ([name, *(f"{imports[f'{name}_{flavour}'][key] * 1000:.0f} ms" for flavour, key in CELLS)]
           for name in ("webhook", "sweep")))
    paragraph(add, "Lambda bills a cold start's INIT phase (the import) and its first invocation: the bill above prices "
              "each cold start at the import plus \"once\" with bytecode (the contribution's, as deployed: the "
              "secrets read from their store); the rest of the first invocation is an ordinary invocation's work, "
              "modelled as every other one.")
    if "ignored_deployed" in imports:
        _ignored(add, imports, modules)
