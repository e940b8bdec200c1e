"""The signed review sheet: `signing` builds and checks the CSV and its Ed25519-signed manifest (no
Django); `sheet_exports` selects the records and builds an export (the RQ job's service)."""
