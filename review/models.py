from django.db import models


class ReviewPermissions(models.Model):
    """Holds the review permissions until the review models land (no table)."""

    class Meta:
        managed = False
        default_permissions = ()
        permissions = [
            ("review_pair", "Can review candidate pairs"),
            ("arbitrate_pair", "Can arbitrate disagreements"),
        ]
