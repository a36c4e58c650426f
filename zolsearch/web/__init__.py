"""The patient search page at ``/``: a server-rendered page over the search pipeline (issue 12)."""
