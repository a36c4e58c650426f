"""The staff groups and their permissions, declared in one place (README "Access and privacy").

Each :class:`GroupSpec` grants, per app label, Django's default actions (``view``, ``add``,
``change``, ``delete``) on every model of that app, so a model an app adds later is covered at the
next ``migrate`` (:func:`zolsearch.access.services.groups_sync` runs after every migrate), plus
the app's custom permissions (those declared in a model's ``Meta.permissions``, such as
``evaluation.apply_recommendations``) when ``custom`` is set, plus single permissions by their
``app_label.codename``. ``models`` narrows the actions for named models of a granted app (e.g.
ingested documents are read-only). An app label that is not installed grants nothing.

Least privilege, decided here:

- **Editors** curate the content behind the answers: sources and ingestion runs (view, add,
  change; ingested documents, chunks and embeddings view only; deleting a source, which deletes
  its documents, is left to a superuser), the taxonomy (entities, relations, aliases, body-site
  routes: full; SNOMED CT tables and imports view, imports add). No answers (patients'
  questions), no evaluation, no flags.
- **Evaluators** measure and tune the pipeline: every model of ``evaluation``, ``review`` and
  ``monitoring`` (view, add, change; no delete: runs, results and reviews are evidence) with their
  custom permissions, the served answers and patients' feedback (view; each view is audited) and
  the pipeline's flags (view, change, with their history). No content, no taxonomy.

Neither group manages users, groups, tokens of others or the audit trail: superusers do. Every
staff user may create and revoke their own API tokens (``access.*_stafftoken``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

VIEW = ("view",)
CURATE = ("view", "add", "change")
FULL = ("view", "add", "change", "delete")
TOKENS_OWN = ("access.view_stafftoken", "access.add_stafftoken", "access.change_stafftoken")


@dataclass(frozen=True)
class AppGrant:
    """Default ``actions`` on every model of ``app_label`` (``models``: model name → actions
    instead, lower-case model names); ``custom``: also every custom permission of the app."""

    app_label: str
    actions: tuple[str, ...]
    models: dict[str, tuple[str, ...]] = field(default_factory=dict)
    custom: bool = False


@dataclass(frozen=True)
class GroupSpec:
    """A group: app grants and single permissions (``"app_label.codename"``)."""

    name: str
    apps: tuple[AppGrant, ...]
    permissions: tuple[str, ...] = ()


GROUPS: tuple[GroupSpec, ...] = (
    GroupSpec(
        name="Editors",
        apps=(
            AppGrant(
                "ingestion",
                CURATE,
                models={"document": VIEW, "chunk": VIEW, "chunkembedding": VIEW, "ingestionrun": ("view", "add")},
            ),
            AppGrant(
                "taxonomy",
                FULL,
                models={
                    "snomedconcept": VIEW,
                    "snomeddescription": VIEW,
                    "snomedrelationship": VIEW,
                    "snomedlanguagemember": VIEW,
                    "snomedimport": ("view", "add"),
                },
                custom=True,
            ),
        ),
        permissions=TOKENS_OWN,
    ),
    GroupSpec(
        name="Evaluators",
        apps=(
            AppGrant(
                "evaluation",
                CURATE,
                # Computed rows and audit trails: read only (runs are started, never edited).
                models={
                    "evaluationrun": ("view", "add"),
                    "evaluationresult": VIEW,
                    "judgement": VIEW,
                    "ablationconfiguration": VIEW,
                    "calibrationchange": VIEW,
                },
                custom=True,
            ),
            AppGrant("review", CURATE, custom=True),
            AppGrant("monitoring", CURATE, custom=True),
        ),
        permissions=(
            "search.view_answer",
            "search.view_feedback",
            "search.view_pipelineflag",
            "search.change_pipelineflag",
            "search.view_pipelineflagchange",
            *TOKENS_OWN,
        ),
    ),
)
