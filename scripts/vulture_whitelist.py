# Names vulture (`make lint`) cannot see used: each is read by Django, the database, a template, a string in
# settings or a library calling back. A name here is not code: vulture only counts it as used.
# ruff skips this file (pyproject: extend-exclude).

# Named by a string in settings (MIDDLEWARE, RQ's worker class, a permission holder) or called by Django.
refuse_unstorable_text
user_language
environment  # the Jinja2 backend's, named in TEMPLATES
ShownTemplates  # the Django template backend, named in TEMPLATES
DedupWorker
ReviewPermissions
_._get_session_from_db
_._session_key
_.redirect_request  # urllib's redirect handler (bench/load.py)

# Model fields: written and read by the database, the admin and the migrations.
set_at
issued_by
issued_at
used_at
updated_by
updated_at
skipped_at
created_by
stored_at
uploaded_by
uploaded_at
program_version
position
from_run
suggestion_source
suggestion_reasons

# Form fields and fields of the pages' rows that only a template reads.
normalization
left_title
right_title
suggested_split
too_large

# Tests: jobs RQ runs by dotted name, attributes Django's test client and zipfile read, context managers
# kept only for their effect.
stop_redis_for
frozen_objects
warm_until_told  # a worker warm-up named by setting in tests/test_upload.py
_.raise_request_exception
_.compress_type
_.last_login
no_chmod

# The bucket tests' HTTP proxy (http.server calls do_<METHOD> and log_message) and the file object boto3
# reads a multipart part through (io's protocol).
do_GET
do_PUT
do_POST
do_HEAD
do_DELETE
log_message
seekable
tell
readinto

# The REST API: classes, methods and attributes Django REST framework and drf-spectacular look up by name
# (settings' DEFAULT_* classes, a serializer's declared fields, an exception's defaults, a renderer's media).
BearerScheme
target_class
ObjectJSONParser
_.accepted_media_type
to_representation
rejected
mismatch_count  # the upload's language_check (review.api.serializers.LanguageCheck)
get_security_definition
Schema
get_operation_id
has_permission
default_detail
default_code
authenticate
authenticate_header
TokenRateThrottle
allow_request
detail
lease_expires
left_doc_id
right_doc_id
charset
media_type
_password  # the flag Django clears when a re-hash is no new password (dedup_site.auth.password_matches)
drop_triggers  # called by dedup_site 0005 and 0006 (migrations are not scanned)
