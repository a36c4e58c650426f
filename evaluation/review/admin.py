"""The evaluators' review queue in the admin.

The list: open reviews first, then the riskiest, then the newest; filters by kind, verdict,
status (open or reviewed), assignee ("me"), language and outcome; bulk actions (assign to me,
unassign, mark a verdict with a reason, use as calibration label). The review page shows side by
side the question, the served or refused draft, the retrieved chunks with their scores and
source, the gate and judge scores with the judge's evidence and the frozen configuration, with
the verdict form below and buttons that turn the verdict into a golden question, a pending alias
or a calibration label. Every write goes through :mod:`evaluation.review.services`.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.html import format_html
from django.utils.text import Truncator
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from evaluation.review.forms import AliasForm, GoldenQuestionForm, ReviewActionForm, ReviewVerdictForm
from evaluation.review.models import Kind, Review, Verdict
from evaluation.review.selectors import golden_set_names_for_review, review_detail, review_languages, review_queue
from evaluation.review.services import (
    ReviewInvalid,
    review_alias_propose,
    review_golden_draft,
    review_golden_question_create,
    review_queue_sync,
    review_verdict_set,
    reviews_assign,
    reviews_calibration_label,
    reviews_verdict_set,
)
from zolsearch.search.admin import AnswersViewedAudit
from zolsearch.search.services import answers_viewed

REFRESH_DAYS = (
    30  # "Refresh queue" looks at the answers of the last 30 days (a full backfill: manage.py review_sync --days 0)
)


class KindFilter(admin.SimpleListFilter):
    """Reviews with this reason among their signals (a gate rejection with a thumbs down shows
    under both)."""

    title = _("kind")
    parameter_name = "kind"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(k.value, str(k.label)) for k in Kind]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Review]) -> QuerySet[Review]:
        value = self.value()
        return queryset.filter(signals__contains=[value]) if value else queryset


class StatusFilter(admin.SimpleListFilter):
    title = _("status")
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("open", str(_("Unreviewed"))), ("reviewed", str(_("Reviewed")))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Review]) -> QuerySet[Review]:
        if self.value() == "open":
            return queryset.filter(verdict="")
        if self.value() == "reviewed":
            return queryset.exclude(verdict="")
        return queryset


class AssignedFilter(admin.SimpleListFilter):
    title = _("assigned to")
    parameter_name = "assigned"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("me", str(_("Me"))), ("nobody", str(_("Nobody"))), ("others", str(_("Someone else")))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Review]) -> QuerySet[Review]:
        value = self.value()
        if value == "me":
            return queryset.filter(assigned_to=request.user.pk)
        if value == "nobody":
            return queryset.filter(assigned_to__isnull=True)
        if value == "others":
            return queryset.exclude(Q(assigned_to__isnull=True) | Q(assigned_to=request.user.pk))
        return queryset


class LanguageFilter(admin.SimpleListFilter):
    """The question's language, among the languages of queued answers (one query over the
    reviews, not over every answer)."""

    title = _("language")
    parameter_name = "language"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [(code, code) for code in review_languages()]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Review]) -> QuerySet[Review]:
        value = self.value()
        return queryset.filter(answer__language=value) if value else queryset


def risk_level(risk: int) -> str:
    """A word for the risk score, so the list does not rely on colour alone."""
    if risk >= 80:
        return str(_("high"))
    if risk >= 50:
        return str(_("medium"))
    return str(_("low"))


@admin.register(Review)
class ReviewAdmin(AnswersViewedAudit, admin.ModelAdmin):
    """The review queue (see the module docstring). Every page that shows patients' questions
    is audited (``AnswersViewedAudit``; the golden-question and alias pages as
    ``review:golden`` / ``review:alias``)."""

    def answer_id_of(self, obj: Review) -> int:
        return int(obj.answer_id)

    list_display = (
        "risk_badge",
        "kind",
        "question_short",
        "language",
        "outcome",
        "gate_score",
        "judge_score",
        "assigned_to",
        "verdict",
        "calibration_label",
        "answered_at",
    )
    list_display_links = ("question_short",)
    list_filter = (
        StatusFilter,
        AssignedFilter,
        KindFilter,
        "verdict",
        LanguageFilter,
        "answer__outcome",
        "calibration_label",
    )
    search_fields = ("answer__question", "reason")
    list_per_page = 50
    actions = ["assign_to_me", "unassign", "mark_verdict", "use_as_calibration_label", "stop_calibration_label"]
    action_form = ReviewActionForm
    form = ReviewVerdictForm
    fields = ("verdict", "reason")
    change_form_template = "admin/review/review/change_form.html"
    change_list_template = "admin/review/review/change_list.html"

    # --- permissions: rows come from the sync, never typed in, never deleted -----------------

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> QuerySet[Review]:
        return review_queue()

    # --- list columns --------------------------------------------------------------------------

    @admin.display(description=_("risk"), ordering="risk")
    def risk_badge(self, obj: Review) -> str:
        level = risk_level(obj.risk)
        return format_html('<span class="review-risk review-risk-{}">{} · {}</span>', level, obj.risk, level)

    @admin.display(description=_("question"), ordering="answer__question")
    def question_short(self, obj: Review) -> str:
        return Truncator(obj.answer.question).chars(90)

    @admin.display(description=_("language"), ordering="answer__language")
    def language(self, obj: Review) -> str:
        return obj.answer.language

    @admin.display(description=_("outcome"), ordering="answer__outcome")
    def outcome(self, obj: Review) -> str:
        return obj.answer.get_outcome_display()

    @admin.display(description=_("gate score"), ordering="answer__gate_score")
    def gate_score(self, obj: Review) -> str:
        return "—" if obj.answer.gate_score is None else number_format(obj.answer.gate_score, 3)

    @admin.display(description=_("judge (lowest)"), ordering="judge_score")
    def judge_score(self, obj: Review) -> str:
        score = getattr(obj, "judge_score", None)
        return "—" if score is None else number_format(score, 2)

    @admin.display(description=_("answered at"), ordering="answer__created_at")
    def answered_at(self, obj: Review) -> Any:
        return obj.answer.created_at

    # --- bulk actions ----------------------------------------------------------------------

    @admin.action(description=_("Assign to me"), permissions=["change"])
    def assign_to_me(self, request: HttpRequest, queryset: QuerySet[Review]) -> None:
        count = reviews_assign(review_ids=list(queryset.values_list("pk", flat=True)), user=request.user)  # type: ignore[arg-type]
        self.message_user(request, _("%(n)d reviews assigned to you.") % {"n": count}, messages.SUCCESS)

    @admin.action(description=_("Unassign"), permissions=["change"])
    def unassign(self, request: HttpRequest, queryset: QuerySet[Review]) -> None:
        count = reviews_assign(review_ids=list(queryset.values_list("pk", flat=True)), user=None)
        self.message_user(request, _("%(n)d reviews unassigned.") % {"n": count}, messages.SUCCESS)

    @admin.action(description=_("Mark verdict (choose it and give a reason beside the action)"), permissions=["change"])
    def mark_verdict(self, request: HttpRequest, queryset: QuerySet[Review]) -> None:
        verdict, reason = request.POST.get("verdict", ""), request.POST.get("reason", "")
        if not verdict:
            self.message_user(request, _("Choose the verdict beside the action first."), messages.ERROR)
            return
        try:
            count = reviews_verdict_set(
                review_ids=list(queryset.values_list("pk", flat=True)),
                verdict=verdict,
                reason=reason,
                user=request.user,  # type: ignore[arg-type]
            )
        except ReviewInvalid as exc:
            self.message_user(request, str(exc), messages.ERROR)
            return
        label = Verdict(verdict).label
        self.message_user(request, _("%(n)d reviews marked “%(v)s”.") % {"n": count, "v": label}, messages.SUCCESS)

    @admin.action(description=_("Use as calibration label"), permissions=["change"])
    def use_as_calibration_label(self, request: HttpRequest, queryset: QuerySet[Review]) -> None:
        changed, skipped = reviews_calibration_label(review_ids=list(queryset.values_list("pk", flat=True)))
        self.message_user(request, _("%(n)d reviews are now calibration labels.") % {"n": changed}, messages.SUCCESS)
        if skipped:
            self.message_user(
                request,
                _("%(n)d reviews have no verdict yet and were skipped.") % {"n": skipped},
                messages.WARNING,
            )

    @admin.action(description=_("Stop using as calibration label"), permissions=["change"])
    def stop_calibration_label(self, request: HttpRequest, queryset: QuerySet[Review]) -> None:
        changed, _skipped = reviews_calibration_label(
            review_ids=list(queryset.values_list("pk", flat=True)), label=False
        )
        self.message_user(request, _("%(n)d reviews are no longer calibration labels.") % {"n": changed})

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        context = {"can_refresh": self.has_change_permission(request), **(extra_context or {})}
        return super().changelist_view(request, context)

    # --- the review page -------------------------------------------------------------------

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        context = dict(extra_context or {})
        if object_id is not None and object_id.isdigit():
            context["detail"] = review_detail(review_id=int(object_id))
        return super().changeform_view(request, object_id, form_url, context)

    def save_model(self, request: HttpRequest, obj: Review, form: Any, change: bool) -> None:
        review_verdict_set(
            review_id=obj.pk,
            verdict=form.cleaned_data["verdict"],
            reason=form.cleaned_data["reason"],
            user=request.user,  # type: ignore[arg-type]
        )

    def get_urls(self) -> list[URLPattern]:
        view = self.admin_site.admin_view
        return [
            path("refresh/", view(require_POST(self.refresh_view)), name="review_review_refresh"),
            path("<int:review_id>/assign/", view(require_POST(self.assign_view)), name="review_review_assign"),
            path(
                "<int:review_id>/calibration/",
                view(require_POST(self.calibration_view)),
                name="review_review_calibration",
            ),
            path("<int:review_id>/golden/", view(self.golden_view), name="review_review_golden"),
            path("<int:review_id>/alias/", view(self.alias_view), name="review_review_alias"),
            *super().get_urls(),
        ]

    def _change_url(self, review_id: int) -> str:
        return reverse("admin:review_review_change", args=[review_id])

    def _require_change(self, request: HttpRequest) -> None:
        if not self.has_change_permission(request):
            raise PermissionDenied

    def refresh_view(self, request: HttpRequest) -> HttpResponse:
        """Fill the queue from the answers of the last :data:`REFRESH_DAYS` days."""
        self._require_change(request)
        result = review_queue_sync(since=timezone.now() - timedelta(days=REFRESH_DAYS))
        self.message_user(
            request,
            _("Queue refreshed: %(c)d new, %(u)d updated (answers of the last %(d)d days).")
            % {"c": result.created, "u": result.updated, "d": REFRESH_DAYS},
            messages.SUCCESS,
        )
        return redirect("admin:review_review_changelist")

    def assign_view(self, request: HttpRequest, review_id: int) -> HttpResponse:
        self._require_change(request)
        reviews_assign(review_ids=[review_id], user=request.user)  # type: ignore[arg-type]
        self.message_user(request, _("Assigned to you."), messages.SUCCESS)
        return HttpResponseRedirect(self._change_url(review_id))

    def calibration_view(self, request: HttpRequest, review_id: int) -> HttpResponse:
        self._require_change(request)
        label = request.POST.get("label", "1") == "1"
        changed, skipped = reviews_calibration_label(review_ids=[review_id], label=label)
        if skipped:
            self.message_user(request, _("Give a verdict first."), messages.ERROR)
        elif changed:
            self.message_user(
                request,
                _("The verdict is now a calibration label.") if label else _("No longer a calibration label."),
                messages.SUCCESS,
            )
        return HttpResponseRedirect(self._change_url(review_id))

    def _detail_or_404(self, review_id: int) -> Any:
        detail = review_detail(review_id=review_id)
        if detail is None:
            raise Http404
        return detail

    def golden_view(self, request: HttpRequest, review_id: int) -> HttpResponse:
        """Turn the verdict into a golden question (GET: the proposal; POST: create it)."""
        self._require_change(request)
        if not request.user.has_perm("evaluation.add_goldenquestion"):
            raise PermissionDenied
        detail = self._detail_or_404(review_id)
        review = detail.review
        category = detail.trace.understanding.qtype or "general"
        proposal = review_golden_draft(review=review, citations=detail.citations, category=category)
        set_names = golden_set_names_for_review()
        if request.method == "POST":
            form = GoldenQuestionForm(request.POST, set_names=set_names)
            if form.is_valid():
                try:
                    question, removed = review_golden_question_create(review_id=review.pk, **form.cleaned())
                except ReviewInvalid as exc:
                    form.add_error(None, str(exc))
                else:
                    note = _(" Identifiers removed: %(k)s.") % {"k": ", ".join(removed)} if removed else ""
                    self.message_user(
                        request,
                        format_html(
                            '{} <a href="{}">{}</a>.{}',
                            _("Golden question added to"),
                            reverse("admin:evaluation_goldenset_change", args=[question.golden_set_id]),
                            question.golden_set,
                            note,
                        ),
                        messages.SUCCESS,
                    )
                    return HttpResponseRedirect(self._change_url(review.pk))
        else:
            form = GoldenQuestionForm(
                set_names=set_names,
                initial={
                    "question": proposal.question,
                    "category": proposal.category,
                    "expected_urls": "\n".join(proposal.expected_urls),
                    "must_refuse": proposal.must_refuse,
                },
            )
        return self._action_page(request, detail, form, _("Turn into a golden question"), "golden", proposal.removed)

    def alias_view(self, request: HttpRequest, review_id: int) -> HttpResponse:
        """Turn the verdict into a pending alias (GET: the form; POST: propose it)."""
        self._require_change(request)
        detail = self._detail_or_404(review_id)
        review = detail.review
        if request.method == "POST":
            form = AliasForm(request.POST)
            if form.is_valid():
                try:
                    alias, created = review_alias_propose(
                        review_id=review.pk,
                        entity_id=form.cleaned_data["entity"].pk,
                        text=form.cleaned_data["text"],
                        language=form.cleaned_data["language"],
                        user=request.user,  # type: ignore[arg-type]
                    )
                except ReviewInvalid as exc:
                    form.add_error(None, str(exc))
                else:
                    message = (
                        _("Alias “%(a)s” proposed; an editor approves it in the taxonomy.")
                        if created
                        else _("Alias “%(a)s” already existed (%(s)s); linked to this review.")
                    )
                    self.message_user(
                        request, message % {"a": alias, "s": alias.get_review_state_display()}, messages.SUCCESS
                    )
                    return HttpResponseRedirect(self._change_url(review.pk))
        else:
            form = AliasForm(initial={"language": review.answer.language})
        return self._action_page(request, detail, form, _("Propose an alias"), "alias", [])

    def _action_page(
        self, request: HttpRequest, detail: Any, form: Any, title: Any, kind: str, removed: list[str]
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": title,
            "detail": detail,
            "review": detail.review,
            "form": form,
            "action_kind": kind,
            "removed": removed,
        }
        response = TemplateResponse(request, "admin/review/review/action.html", context)
        answers_viewed(request.user, [detail.answer.pk], f"review:{kind}")
        return response
