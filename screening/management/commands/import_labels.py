from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from dedup_site.trail import command_line
from screening import evaluation
from screening.models import Corpus


class Command(BaseCommand):
    help = "Import a labels CSV (left_id,right_id,label[,reason][,split]) for a corpus. All or nothing."

    def add_arguments(self, parser):
        parser.add_argument("corpus")
        parser.add_argument("path", type=Path)
        parser.add_argument("--name", default="", help="label set name (default: the file name)")

    def handle(self, *args, **options):
        try:
            corpus = Corpus.objects.get(name=options["corpus"])
        except Corpus.DoesNotExist as error:
            raise CommandError(f"no corpus named {options['corpus']!r}") from error
        path: Path = options["path"]
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        try:
            with command_line("import_labels"):
                label_set = evaluation.labelset_import(corpus=corpus, data=path.read_bytes(),
                                                       original_name=path.name, name=options["name"])
        except evaluation.LabelsRejected as error:
            for problem in error.problems:
                self.stderr.write(problem)
            count = len(error.problems)
            raise CommandError(f"{path.name} rejected: {count} problem(s); no label was stored") from error
        for notice in label_set.notices:
            self.stdout.write(f"note: {notice}")
        self.stdout.write(f"label set {label_set.name!r}: {label_set.size} pairs ({label_set.positives} positive) "
                          f"in corpus {corpus.name}")
