"""Django's createsuperuser and changepassword, named in the trail of administrative acts: their acts are
trailed by dedup_site.trail_signals as any act at the shell is, under the command's name. An app of its own,
listed before django.contrib.auth, because a command is taken from the first app that has it (dedup_site comes
last: its post_migrate hook needs every app's permissions)."""
