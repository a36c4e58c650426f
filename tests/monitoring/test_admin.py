"""The monitoring admin as an evaluator or operator uses it: alert, check and purge lists
without N+1, read-only records, and acknowledging alerts through the changelist action."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse
from django.utils import translation

from evaluation.monitoring.models import DriftAlert, DriftCheck
from evaluation.monitoring.services import drift_check_run, retention_purge
from tests.monitoring.test_drift import AS_OF, SHIFTED, _day, _week

pytestmark = pytest.mark.django_db


@pytest.fixture
def alerts() -> list[DriftAlert]:
    """Two checks of a shifted day, one alert each."""
    _week()
    _day(scores=SHIFTED)
    drift_check_run(as_of=AS_OF)
    drift_check_run(as_of=AS_OF)
    return list(DriftAlert.objects.order_by("id"))


@pytest.mark.parametrize(
    "url_name",
    [
        "admin:monitoring_driftalert_changelist",
        "admin:monitoring_driftcheck_changelist",
        "admin:monitoring_retentionpurge_changelist",
        "admin:django_celery_beat_periodictask_changelist",
    ],
)
def test_list_pages_render_with_a_bounded_number_of_queries(
    admin_client: Client, django_assert_max_num_queries: Any, alerts: list[DriftAlert], url_name: str
) -> None:
    retention_purge(days=90)
    retention_purge(days=90)
    with django_assert_max_num_queries(12):
        response = admin_client.get(reverse(url_name))
    assert response.status_code == 200


def test_check_and_alert_pages_show_what_was_computed(admin_client: Client, alerts: list[DriftAlert]) -> None:
    check = alerts[0].check_run
    page = admin_client.get(reverse("admin:monitoring_driftcheck_change", args=[check.pk])).content.decode()
    for metric in check.results:
        assert f"<td>{metric}</td>" in page
    assert f"{check.results['gate_score_kl']['value']:.4f}" in page
    assert "fewer than 30 values" in page  # the skipped judge metrics say why
    assert 'name="_save"' not in page  # a record: no save button
    alert_page = admin_client.get(reverse("admin:monitoring_driftalert_change", args=[alerts[0].pk])).content.decode()
    assert "counts_current" in alert_page
    assert admin_client.get(reverse("admin:monitoring_driftalert_add")).status_code == 403
    assert admin_client.get(reverse("admin:monitoring_driftcheck_delete", args=[check.pk])).status_code == 403


def test_acknowledge_action_marks_open_alerts_with_the_user(admin_client: Client, alerts: list[DriftAlert]) -> None:
    """GIVEN two open alerts, one of them acknowledged earlier by someone else WHEN the admin
    acknowledges both from the changelist THEN the open one carries the admin's name and time
    and the earlier acknowledgement is kept."""
    first, second = alerts
    DriftAlert.objects.filter(pk=first.pk).update(acknowledged_by="oncall", acknowledged_at=AS_OF)
    with translation.override("en"):
        response = admin_client.post(
            reverse("admin:monitoring_driftalert_changelist"),
            {"action": "acknowledge", "_selected_action": [first.pk, second.pk]},
            follow=True,
        )
    assert response.status_code == 200
    assert "Acknowledged 1 alert." in response.content.decode()
    first.refresh_from_db()
    second.refresh_from_db()
    assert (first.acknowledged_by, first.acknowledged_at) == ("oncall", AS_OF)
    assert second.acknowledged_by == "admin" and second.acknowledged_at is not None


def test_acknowledging_needs_the_change_permission(client: Client, alerts: list[DriftAlert]) -> None:
    """GIVEN a staff user who may only view drift alerts WHEN they post the action THEN it is
    not offered and nothing changes."""
    viewer = User.objects.create_user("viewer", password="x", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_driftalert"))
    client.force_login(viewer)
    changelist = reverse("admin:monitoring_driftalert_changelist")
    assert 'value="acknowledge"' not in client.get(changelist).content.decode()
    client.post(changelist, {"action": "acknowledge", "_selected_action": [a.pk for a in alerts]})
    assert not DriftAlert.objects.filter(acknowledged_at__isnull=False).exists()
    assert DriftCheck.objects.count() == 2
