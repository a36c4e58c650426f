"""Access control and privacy of the project: staff groups, staff API tokens, request limits on
the patient API and the audit of who viewed answers (issue 13, items 3 and 4)."""
