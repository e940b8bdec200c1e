"""A suggestion model learned from a corpus's labels: validated by source family, kept as plain numbers,
put in use only when it does at least as well as the rules, and never recording a judgement."""

from __future__ import annotations

import random

import pytest

from screening.engine import learned
from screening.engine.evidence import Evidence


def fake_evidence(copy: bool, rng: random.Random) -> Evidence:
    changed = rng.uniform(0, 0.03) if copy else rng.uniform(0.2, 0.6)
    return Evidence(jaccard=rng.uniform(0.8, 1.0) if copy else rng.uniform(0.3, 0.6),
                    containment_left=rng.uniform(0.8, 1), containment_right=rng.uniform(0.8, 1),
                    same_normalised=copy and rng.random() < 0.5, changed_share=changed, moved_share=0.0,
                    length_ratio=rng.uniform(0.8, 1), languages=("en", "en"), same_source=not copy,
                    version_order="", collected_order="")


def dataset(n: int = 120, seed: int = 3):
    rng = random.Random(seed)
    labels = [i % 2 for i in range(n)]
    return [fake_evidence(bool(y), rng) for y in labels], labels, [f"family-{i // 2}" for i in range(n)]


def test_a_model_learns_copies_from_the_evidence_and_scores_itself_by_family():
    evidence, labels, families = dataset()
    model = learned.train(evidence, labels, families)
    assert model.scores["folds"] == 5 and model.scores["model_accuracy"] >= 0.95
    copy, other = fake_evidence(True, random.Random(9)), fake_evidence(False, random.Random(9))
    assert model.suggest(copy).verdict == "merge-entry" and model.suggest(copy).source == "model"
    assert model.suggest(other).verdict != "merge-entry"


def test_a_model_leaves_language_twins_to_the_rules_never_confident():
    evidence, labels, families = dataset()
    model = learned.train(evidence, labels, families)
    twin = fake_evidence(True, random.Random(4))
    twin.languages = ("en", "en-us")
    assert twin.languages_differ and model.probability(twin) > 0.95
    s = model.suggest(twin)
    assert (s.verdict, s.confidence, s.source) == ("merge-entry", 0.75, "rules") and "two language tags" in s.reasons[0]


def test_a_model_is_plain_numbers_and_round_trips_through_json():
    import json

    evidence, labels, families = dataset()
    model = learned.train(evidence, labels, families)
    again = learned.Model.from_dict(json.loads(json.dumps(model.as_dict())))
    assert again.probability(evidence[0]) == pytest.approx(model.probability(evidence[0]))


def test_too_few_labels_learn_nothing():
    evidence, labels, families = dataset(20)
    with pytest.raises(learned.NotEnoughLabels, match="a model needs 40"):
        learned.train(evidence, labels, families)


def test_a_model_over_other_features_is_refused():
    evidence, labels, families = dataset()
    data = learned.train(evidence, labels, families).as_dict()
    data["features"] = data["features"][:-1]
    with pytest.raises(ValueError, match="other features"):
        learned.Model.from_dict(data)


@pytest.mark.django_db
def test_learning_from_labels_puts_a_model_in_use_and_suggests_the_run_again(import_records, admin_client):
    from django.urls import reverse

    from review.models import Judgement
    from screening import evaluation
    from screening.models import CandidatePair, SuggestionModel
    from tests.factories import completed_run

    records, label_rows = [], ["left_id,right_id,label"]
    rng = random.Random(5)
    words = [f"w{i}" for i in range(3000)]
    for i in range(40):
        text = " ".join(rng.choice(words) for _ in range(120))
        edited = text.replace(text.split()[3], "changed", 1)
        other = " ".join(text.split()[:60] + [rng.choice(words) for _ in range(60)])
        records += [{"doc_id": f"a{i}", "source_id": f"s{i}", "language": "en", "body": text},
                    {"doc_id": f"b{i}", "source_id": f"m{i}", "language": "en", "body": edited},
                    {"doc_id": f"c{i}", "source_id": f"o{i}", "language": "en", "body": other}]
        label_rows += [f"a{i},b{i},1", f"a{i},c{i},0"]
    import_records("learn", records)
    run = completed_run("learn", near=True, threshold=0.3, storage_floor=0.2)
    label_set = evaluation.labelset_import(corpus=run.corpus, data="\n".join(label_rows).encode(),
                                           original_name="labels.csv")
    response = admin_client.post(f"{reverse('screening:model_train', args=[run.pk])}?labels={label_set.pk}")
    assert response.status_code == 302
    row = SuggestionModel.objects.get()
    assert row.in_use and row.scores["pairs"] == 80 and row.scores["model_accuracy"] >= row.scores["rules_accuracy"]
    assert set(CandidatePair.objects.filter(run=run).values_list("suggestion_source", flat=True)) == {"model"}
    assert not Judgement.objects.exists()  # a suggestion never records a judgement
    page = admin_client.get(reverse("screening:evaluation", args=[run.pk]), {"labels": label_set.pk})
    assert "Suggestions come from a model learned" in page.content.decode()
    later = completed_run("learn", near=True, threshold=0.3, storage_floor=0.2)
    assert set(later.pairs.values_list("suggestion_source", flat=True)) == {"model"}  # new runs use it too


@pytest.mark.django_db
def test_learning_from_too_few_labels_says_so(import_records, admin_client):
    from django.urls import reverse

    from screening import evaluation
    from tests.factories import seed_run

    run = seed_run(import_records)
    label_set = evaluation.labelset_import(corpus=run.corpus, data=b"left_id,right_id,label\nA,B,1\nA,C,0\n",
                                           original_name="labels.csv")
    response = admin_client.post(f"{reverse('screening:model_train', args=[run.pk])}?labels={label_set.pk}",
                                 follow=True)
    assert "no model learned: 2 labelled pairs" in response.content.decode()
