"""pager: a GitHub App that keeps one maintainer's Telegram chat quiet and true for a fleet of repositories."""
