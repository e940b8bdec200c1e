"""Which suggester a corpus's pairs get: the rules, or the newest model learned from its labels that scored
at least as well as the rules (screening.evaluation.model learns them)."""

from __future__ import annotations

from collections.abc import Callable

from screening.engine import learned, suggest
from screening.engine.evidence import Evidence
from screening.models import Corpus, SuggestionModel

Suggester = Callable[[Evidence], suggest.Suggestion]


def model_in_use(corpus: Corpus | int) -> SuggestionModel | None:
    corpus_id = corpus if isinstance(corpus, int) else corpus.pk
    return SuggestionModel.objects.filter(corpus_id=corpus_id, in_use=True).first()


def suggester_for(corpus: Corpus | int) -> Suggester:
    row = model_in_use(corpus)
    return learned.Model.from_dict(row.params).suggest if row is not None else suggest.suggest
