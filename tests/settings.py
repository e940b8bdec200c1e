"""Test settings: the real ones, with their own data folder, a file-based test database (a forked RQ
work-horse must see what the test wrote) and a fast password hasher."""

import os
import tempfile

os.environ.setdefault("DEDUP_DATA_DIR", tempfile.mkdtemp(prefix="dedup-test-"))

from dedup_site.settings import *  # noqa: E402,F403
from dedup_site.settings import DATA_DIR, DATABASES  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # noqa: S303 - tests only
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}

# Nothing cached between tests: run ids repeat after rollbacks.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
