"""docs/benchmarks.md's section "Cold start of each function": `costs.cold_imports`' measures of both
functions, with bytecode and without, the import and the first invocation beside a warm one. `report.report`
calls `section` once; it writes nothing without the measure."""

from __future__ import annotations

from typing import Any

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


def section(add: Add, imports: dict[str, Any] | None) -> None:
    if not imports:
        return
    heading(add, "Cold start of each function")
    paragraph(add, _intro(imports))
    table(add, COLUMNS, "l" + "r" * (len(COLUMNS) - 1),
          ([name, *(f"{imports[f'{name}_{flavour}'][key] * 1000:.0f} ms" for flavour, key in CELLS)]
           for name in ("webhook", "sweep")))
    paragraph(add, "Lambda bills a cold start's INIT phase (the import) and its first invocation: the bill above prices "
              "each cold start at the import plus \"once\" with bytecode; the rest of the first invocation is an "
              "ordinary invocation's work, modelled as every other one.")
