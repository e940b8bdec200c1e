# No models of its own; this module makes Django send post_migrate to this app (roles are set up then).
