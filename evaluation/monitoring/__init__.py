"""Scheduled monitoring: daily drift checks of served answers (issue 12 item 4, seed 002) and
the retention purge of answers, feedback and judgements (issue 13 item 4)."""
