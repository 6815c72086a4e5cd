"""The fake world pager is tested against: GitHub, Telegram and the table, with one fault model.

Used by the tests, the offline demo, the local server and the benchmark; never deployed.

    clock      the virtual clock every part reads
    faults     the one fault model: every call to GitHub, Telegram and the table logged in order,
               rules that make chosen calls fail as the real service fails
    http       requests and answers, and `Transport`: a `requests` adapter that hands each request to
               the fake of its host, mounted on the clients' session (as httpx's MockTransport is)
    github     `FakeGitHub`: the REST calls pager makes, and the app's webhook with its deliveries list
    telegram   `FakeTelegram`: the Bot API methods pager calls, and the chat as a person sees it
    store      the table with faults: the in-memory store, or DynamoDB (moto) behind a faulty client
    payloads   GitHub's example payloads (tests/fixtures/github-webhooks) and variants of them
    events     API Gateway HTTP API events (payload 2.0) and Lambda's context, as AWS hands them over
    world      `World`: pager's real handlers and sweep wired to all of the above, in a closed loop
    matrix     the failure matrix: fail each call of a step in turn, then deliver it again
"""
