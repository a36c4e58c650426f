"""Forms of the review screens: the verdict, the bulk-action bar, a golden question and an alias
made from a review. They validate input only; the views hand it to the services."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.admin.helpers import ActionForm
from django.utils.translation import gettext_lazy as _

from evaluation.review.models import Review, Verdict
from evaluation.review.services import REVIEW_GOLDEN_SET
from taxonomy.models import Entity


class ReviewVerdictForm(forms.ModelForm):
    """The verdict on the review page: both fields required (a verdict always has a reason)."""

    verdict = forms.ChoiceField(
        label=_("verdict"),
        choices=Verdict.choices,
        widget=forms.RadioSelect,
        help_text=_(
            "Good answer / wrong answer / unsafe: about the text the patient got or the refused draft. "
            "Wrongly or rightly refused: about the decision to refuse."
        ),
    )
    reason = forms.CharField(
        label=_("reason"),
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text=_("Why: what is right or wrong, in a sentence or two. Kept with the verdict."),
    )

    class Meta:
        model = Review
        fields = ["verdict", "reason"]


class ReviewActionForm(ActionForm):
    """The list's action bar with the verdict and reason used by "Mark verdict"."""

    verdict = forms.ChoiceField(
        label=_("verdict (for “Mark verdict”)"), choices=[("", "---------"), *Verdict.choices], required=False
    )
    reason = forms.CharField(
        label=_("reason"), required=False, widget=forms.TextInput(attrs={"size": 40, "placeholder": _("why")})
    )


def _lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


class GoldenQuestionForm(forms.Form):
    """A golden question from a reviewed answer. The question is stored de-identified."""

    golden_set = forms.ChoiceField(label=_("golden set"))
    new_set = forms.SlugField(
        label=_("or a new set"), required=False, help_text=_("Lower-case letters, digits and hyphens.")
    )
    question = forms.CharField(
        label=_("question"),
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text=_("Personal identifiers are replaced by placeholders ([PERSON], [PHONE], …) before it is stored."),
    )
    category = forms.CharField(label=_("category"), max_length=40, initial="general")
    expected_urls = forms.CharField(
        label=_("expected urls"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "cols": 80}),
        help_text=_("Pages a good answer comes from, one per line."),
    )
    expected_entities = forms.CharField(
        label=_("expected entities"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 2, "cols": 80}),
        help_text=_("Names a good answer mentions, one per line."),
    )
    must_refuse = forms.BooleanField(label=_("a correct system refuses this question"), required=False)

    def __init__(self, *args: Any, set_names: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        names = sorted({*set_names, REVIEW_GOLDEN_SET})
        field = self.fields["golden_set"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(n, n) for n in names]
        field.initial = REVIEW_GOLDEN_SET

    def cleaned(self) -> dict[str, Any]:
        """The service's keyword arguments."""
        data = self.cleaned_data
        return {
            "golden_set_name": data.get("new_set") or data["golden_set"],
            "question": data["question"],
            "category": data["category"],
            "expected_urls": _lines(data.get("expected_urls") or ""),
            "expected_entities": _lines(data.get("expected_entities") or ""),
            "must_refuse": bool(data.get("must_refuse")),
        }


class EntityChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: Entity) -> str:
        return f"{obj.name} ({obj.get_type_display()})"


class AliasForm(forms.Form):
    """A pending alias from a reviewed answer: the words patients use, and the entity they name."""

    text = forms.CharField(
        label=_("alias"), max_length=300, help_text=_("The words the patient used, e.g. “suikerziekte”.")
    )
    entity = EntityChoiceField(
        label=_("entity"), queryset=Entity.objects.order_by("type", "name"), help_text=_("What the words name.")
    )
    language = forms.CharField(label=_("language"), max_length=8)
