from django import template

from review.forms import SheetForm

register = template.Library()


@register.filter
def get_item(mapping, key):
    return mapping.get(key, "")


@register.inclusion_tag("review/_run_sheets.html", takes_context=True)
def run_sheets(context, run):
    """The run page's review-sheet section (exports and the export form), which belongs to the review app:
    the screening app's page includes it by template, never by import."""
    return {**context.flatten(), "run": run, "exports": run.sheet_exports.select_related("exported_by"),
            "sheet_form": SheetForm()}
