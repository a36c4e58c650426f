"""Writes of the scheduled monitoring: drift checks and alert acknowledgements
(:mod:`.drift`), retention purges (:mod:`.retention`)."""

from evaluation.monitoring.services.drift import drift_alerts_acknowledge, drift_check_run
from evaluation.monitoring.services.retention import retention_cutoff, retention_purge

__all__ = ["drift_alerts_acknowledge", "drift_check_run", "retention_cutoff", "retention_purge"]
