from django.apps import AppConfig


class AuthCommandsConfig(AppConfig):
    name = "dedup_site.auth_commands"
    label = "dedup_auth_commands"
