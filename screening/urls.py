from django.urls import path

from screening import views

app_name = "screening"

urlpatterns = [
    path("", views.corpus_list, name="corpus_list"),
    path("corpora/<str:name>/", views.corpus_detail, name="corpus_detail"),
    path("uploads/", views.upload_create, name="upload_create"),
    path("uploads/<int:pk>/status/", views.upload_status, name="upload_status"),
    path("documents/<int:pk>/", views.document_detail, name="document_detail"),
]
