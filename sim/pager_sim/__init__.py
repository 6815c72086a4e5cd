"""Run pager without AWS: GitHub and Telegram emulators, the offline demo, the local server, the fleet benchmark.

Nothing here forks pager's logic: the emulators stand where GitHub and Telegram stand, and the real
`lambda_handler`s and the real sweep run against them.
"""
