"""The operator's side of pager: `pager setup`, `pager doctor` and `pager remove` (the command line in `pager.cli`).

    manifest     what the GitHub App must be, derived from the code: the events of the signals table, the
                 least permission each event and each call needs; the manifest GitHub registers it from
    deployment   where pager's settings live: the stack (its outputs, parameters and secret), the
                 parameters the next `make deploy` applies (samconfig.local.toml), a `.env` for `make serve`
    clients      the calls of setup and doctor, on the product's own GitHub and Telegram clients
    form         the one-page form on 127.0.0.1 that posts the manifest to GitHub and takes its code back
    console      what the commands print, with every secret they know held back
    setup        `pager setup`: each step finds whether it is done, and does only what is missing
    doctor       `pager doctor`: facts gathered first, then pure checks, each a line with its fix
    remove       `pager remove`: the webhook, the stack and the secrets deleted in order, then what stays named
                 with what it costs and the commands that remove it

Nothing here is imported by the Lambda functions; every part takes its I/O (streams, clock, browser,
HTTP session, AWS clients) from the caller, so that tests run it against the fake world and moto.
"""
