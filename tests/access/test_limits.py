"""Limits on the patient API: searches per client (429 with Retry-After, shared by every
process through PostgreSQL, keyed by a hash of the address), the request body size (413) and
the CORS policy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection, connections
from django.test import Client, RequestFactory

from zolsearch.access.clients import axes_client_ip, client_address
from zolsearch.access.models import RateCounter
from zolsearch.access.services import rate_counters_purge, rate_limit_hit
from zolsearch.search.models import Answer
from zolsearch.search.services import client_fingerprint

BASE_DIR = Path(settings.BASE_DIR)
SEARCH = "/api/v1/search"
QUESTION = {"question": "What are the symptoms of ABCD syndrome?", "language": "en"}


def _search(client: Client, address: str, **extra: str) -> object:
    return client.post(SEARCH, data=QUESTION, content_type="application/json", REMOTE_ADDR=address, **extra)


@pytest.mark.django_db
def test_searches_over_the_limit_get_429_with_retry_after(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a limit of 2 searches a minute WHEN one client asks 3 times and another once THEN
    the first two answers and the other client's are served, the third gets 429 with a
    Retry-After within the window and nothing stored for it; the counter holds the client's
    fingerprint, not its address."""
    settings.SEARCH_RATE_LIMIT = (2, 60)
    client = Client()
    assert _search(client, "10.0.0.5").status_code == 200
    assert _search(client, "10.0.0.5").status_code == 200
    answers = Answer.objects.count()
    refused = _search(client, "10.0.0.5")
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60
    assert "too many searches" in refused.json()["detail"]
    assert Answer.objects.count() == answers  # refused before the pipeline ran
    assert _search(client, "10.0.0.6").status_code == 200
    keys = set(RateCounter.objects.values_list("key", flat=True))
    assert keys == {f"search:{client_fingerprint(address=a)}" for a in ("10.0.0.5", "10.0.0.6")}
    assert not [key for key in keys if "10.0.0" in key]


@pytest.mark.django_db
def test_loopback_is_exempt_in_the_local_profile_and_zero_turns_the_limit_off(settings) -> None:  # type: ignore[no-untyped-def]
    settings.SEARCH_RATE_LIMIT = (1, 60)
    client = Client()
    assert [_search(client, "127.0.0.1").status_code for _ in range(2)] == [200, 200]
    settings.SEARCH_RATE_LIMIT = (0, 60)
    assert [_search(client, "10.0.0.7").status_code for _ in range(2)] == [200, 200]
    assert not RateCounter.objects.exists()


@pytest.mark.django_db
def test_the_patient_page_shares_the_search_budget(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a limit of 1 WHEN a client searched through the API and then asks the page to
    answer server-side (GET /?q=) THEN the page answers 429; the page without a question is
    not counted."""
    settings.SEARCH_RATE_LIMIT = (1, 60)
    client = Client()
    assert _search(client, "10.0.0.8").status_code == 200
    assert client.get("/", REMOTE_ADDR="10.0.0.8").status_code == 200
    page = client.get("/", {"q": "wat is ABCD syndroom?"}, REMOTE_ADDR="10.0.0.8")
    assert page.status_code == 429 and int(page["Retry-After"]) >= 1


def test_the_client_behind_trusted_proxies_is_the_right_most_untrusted_hop(settings) -> None:  # type: ignore[no-untyped-def]
    """X-Forwarded-For is believed only from a trusted proxy, and only its right-most entry
    that is not a proxy: what a client typed further left is ignored."""
    settings.TRUSTED_PROXIES = ["127.0.0.1", "10.1.0.0/16"]
    factory = RequestFactory()
    via_proxies = factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 203.0.113.9, 10.1.2.3")
    assert client_address(via_proxies) == "203.0.113.9"
    direct = factory.get("/", REMOTE_ADDR="198.51.100.4", HTTP_X_FORWARDED_FOR="6.6.6.6")
    assert client_address(direct) == "198.51.100.4"
    assert client_address(factory.get("/", REMOTE_ADDR="127.0.0.1")) == "127.0.0.1"
    garbage = factory.get("/", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="not-an-ip")
    assert client_address(garbage) == "127.0.0.1"


def test_fingerprints_rotate_and_never_contain_the_address(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN a rotation of one hour WHEN one address is hashed twice within an hour and once in
    the next THEN the first two agree and the third differs; another secret gives other values;
    axes' pseudonymous "IP" is an IPv6 address derived from it, not the address."""
    settings.CLIENT_HASH_ROTATION_S = 3600
    at = datetime(2026, 11, 24, 10, 5, tzinfo=UTC)
    same = client_fingerprint(address="203.0.113.9", now=at + timedelta(minutes=50))
    assert client_fingerprint(address="203.0.113.9", now=at) == same and len(same) == 64
    assert client_fingerprint(address="203.0.113.9", now=at + timedelta(hours=1)) != same
    settings.CLIENT_HASH_SECRET = "another secret"
    assert client_fingerprint(address="203.0.113.9", now=at) != same
    request = RequestFactory().get("/", REMOTE_ADDR="203.0.113.9")
    pseudonym = axes_client_ip(request)
    assert ":" in pseudonym and "203.0.113.9" not in pseudonym
    assert pseudonym == axes_client_ip(RequestFactory().get("/", REMOTE_ADDR="203.0.113.9"))


@pytest.mark.django_db
def test_fixed_windows_reset_and_old_counters_are_purged() -> None:
    start = datetime(2026, 11, 24, 10, 0, tzinfo=UTC)
    hits = [
        rate_limit_hit(scope="t", client="c", limit=2, window_s=60, now=start + timedelta(seconds=s))
        for s in (0, 10, 20)
    ]
    assert [(d.hits, d.allowed) for d in hits] == [(1, True), (2, True), (3, False)]
    assert hits[2].retry_after_s == 40
    next_window = rate_limit_hit(scope="t", client="c", limit=2, window_s=60, now=start + timedelta(seconds=61))
    assert (next_window.hits, next_window.allowed, next_window.retry_after_s) == (1, True, 59)
    late = rate_limit_hit(scope="t", client="c", limit=2, window_s=60, now=start + timedelta(seconds=30))
    assert late.hits == 2  # a request computed against the older window counts in the newer one
    rate_limit_hit(scope="t", client="old", limit=2, window_s=60, now=start - timedelta(days=3))
    assert rate_counters_purge(before=start - timedelta(days=1)) == 1
    assert set(RateCounter.objects.values_list("key", flat=True)) == {"t:c"}


_CHILD = """
import json, os, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "zolsearch.settings")
django.setup()
from zolsearch.access.services import rate_limit_hit
print(json.dumps([rate_limit_hit(scope="proc", client="shared", limit=5, window_s=10**7).hits for _ in range(3)]))
"""


@pytest.mark.django_db(transaction=True)
def test_processes_and_threads_share_one_count() -> None:
    """GIVEN two hits counted by this process WHEN another Python process (a gunicorn worker)
    counts three for the same client on the same database, then 8 threads with their own
    connections count 5 each THEN the other process saw 3, 4, 5 and the total is 45: one count,
    atomic, whatever process or connection adds to it."""
    for _ in range(2):
        rate_limit_hit(scope="proc", client="shared", limit=5, window_s=10**7)
    env = {
        **os.environ,
        "EMBEDDED_PGDATA": str(settings.EMBEDDED_PGDATA),
        "EMBEDDED_PGDATABASE": connection.settings_dict["NAME"],
    }
    child = subprocess.run(
        [sys.executable, "-c", _CHILD], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=300
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert json.loads(child.stdout.strip().splitlines()[-1]) == [3, 4, 5]

    def five() -> None:
        try:
            for _ in range(5):
                rate_limit_hit(scope="proc", client="shared", limit=5, window_s=10**7)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=five) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    last = rate_limit_hit(scope="proc", client="shared", limit=5, window_s=10**7)
    assert last.hits == 46 and not last.allowed


@pytest.mark.django_db
def test_an_oversized_json_body_gets_413_before_it_is_read(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN API_MAX_BODY_BYTES of 2,000 WHEN a search or feedback body is larger THEN 413 with
    a JSON detail; a body under the limit is answered as usual; the admin is not concerned."""
    settings.API_MAX_BODY_BYTES = 2000
    client = Client()
    big = json.dumps({"question": "x" * 3000})
    response = client.post(SEARCH, data=big, content_type="application/json")
    assert response.status_code == 413 and "maximum is 2000" in response.json()["detail"]
    feedback = client.post(
        "/api/v1/feedback", data=json.dumps({"comment": "y" * 3000}), content_type="application/json"
    )
    assert feedback.status_code == 413
    assert _search(client, "127.0.0.1").status_code == 200
    long_question = client.post(SEARCH, data=json.dumps({"question": "x" * 1500}), content_type="application/json")
    assert long_question.status_code == 422  # under the byte limit: the question's own limit speaks
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE >= settings.API_MAX_BODY_BYTES


@pytest.mark.django_db
def test_cors_allows_only_the_configured_origins_on_the_patient_api(settings) -> None:  # type: ignore[no-untyped-def]
    """GIVEN no allowed origin (the default) WHEN a browser preflights the search from another
    site THEN no CORS header is sent; GIVEN one allowed origin THEN that origin (only) is allowed
    on the search, never on the staff API or the admin."""
    preflight = {"HTTP_ORIGIN": "https://www.zol.be", "HTTP_ACCESS_CONTROL_REQUEST_METHOD": "POST"}
    client = Client()
    assert settings.CORS_ALLOWED_ORIGINS == []
    assert "access-control-allow-origin" not in client.options(SEARCH, **preflight).headers
    settings.CORS_ALLOWED_ORIGINS = ["https://www.zol.be"]
    allowed = client.options(SEARCH, **preflight)
    assert allowed.headers["access-control-allow-origin"] == "https://www.zol.be"
    assert "POST" in allowed.headers["access-control-allow-methods"]
    other = client.options(SEARCH, HTTP_ORIGIN="https://evil.example", HTTP_ACCESS_CONTROL_REQUEST_METHOD="POST")
    assert "access-control-allow-origin" not in other.headers
    staff = client.options("/api/v1/taxonomy/resolve", **preflight)
    assert "access-control-allow-origin" not in staff.headers
    answered = _search(client, "127.0.0.1", HTTP_ORIGIN="https://www.zol.be")
    assert answered.headers["access-control-allow-origin"] == "https://www.zol.be"
