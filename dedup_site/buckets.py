"""Write-once objects in an S3-compatible bucket, read back checked (boto3 only, no Django imports: the
second interpreter that reads a large upload uses it too).

An object is written once: `If-None-Match: *` on the write (PutObject, CompleteMultipartUpload), so a key
that exists is never replaced, plus a look before and after the write for services that ignore the header.
Large bodies go up in multipart parts as they are read; reads are ranged GETs pinned to the ETag seen when
the object was checked (`If-Match`), so an object changed after its check fails the read instead of being
used. boto3 finds the endpoint, credentials and region in the AWS SDK's own variables (AWS_ENDPOINT_URL,
AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_DEFAULT_REGION) or an instance role.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from urllib.parse import urlsplit

PART = 8 << 20  # multipart part size; S3 wants >= 5 MiB for every part but the last
BLOCK = 8 << 20  # a ranged read fetches this much at a time
CHANGED_WHILE_READ = "changed while it was read"


class BucketError(Exception):
    """The bucket could not be reached or refused the request; the message names the object and the cause."""

    crosses_processes = True  # the upload's reader in a second interpreter sends it back as it is


class ObjectMissing(BucketError):
    pass


class ObjectChanged(BucketError):
    pass


def parse_url(url: str) -> tuple[str, str]:
    """s3://bucket/prefix -> (bucket, prefix without slashes at either end)."""
    parts = urlsplit(url)
    if parts.scheme != "s3" or not parts.netloc or parts.query or parts.fragment:
        raise ValueError(f"{url!r}: expected s3://bucket or s3://bucket/prefix")
    return parts.netloc, parts.path.strip("/")


def storage_options(url: str, seconds: int) -> dict:
    """settings.STORAGES entry for a bucket URL (django-storages' S3 backend): never public (no ACL, presigned
    URLs of `seconds` only), never overwritten."""
    name, prefix = parse_url(url)
    return {"BACKEND": "storages.backends.s3.S3Storage", "OPTIONS": {
        "bucket_name": name, "location": prefix, "default_acl": None, "querystring_auth": True,
        "querystring_expire": seconds, "file_overwrite": False, "client_config": client_config()}}


def client_config():
    from botocore.config import Config

    style = os.environ.get("DEDUP_S3_ADDRESSING_STYLE", "auto")  # `path` for MinIO and most self-hosted ones
    # Attempts: the SDK's AWS_MAX_ATTEMPTS, else the standard mode's 3 (backoff with jitter on throttling, 5xx,
    # timeouts and refused connections).
    return Config(retries={"mode": "standard"}, connect_timeout=5, read_timeout=60,
                  s3={"addressing_style": style}, signature_version="s3v4")


def new_client():
    import boto3

    return boto3.session.Session().client("s3", config=client_config())


def _code(error: Exception) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


def _status(error: Exception) -> int:
    response = getattr(error, "response", None) or {}
    return int(response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0))


def _fault(error: Exception, what: str) -> BucketError:
    """One clear message for whatever boto3 raised: unreachable, denied, or another answer."""
    from botocore.exceptions import BotoCoreError, ClientError

    if isinstance(error, ClientError):
        return BucketError(f"{what}: the bucket answered {_code(error) or _status(error)}: {error}")
    if isinstance(error, BotoCoreError):
        return BucketError(f"{what}: the bucket could not be reached ({error})")
    return BucketError(f"{what}: {error!r}")


@dataclass
class Bucket:
    """A bucket and a prefix, through a boto3 client (django-storages' own, on the web and workers)."""

    name: str
    prefix: str = ""
    client: object = field(default=None, repr=False)

    def __post_init__(self):
        self.client = self.client or new_client()

    def key(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def where(self, key: str) -> str:
        return f"s3://{self.name}/{key}"

    def head(self, key: str) -> dict | None:
        from botocore.exceptions import ClientError

        try:
            return self.client.head_object(Bucket=self.name, Key=key)
        except ClientError as error:
            if _status(error) == 404 or _code(error) in ("404", "NoSuchKey", "NotFound"):
                return None
            raise _fault(error, self.where(key)) from error
        except Exception as error:
            raise _fault(error, self.where(key)) from error

    def put_once(self, key: str, chunks: Iterable[bytes], *, sha256: str = "",
                 content_type: str = "application/octet-stream") -> tuple[str, int, bool]:
        """Write the chunks to `key` unless it exists; (sha256, size, written). With `sha256` given, the bytes
        must hash to it (else nothing is written) and an existing object is left as it is."""
        existing = self.head(key) if sha256 else None
        if existing is not None:
            return sha256, existing["ContentLength"], False
        writer = _MultipartWriter(self, key, {"sha256": sha256} if sha256 else {}, content_type)
        digest, size = hashlib.sha256(), 0
        try:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                writer.write(chunk)
            if sha256 and digest.hexdigest() != sha256:
                raise ObjectChanged(f"{self.where(key)}: the file {CHANGED_WHILE_READ} (SHA-256 "
                                    f"{digest.hexdigest()}, expected {sha256}); nothing was stored")
            written = writer.close()
        except BaseException as error:
            writer.abort()
            if isinstance(error, BucketError | KeyboardInterrupt | SystemExit):
                raise
            raise _fault(error, f"writing {self.where(key)}") from error
        if written:
            self._check_written(key, size, sha256)
        return digest.hexdigest(), size, written

    def _check_written(self, key: str, size: int, sha256: str) -> None:
        """After the write, for services that ignore If-None-Match: the object is ours (size and hash tag)."""
        head = self.head(key)
        if head is None or head["ContentLength"] != size or (
                sha256 and head.get("Metadata", {}).get("sha256") != sha256):
            raise ObjectChanged(f"{self.where(key)}: another writer replaced the object while it was stored")

    def checked_hash(self, key: str) -> tuple[str, int, str]:
        """Stream the object once: (its SHA-256, its size, the ETag of what was read)."""
        from botocore.exceptions import ClientError

        digest, size = hashlib.sha256(), 0
        try:
            answer = self.client.get_object(Bucket=self.name, Key=key)
            for chunk in answer["Body"].iter_chunks(1 << 20):
                digest.update(chunk)
                size += len(chunk)
        except ClientError as error:
            if _code(error) in ("NoSuchKey", "404") or _status(error) == 404:
                raise ObjectMissing(f"{self.where(key)}: missing") from error
            raise _fault(error, f"reading {self.where(key)}") from error
        except Exception as error:
            raise _fault(error, f"reading {self.where(key)}") from error
        return digest.hexdigest(), size, answer["ETag"]

    def open_checked(self, key: str, sha256: str, size: int) -> ObjectSource:
        """The object as a source to read, after its bytes were checked against the SHA-256 they are kept by."""
        found, found_size, etag = self.checked_hash(key)
        if found != sha256 or found_size != size:
            raise ObjectChanged(f"{self.where(key)}: changed (SHA-256 is now {found}, size {found_size:,} bytes, "
                                f"stored {size:,})")
        return ObjectSource(self.name, key, etag, size)

    def presigned_get(self, key: str, filename: str, content_type: str, seconds: int) -> str:
        params = {"Bucket": self.name, "Key": key, "ResponseContentType": content_type,
                  "ResponseContentDisposition": f'attachment; filename="{filename}"'}
        return self.client.generate_presigned_url("get_object", Params=params, ExpiresIn=seconds)


class _MultipartWriter:
    """Parts go up as they fill; a body smaller than one part is one conditional PutObject."""

    def __init__(self, bucket: Bucket, key: str, metadata: dict, content_type: str):
        self.bucket, self.key, self.metadata, self.content_type = bucket, key, metadata, content_type
        self.buffer, self.parts, self.upload_id = bytearray(), [], None

    def write(self, data: bytes) -> None:
        self.buffer += data
        while len(self.buffer) >= PART:
            self._part(bytes(self.buffer[:PART]))
            del self.buffer[:PART]

    def _part(self, body: bytes) -> None:
        c = self.bucket.client
        if self.upload_id is None:
            self.upload_id = c.create_multipart_upload(Bucket=self.bucket.name, Key=self.key, Metadata=self.metadata,
                                                       ContentType=self.content_type)["UploadId"]
        number = len(self.parts) + 1
        answer = c.upload_part(Bucket=self.bucket.name, Key=self.key, UploadId=self.upload_id, PartNumber=number,
                               Body=body)
        self.parts.append({"ETag": answer["ETag"], "PartNumber": number})

    def close(self) -> bool:
        """Complete the write; False when the key already existed (the service refused to replace it)."""
        c, b = self.bucket.client, self.bucket
        if self.upload_id is None:
            return _conditional(lambda extra: c.put_object(Bucket=b.name, Key=self.key, Body=bytes(self.buffer),
                                                           Metadata=self.metadata, ContentType=self.content_type,
                                                           **extra))
        if self.buffer:
            self._part(bytes(self.buffer))
            self.buffer.clear()
        done = _conditional(lambda extra: c.complete_multipart_upload(
            Bucket=b.name, Key=self.key, UploadId=self.upload_id, MultipartUpload={"Parts": self.parts}, **extra))
        if done:
            self.upload_id = None
        return done

    def abort(self) -> None:
        if self.upload_id is not None:
            try:
                self.bucket.client.abort_multipart_upload(Bucket=self.bucket.name, Key=self.key,
                                                          UploadId=self.upload_id)
            except Exception:  # noqa: S110 - best effort: the bucket's lifecycle rule sweeps unfinished uploads
                pass
            self.upload_id = None


def _conditional(write: Callable[[dict], object]) -> bool:
    """`If-None-Match: *`; a 412 means the key exists. A service that refuses the header itself (501,
    NotImplemented) gets the write without it: the caller looked before and looks after."""
    from botocore.exceptions import ClientError

    try:
        write({"IfNoneMatch": "*"})
        return True
    except ClientError as error:
        if _status(error) == 412 or _code(error) in ("PreconditionFailed", "ConditionalRequestConflict"):
            return False
        if _status(error) == 501 or _code(error) == "NotImplemented":
            write({})
            return True
        raise


@dataclass
class ObjectSource:
    """A checked object to read: picklable (the second interpreter opens its own client), read by ranges."""

    bucket: str
    key: str
    etag: str
    size: int

    def open(self) -> io.BufferedReader:
        return io.BufferedReader(_RangeReader(self), buffer_size=1 << 16)

    def chunks(self) -> Iterator[bytes]:
        with self.open() as stream:
            yield from iter(lambda: stream.read(1 << 20), b"")


class _RangeReader(io.RawIOBase):
    """Seekable reads of an object by ranged GETs of BLOCK bytes, each `If-Match` the checked ETag; the last
    two blocks are kept, so a ZIP's directory at the end and its members in order cost a GET per block."""

    def __init__(self, source: ObjectSource):
        self.source, self.position, self.blocks = source, 0, {}
        self.client = new_client()

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.source.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def readinto(self, buffer) -> int:
        if self.position >= self.source.size:
            return 0
        number, offset = divmod(self.position, BLOCK)
        block = self._block(number)
        n = min(len(buffer), len(block) - offset)
        buffer[:n] = block[offset : offset + n]
        self.position += n
        return n

    def _block(self, number: int) -> bytes:
        if number not in self.blocks:
            from botocore.exceptions import ClientError

            s = self.source
            first, last = number * BLOCK, min(s.size, (number + 1) * BLOCK) - 1
            where = f"s3://{s.bucket}/{s.key}"
            try:
                answer = self.client.get_object(Bucket=s.bucket, Key=s.key, Range=f"bytes={first}-{last}",
                                                IfMatch=s.etag)
                data = answer["Body"].read()
            except ClientError as error:
                if _status(error) == 412 or _code(error) == "PreconditionFailed":
                    raise ObjectChanged(f"{where}: changed after its SHA-256 was checked") from error
                if _code(error) in ("NoSuchKey", "404"):
                    raise ObjectMissing(f"{where}: missing") from error
                raise _fault(error, f"reading {where}") from error
            except Exception as error:
                raise _fault(error, f"reading {where}") from error
            if len(data) != last - first + 1:
                raise ObjectChanged(f"{where}: {len(data)} bytes at {first}, expected {last - first + 1}")
            if len(self.blocks) >= 2:
                self.blocks.pop(next(iter(self.blocks)))
            self.blocks[number] = data
        return self.blocks[number]
