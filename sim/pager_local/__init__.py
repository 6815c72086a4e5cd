"""pager on this machine, without AWS: the offline demo (`make demo`) and the local server (`make serve`).

    local   the webhook function behind HTTP on loopback (requests turned into API Gateway events),
            a fake of the fake world served on loopback, and DynamoDB embedded (moto's server)
    demo    a story on a virtual clock against the fake world, told as the maintainer's chat shows it
    serve   both endpoints on a local port for the real GitHub and Telegram, and the sweep on a timer
"""
