"""Which store holds sources and sheet exports: the local folders (the default) or a bucket named by
DEDUP_SOURCES_URL / DEDUP_EXPORTS_URL, configured as django-storages' S3 backend (settings.STORAGES
"sources" and "exports"), whose boto3 client the write-once and checked reads of `buckets` go through."""

from __future__ import annotations

from django.core.files.storage import storages

from dedup_site import buckets

SOURCES, EXPORTS = "sources", "exports"


def bucket(alias: str) -> buckets.Bucket | None:
    """The bucket for `alias`, or None when that alias keeps its files in a local folder."""
    from django.conf import settings

    if alias not in settings.STORAGES:
        return None
    storage = storages[alias]
    return buckets.Bucket(storage.bucket_name, storage.location.strip("/"), storage.connection.meta.client)

