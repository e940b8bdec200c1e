"""Django's database sessions, with the read every request makes kept compiled (dedup_site.prepared)."""

from __future__ import annotations

from django.contrib.sessions.backends import db
from django.contrib.sessions.models import Session
from django.utils import timezone

from dedup_site.prepared import Prepared

# By key alone, the expiry checked here: the same answer as Django's `expire_date > now` in SQL, with no
# clock value compiled into the kept query.
_SESSION = Prepared(lambda key: Session.objects.filter(session_key=key).values_list(
    "session_key", "session_data", "expire_date"), kinds="s")


class SessionStore(db.SessionStore):
    def _get_session_from_db(self):
        row = _SESSION.first(self.session_key) if self.session_key else None
        if row is None or row[2] <= timezone.now():
            self._session_key = None
            return None
        return Session(session_key=row[0], session_data=row[1], expire_date=row[2])
