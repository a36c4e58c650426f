"""The drift webhook against a real HTTP server on loopback that this test starts: the JSON it
receives, retries of transient failures, and failures that are recorded but never fail the
check."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import override_settings

from evaluation.monitoring.models import DriftAlert, DriftCheck, DriftMetric
from evaluation.monitoring.services import drift_check_run
from tests.monitoring.test_drift import AS_OF, SHIFTED, _day, _week

pytestmark = pytest.mark.django_db


class WebhookServer(ThreadingHTTPServer):
    """Answers each POST with the next status of ``statuses`` (the last one repeats) and keeps
    what it received: ``requests`` of (path, headers, parsed JSON body)."""

    def __init__(self, statuses: list[int]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.statuses = list(statuses)
        self.requests: list[tuple[str, dict[str, str], object]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/hooks/drift"


class _Handler(BaseHTTPRequestHandler):
    server: WebhookServer

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.server.requests.append((self.path, dict(self.headers), json.loads(body)))
        status = self.server.statuses.pop(0) if len(self.server.statuses) > 1 else self.server.statuses[0]
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, format: str, *args: object) -> None:  # the test output stays quiet
        return


@pytest.fixture
def webhook_server(request: pytest.FixtureRequest) -> Iterator[WebhookServer]:
    server = WebhookServer(getattr(request, "param", [200]))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _shifted_day() -> None:
    _week()
    _day(scores=SHIFTED)


@pytest.mark.parametrize("webhook_server", [[503, 200]], indirect=True)
def test_alerts_are_posted_as_json_after_a_transient_failure(webhook_server: WebhookServer) -> None:
    """GIVEN a webhook that answers 503 once, then 200 WHEN a check raises an alert THEN the
    payload is posted twice (one retry) and the check records ``sent``."""
    _shifted_day()
    with override_settings(DRIFT_WEBHOOK_URL=webhook_server.url):
        check = drift_check_run(as_of=AS_OF)

    assert check.webhook == DriftCheck.Webhook.SENT and check.webhook_error == ""
    assert len(webhook_server.requests) == 2
    path, headers, payload = webhook_server.requests[-1]
    assert path == "/hooks/drift" and headers["Content-Type"] == "application/json"
    alert = DriftAlert.objects.get(check_run=check)
    assert payload == {
        "event": "zolsearch.drift_alert",
        "check_id": check.pk,
        "window_start": (AS_OF - timedelta(days=1)).isoformat(),
        "window_end": AS_OF.isoformat(),
        "baseline_start": (AS_OF - timedelta(days=8)).isoformat(),
        "alerts": [
            {
                "metric": "gate_score_kl",
                "label": str(DriftMetric.GATE_SCORE_KL.label),  # in the active language
                "value": alert.value,
                "threshold": 0.1,
                "current": alert.current,
                "baseline": alert.baseline,
                "p_value": alert.p_value,
            }
        ],
    }
    assert DriftCheck.objects.get(pk=check.pk).webhook == DriftCheck.Webhook.SENT


@pytest.mark.parametrize("webhook_server", [[500]], indirect=True)
def test_a_failing_webhook_is_retried_then_recorded_and_the_check_stands(
    webhook_server: WebhookServer, caplog: pytest.LogCaptureFixture
) -> None:
    """GIVEN a webhook that always answers 500 and DRIFT_WEBHOOK_ATTEMPTS = 3 WHEN a check raises
    an alert THEN three attempts reach it, the check and its alert are saved, the check records
    ``failed`` with the error, the failure is logged and nothing is raised."""
    _shifted_day()
    with override_settings(DRIFT_WEBHOOK_URL=webhook_server.url, DRIFT_WEBHOOK_ATTEMPTS=3):
        check = drift_check_run(as_of=AS_OF)

    assert len(webhook_server.requests) == 3
    stored = DriftCheck.objects.get(pk=check.pk)
    assert stored.webhook == DriftCheck.Webhook.FAILED
    assert "500 Server Error" in stored.webhook_error
    assert stored.alerts.count() == 1
    assert "the webhook failed" in caplog.text


@pytest.mark.parametrize("webhook_server", [[400]], indirect=True)
def test_a_refused_payload_is_not_retried(webhook_server: WebhookServer) -> None:
    _shifted_day()
    with override_settings(DRIFT_WEBHOOK_URL=webhook_server.url, DRIFT_WEBHOOK_ATTEMPTS=3):
        check = drift_check_run(as_of=AS_OF)
    assert len(webhook_server.requests) == 1
    assert check.webhook == DriftCheck.Webhook.FAILED and "400 Client Error" in check.webhook_error


def test_an_unreachable_webhook_is_recorded() -> None:
    """GIVEN a loopback port nobody listens on WHEN a check raises an alert THEN the connection
    error is recorded after the attempts and the check is saved."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    _shifted_day()
    with override_settings(DRIFT_WEBHOOK_URL=f"http://127.0.0.1:{port}/", DRIFT_WEBHOOK_ATTEMPTS=2):
        check = drift_check_run(as_of=AS_OF)
    assert check.webhook == DriftCheck.Webhook.FAILED and "ConnectionError" in check.webhook_error
    assert DriftCheck.objects.filter(pk=check.pk, alert_count=1).exists()


@pytest.mark.parametrize("webhook_server", [[200]], indirect=True)
def test_no_alert_no_post(webhook_server: WebhookServer) -> None:
    _week()
    _day()
    with override_settings(DRIFT_WEBHOOK_URL=webhook_server.url):
        check = drift_check_run(as_of=AS_OF)
    assert check.alert_count == 0 and check.webhook == "" and webhook_server.requests == []
