from django import forms


class UploadForm(forms.Form):
    corpus = forms.CharField(max_length=64, help_text="An existing corpus, or a new name to create one.")
    file = forms.FileField(help_text="ZIP of .txt files (optional manifest.csv), .txt, .jsonl or .csv")
    language = forms.CharField(
        max_length=32, required=False,
        help_text="Language tag for records that do not give one (required for .txt and ZIP members), e.g. fa, zh.",
    )
