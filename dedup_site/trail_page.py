"""The Trail page: the administrative acts (dedup_site.trail), newest first, filtered and paged, for admins."""

from __future__ import annotations

from django import forms
from django.core.paginator import Paginator
from django.shortcuts import render
from django.urls import path
from django.utils.translation import gettext, gettext_noop
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_GET

from dedup_site import trail
from dedup_site.messages import form_errors
from dedup_site.roles import VIEW_TRAIL, permission_required

PAGE = 50


class TrailFilterForm(forms.Form):
    """The trail's filters, for the page and the API alike."""

    actor = forms.CharField(required=False, max_length=150, label=_("Who"),
                            help_text=_("a user name, or a server command (e.g. api_token)"))
    action = forms.ChoiceField(required=False, label=_("Act"), help_text=_("one of the trail's act keys"),
                               choices=[("", _("any")), *trail.ACTIONS.items()])
    target_type = forms.ChoiceField(required=False, label=_("On"), help_text=_("account, group, corpus or run"),
                                    choices=[("", _("any")), *trail.TARGETS.items()])
    target = forms.CharField(required=False, max_length=300, label=_("Name or id"),
                             help_text=_("the account's, group's or corpus's name then, or its id"))
    since = forms.DateField(required=False, label=_("First day"), help_text=_("YYYY-MM-DD (UTC)"))
    until = forms.DateField(required=False, label=_("Last day"), help_text=_("YYYY-MM-DD (UTC), included"))

    def clean(self):
        data = super().clean()
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            raise forms.ValidationError(_("the first day comes after the last"))
        return data

    def trail_filter(self) -> trail.TrailFilter:
        return trail.TrailFilter(**{k: v for k, v in self.cleaned_data.items() if v not in (None, "")})


@require_GET
@permission_required(VIEW_TRAIL)
def trail_list(request):
    form = TrailFilterForm(request.GET)
    if form.is_valid():
        flt = form.trail_filter()
    else:
        form_errors(request, form)
        flt = trail.TrailFilter()
    query = request.GET.copy()
    query.pop("page", None)
    page = Paginator(trail.trail_entries(flt), PAGE).get_page(request.GET.get("page"))
    rows = [{"entry": e, "act": trail.ACTIONS.get(e.action, e.action), "on": trail.TARGETS.get(e.target_type, ""),
             "changes": trail.changes(e),
             # A command names itself (api_token); one that does not is named in the reader's words.
             "command": gettext(UNNAMED) if e.command == trail.UNNAMED_COMMAND else e.command} for e in page]
    return render(request, "trail/list.html", {
        "form": form, "page": page, "rows": rows, "actors": trail.trail_actors(), "query": query.urlencode(),
        "filtered": flt != trail.TrailFilter()})


UNNAMED = gettext_noop("shell or script")  # trail.UNNAMED_COMMAND, as stored

app_name = "trail"
urlpatterns = [path("", trail_list, name="list")]
