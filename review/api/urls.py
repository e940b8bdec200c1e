"""/api/v1/: the REST API, its OpenAPI schema and its docs page (Swagger UI from our own static files)."""

from django.conf import settings
from django.contrib.auth.decorators import login_not_required, login_required
from django.urls import path, re_path
from django.views.decorators.csp import csp_override
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView
from rest_framework.authentication import SessionAuthentication

from dedup_site.api_auth import BearerTokenAuthentication
from review.api import views

app_name = "api"


def api(view):
    """Token calls need no log-in page or CSRF (DRF exempts them, and says so to LoginRequiredMiddleware too):
    DRF checks the token, 401 without one."""
    return login_not_required(view)


schema = SpectacularAPIView.as_view(authentication_classes=[BearerTokenAuthentication, SessionAuthentication])
# The docs page is for people signed in to the site (their session); Swagger UI styles its own elements
# inline, so this page alone allows inline styles (scripts still only from our own static files).
DOCS_CSP = {**settings.SECURE_CSP, "style-src": [*settings.SECURE_CSP["style-src"], "'unsafe-inline'"]}
docs = login_required(csp_override(DOCS_CSP)(
    SpectacularSwaggerSplitView.as_view(url_name="api:schema", authentication_classes=[SessionAuthentication])))

urlpatterns = [
    path("schema/", api(schema), name="schema"),
    path("docs/", docs, name="docs"),
    path("corpora/", api(views.corpora), name="corpora"),
    path("corpora/<int:pk>/", api(views.corpus_detail), name="corpus"),
    path("corpora/<int:pk>/uploads/", api(views.upload_create), name="upload_create"),
    path("corpora/<int:pk>/labels/", api(views.labels), name="labels"),
    path("uploads/<int:pk>/", api(views.upload_detail), name="upload"),
    path("runs/", api(views.run_create), name="runs"),
    path("runs/<int:pk>/", api(views.run_detail), name="run"),
    path("runs/<int:pk>/pairs/", api(views.run_pairs), name="run_pairs"),
    path("runs/<int:pk>/next/", api(views.run_next), name="run_next"),
    path("runs/<int:pk>/decisions/", api(views.run_decisions), name="run_decisions"),
    path("runs/<int:pk>/evaluation/", api(views.run_evaluation), name="run_evaluation"),
    path("runs/<int:pk>/sheets/", api(views.sheet_create), name="sheet_create"),
    path("pairs/<int:pk>/", api(views.pair_detail), name="pair"),
    path("pairs/<int:pk>/lease/", api(views.pair_lease), name="pair_lease"),
    path("pairs/<int:pk>/judgements/", api(views.judgements), name="judgements"),
    path("pairs/<int:pk>/arbitrations/", api(views.arbitrations), name="arbitrations"),
    path("arbitrations/", api(views.arbitration_cases), name="arbitration_cases"),
    path("sheets/<int:pk>/", api(views.sheet_detail), name="sheet"),
    path("sheets/<int:pk>/<str:part>/", api(views.sheet_file), name="sheet_file"),
    path("trail/", api(views.trail), name="trail"),
    re_path(r"", api(views.not_found)),  # last: every other address under /api/v1/ is the API's JSON 404
]
