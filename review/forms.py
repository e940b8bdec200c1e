from typing import NamedTuple

from django import forms
from django.forms.renderers import Jinja2
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from dedup_site.http import MAX_ID
from review.models import Retained
from review.selectors import BLIND_STATUSES, REVIEWED, STATUSES
from screening.vocabulary import FINAL_VERDICTS, VERDICT_KEYS, ArbitrationReason, PairState, Verdict

KEYS = {verdict.value: key for verdict, key in VERDICT_KEYS.items()}


# Django's own Jinja2 widget templates: the same HTML as its Django-template ones (but whitespace), far cheaper
# than one Django template include per <option>. Not the site-wide FORM_RENDERER: the admin's
# widgets exist only as Django templates.
WIDGETS = Jinja2()


class QueueFilterForm(forms.Form):
    default_renderer = WIDGETS
    corpus = forms.CharField(required=False)
    run = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID, label=_("Run"))
    pass_name = forms.ChoiceField(required=False, label=_("Pass"), choices=[
        ("", _("any pass")), ("exact", _("exact")), ("near", _("near"))])
    min_score = forms.FloatField(required=False, min_value=0, max_value=1, label=_("Score from"))
    max_score = forms.FloatField(required=False, min_value=0, max_value=1, label=_("to"))
    cluster = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID, label=_("Cluster"))
    status = forms.ChoiceField(required=False, label=_("Status"))
    signals = forms.ChoiceField(required=False, label=_("Revision signals"), choices=[
        ("", _("with or without")), ("yes", _("with revision signals")), ("no", _("without"))])
    suggestion = forms.ChoiceField(required=False, label=_("Suggestion"), choices=[("", _("any suggestion"))] + [
        (v.value, format_lazy(_("suggested {verdict}"), verdict=_(v.label))) for v in FINAL_VERDICTS])
    min_confidence = forms.FloatField(required=False, min_value=0, max_value=1, label=_("Confidence at least"))
    sort = forms.ChoiceField(required=False, label=_("Order"), choices=[
        ("score", _("by score")), ("cluster", _("by cluster")), ("confidence", _("by confidence"))])
    below = forms.BooleanField(required=False, label=_("also pairs below the review threshold"))

    def __init__(self, *args, blind: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        # A blind reviewer cannot filter by what other reviewers' verdicts decided (settled, disagreement).
        statuses = BLIND_STATUSES if blind else [*STATUSES, REVIEWED]
        self.fields["status"].choices = [("", _("any status"))] + [(s, _(PairState(s).label)) for s in statuses]


class ArbitrationFilterForm(forms.Form):
    run = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID, label=_("Run"))
    why = forms.ChoiceField(required=False, label=_("Why"), choices=[("", _("any reason"))] + [
        (reason.key, _(reason.label)) for reason in ArbitrationReason])
    mine = forms.BooleanField(required=False, label=_("only the cases I may settle"))


class JudgementForm(forms.Form):
    verdict = forms.ChoiceField(choices=[(v.value, _(v.label)) for v in Verdict], widget=forms.RadioSelect)
    reason = forms.CharField(max_length=5000, strip=True, required=False)
    retained = forms.ChoiceField(choices=Retained.choices, initial=Retained.BOTH, widget=forms.RadioSelect)
    related_source = forms.CharField(max_length=200, required=False)

    def __init__(self, *args, presets: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.presets = presets or {}

    def clean(self):
        # No reason typed: the verdict's preset reason is recorded, when the corpus has one for it.
        data = super().clean()
        verdict = data.get("verdict")
        if verdict and not data.get("reason"):
            if not self.presets.get(verdict):
                self.add_error("reason", f"a reason is required for {verdict} (it has no preset reason)")
            else:
                data["reason"] = self.presets[verdict]
        return data


class ArbitrationForm(JudgementForm):
    verdict = forms.ChoiceField(choices=[(v.value, _(v.label)) for v in FINAL_VERDICTS], widget=forms.RadioSelect)


class Radio(NamedTuple):
    value: str
    label: str
    id: str
    checked: bool


def radios(form_class: type[forms.Form], name: str, checked: str = "") -> tuple[Radio, ...]:
    """A radio field's buttons as the verdict bar draws them, with the ids Django's RadioSelect gives them:
    building a form and its bound widgets for every pair page cost more than the buttons."""
    choices = form_class.base_fields[name].choices
    # The label stays lazy: translated when the page draws it, in its language.
    return tuple(Radio(str(value), label, f"id_{name}_{i}", str(value) == checked)
                 for i, (value, label) in enumerate(choices))


# The pair page's bar: no verdict picked, "both" retained.
VERDICT_RADIOS = radios(JudgementForm, "verdict")
RETAINED_RADIOS = radios(JudgementForm, "retained", checked=Retained.BOTH)


class SignForm(forms.Form):
    password = forms.CharField(widget=forms.PasswordInput, help_text=_("your own password, to confirm it is you"))


class SheetForm(forms.Form):
    since = forms.DateField(required=False, help_text=_("reviewed on or after (UTC date)"))
    until = forms.DateField(required=False, help_text=_("reviewed on or before"))
    reviewer = forms.CharField(required=False, max_length=150, help_text=_("only this reviewer's judgements"))
    settled_only = forms.BooleanField(required=False, label=_("settled pairs only"))


class ReviewPolicyForm(forms.Form):
    allow_self_arbitration = forms.BooleanField(
        required=False, label=_("Allow self-arbitration"),
        help_text=_("an arbiter may settle a disagreement they took part in (for one-person teams); such decisions "
                  "are marked self-arbitrated on the pair page and in the review sheet"))

    def __init__(self, *args, presets: dict[str, str], **kwargs):
        super().__init__(*args, **kwargs)
        # One preset reason per verdict: what a judgement records when the reviewer types none.
        for verdict, text in presets.items():
            self.fields[f"preset_{verdict}"] = forms.CharField(
                label=_(Verdict(verdict).label), max_length=500, required=False, initial=text,
                help_text=_("left empty, a reason must be typed for this verdict"))

    def presets(self) -> dict[str, str]:
        return {name.removeprefix("preset_"): value for name, value in self.cleaned_data.items()
                if name.startswith("preset_")}
