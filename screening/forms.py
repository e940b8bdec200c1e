from django import forms
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from screening.engine.minhash import NUM_PERM_RANGE, THRESHOLD_RANGE, NearConfig
from screening.engine.normalize import DEFAULT_POLICY, POLICIES
from screening.engine.shingle import ShingleSpec
from screening.runs.lifecycle import RunOptions, RunRefused


class UploadForm(forms.Form):
    corpus = forms.CharField(max_length=64, help_text=_("An existing corpus, or a new name to create one."))
    file = forms.FileField(help_text=_("ZIP of .txt files (optional manifest.csv), .txt, .jsonl or .csv"))
    language = forms.CharField(
        max_length=32, required=False,
        help_text=_("Language tag for records that do not give one (required for .txt and ZIP members), e.g. fa, zh."),
    )


DEFAULTS, RUN = NearConfig(), RunOptions()


class RunForm(forms.Form):
    """Starting a screening run. The defaults shown are NearConfig's and RunOptions' (one source for the form,
    the command and the service), and RunOptions checks what is asked."""

    exact = forms.BooleanField(required=False, initial=True, label=_("Exact pass (doc-content-v1)"))
    near = forms.BooleanField(required=False, initial=True, label=_("Near pass (MinHash + LSH)"))
    policy = forms.ChoiceField(choices=(), initial=DEFAULTS.policy, required=False, label=_("Normalisation policy"))
    shingle = forms.CharField(initial=DEFAULTS.shingle, required=False,
                              help_text=_("char:K (3, 5, 7…) or word:K (1–5)"))
    num_perm = forms.IntegerField(initial=DEFAULTS.num_perm, min_value=NUM_PERM_RANGE[0],
                                  max_value=NUM_PERM_RANGE[1], label=_("Permutations"), required=False)
    threshold = forms.FloatField(initial=DEFAULTS.threshold, min_value=THRESHOLD_RANGE[0],
                                 max_value=THRESHOLD_RANGE[1], label=_("Review threshold"), required=False)
    bands = forms.IntegerField(required=False, min_value=1, max_value=1024,
                               help_text=_("leave empty to choose b × r for the threshold"))
    rows = forms.IntegerField(required=False, min_value=1, max_value=1024)
    incremental = forms.BooleanField(
        required=False, initial=False, label=_("Incremental"),
        help_text=_("keep this corpus's LSH index for the configuration: only documents not yet indexed are signed "
                  "and looked up; the pairs are those of a full run"))
    reviews_required = forms.IntegerField(initial=RUN.reviews_required, min_value=1, max_value=10, required=False,
                                          help_text=_("independent judgements each pair needs"))
    storage_floor = forms.FloatField(initial=DEFAULTS.storage_floor, min_value=0.0, max_value=1.0, required=False,
                                     help_text=_("verified pairs below this Jaccard are counted, not stored"))

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # The name in a left-to-right isolate: in a right-to-left page its hyphens and the description's full stop
        # stay where they belong.
        self.fields["policy"].choices = [(p.name, f"\u2066{p.name}\u2069 — {gettext(p.description)}")
                                         for p in POLICIES.values()]

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        # An empty field takes its default, the value shown on the form.
        value = {name: data.get(name) if data.get(name) not in (None, "") else field.initial
                 for name, field in self.fields.items()}
        config = NearConfig(policy=value["policy"], shingle=value["shingle"], num_perm=value["num_perm"],
                            threshold=value["threshold"], bands=value["bands"], rows=value["rows"],
                            storage_floor=value["storage_floor"])
        try:
            data["options"] = RunOptions(exact=bool(data.get("exact")), near=bool(data.get("near")),
                                         incremental=bool(data.get("incremental")),
                                         reviews_required=value["reviews_required"], near_config=config).checked()
        except RunRefused as error:
            raise forms.ValidationError(str(error)) from error
        return data


class PolicyPreviewForm(forms.Form):
    policy = forms.ChoiceField(choices=(), initial=DEFAULT_POLICY)
    shingle = forms.CharField(initial="char:5")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["policy"].choices = [(p.name, p.name) for p in POLICIES.values()]

    def clean_shingle(self):
        try:
            return ShingleSpec.parse(self.cleaned_data["shingle"])
        except ValueError as error:
            raise forms.ValidationError(str(error)) from error


class LabelsForm(forms.Form):
    name = forms.CharField(max_length=100, required=False, help_text=_("default: the file name"))
    file = forms.FileField(help_text=_("CSV: left_id,right_id,label[,reason][,split]; label 1 = copy to merge-review"))
