from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from review.sheets import signing


class Command(BaseCommand):
    help = "Check a review sheet and its signed manifest offline; say valid or exactly what is wrong."

    def add_arguments(self, parser):
        parser.add_argument("csv", type=Path)
        parser.add_argument("--manifest", type=Path, help="default: NAME.manifest.json beside the CSV")
        parser.add_argument("--public-key", type=Path,
                            help="the site's public key (PEM); default: this site's key, if it has one")
        parser.add_argument("--against-trail", action="store_true",
                            help="also check the manifest's trail hash against this site's trail of administrative "
                                 "acts (its database)")

    def handle(self, *args, **options):
        csv_path: Path = options["csv"]
        manifest_path = options["manifest"] or csv_path.with_name(csv_path.stem + ".manifest.json")
        for path in (csv_path, manifest_path):
            if not path.is_file():
                raise CommandError(f"{path}: no such file")
        try:
            manifest = signing.manifest_read(manifest_path.read_text(encoding="utf-8"))
        except (signing.ManifestError, UnicodeDecodeError) as error:
            self.stderr.write(f"INVALID: {manifest_path.name}: {error}")
            raise CommandError(f"{csv_path.name} does not verify") from None
        if options["public_key"]:
            try:
                key = signing.load_public_key(options["public_key"].read_bytes())
            except (OSError, ValueError) as error:
                raise CommandError(f"{options['public_key']}: not an Ed25519 public key in PEM form ({error}); "
                                   f"download the site's key from its signing-key page") from error
        else:
            from review.sheets import sheet_exports

            if not sheet_exports.key_path().exists():
                raise CommandError("no public key: pass --public-key FILE (the site's key, from its signing-key page)")
            key = sheet_exports.site_key().public_key()
        result = signing.verify(csv_path.read_bytes(), manifest, key)
        if not result.valid:
            for problem in result.problems:
                self.stderr.write(f"INVALID: {problem}")
            raise CommandError(f"{csv_path.name} does not verify")
        if options["against_trail"]:
            self._against_trail(csv_path, manifest)
        self.stdout.write(f"VALID: {csv_path.name}, export {manifest.get('export_id')} of run {manifest.get('run')}, "
                          f"{manifest.get('row_count')} rows, exported by {manifest.get('exported_by')} at "
                          f"{manifest.get('exported_at')}, key {signing.fingerprint(key)}")
        if "trail_sha256" in manifest:
            self.stdout.write(f"trail of administrative acts at the export: {manifest['trail_rows']} entries (to entry "
                              f"{manifest['trail_last_entry']}), SHA-256 chain {manifest['trail_sha256']}"
                              + ("; the same in this site's trail" if options["against_trail"] else ""))

    def _against_trail(self, csv_path: Path, manifest: dict) -> None:
        from review.sheets import sheet_exports

        last = manifest.get("trail_last_entry")
        rows, _, digest = sheet_exports.trail_state(upto=last if type(last) is int else 0)
        problem = signing.trail_check(manifest, rows, digest)
        if problem:
            self.stderr.write(f"INVALID: {problem}")
            raise CommandError(f"{csv_path.name} does not verify against this site's trail")
