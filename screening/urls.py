from django.urls import path

from screening import views

app_name = "screening"

urlpatterns = [
    path("", views.corpus_list, name="corpus_list"),
    path("corpora/<str:name>/", views.corpus_detail, name="corpus_detail"),
    path("uploads/", views.upload_create, name="upload_create"),
    path("uploads/<int:pk>/status/", views.upload_status, name="upload_status"),
    path("uploads/<int:pk>/source/", views.upload_source, name="upload_source"),
    path("documents/<int:pk>/", views.document_detail, name="document_detail"),
    path("corpora/<str:name>/runs/", views.run_start, name="run_start"),
    path("runs/<int:pk>/", views.run_detail, name="run_detail"),
    path("runs/<int:pk>/status/", views.run_status, name="run_status"),
    path("runs/<int:pk>/retry/", views.run_retry, name="run_retry"),
    path("runs/<int:pk>/exact/", views.exact_groups, name="exact_groups"),
    path("pairs/<int:pk>/", views.pair_detail, name="pair_detail"),
    path("corpora/<str:name>/labels/", views.labels, name="labels"),
    path("corpora/<str:name>/compare/", views.compare, name="compare"),
    path("runs/<int:pk>/evaluation/", views.evaluation_page, name="evaluation"),
    path("runs/<int:pk>/audit/", views.audit_start, name="audit_start"),
    path("runs/<int:pk>/suggestion-model/", views.model_train, name="model_train"),
    path("audits/<int:pk>/status/", views.audit_status, name="audit_status"),
]
