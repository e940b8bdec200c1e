from django.urls import path

from review import views

app_name = "review"

urlpatterns = [
    path("", views.queue, name="queue"),
    path("next/", views.next_pair, name="next"),
    path("pairs/<int:pk>/", views.pair_review, name="pair"),
    path("pairs/<int:pk>/judge/", views.judge, name="judge"),
    path("pairs/<int:pk>/skip/", views.skip, name="skip"),
    path("pairs/<int:pk>/lease/", views.lease, name="lease"),
    path("leases/release/", views.leases_release, name="leases_release"),
    path("undo/", views.undo, name="undo"),
    path("runs/<int:run_id>/clusters/<int:number>/", views.cluster, name="cluster"),
    path("runs/<int:run_id>/clusters/<int:number>/decide/", views.cluster_decide, name="cluster_decide"),
    path("runs/<int:run_id>/clusters/<int:number>/hold/", views.cluster_hold, name="cluster_hold"),
    path("runs/<int:run_id>/clusters/next/", views.cluster_next, name="cluster_next"),
    path("bulk/", views.bulk_preview, name="bulk_preview"),
    path("bulk/confirm/", views.bulk_confirm, name="bulk_confirm"),
    path("arbitration/", views.arbitration_queue, name="arbitration_queue"),
    path("arbitration/next/", views.arbitration_next, name="arbitration_next"),
    path("arbitration/<int:pk>/", views.arbitrate, name="arbitrate"),
    path("runs/<int:run_id>/dashboard/", views.dashboard, name="dashboard"),
    path("corpora/<str:name>/settings/", views.policy, name="policy"),
    path("runs/<int:pk>/labels-from-verdicts/", views.labels_from_verdicts, name="labels_from_verdicts"),
    path("sign/", views.sign, name="sign"),
    path("runs/<int:run_id>/sheets/", views.sheet_start, name="sheet_start"),
    path("sheets/<int:pk>/status/", views.sheet_status, name="sheet_status"),
    path("sheets/<int:pk>/<str:part>/", views.sheet_download, name="sheet_download"),
    path("signing-key/", views.signing_key, name="signing_key"),
]
