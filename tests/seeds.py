"""Known examples from the seed documents in ../shared/seeds (copied here as test data)."""

# Seed 000: three records; A and B share content, C writes the unit as mV.
SEED000_A = {
    "doc_id": "A", "source_id": "Ref1", "language": "fa", "title": "راهنمای حسگر", "body": "ولتاژ برحسب V است."
}
SEED000_B = dict(SEED000_A, doc_id="B", source_id="Ref2")
SEED000_C = dict(SEED000_A, doc_id="C", source_id="Ref3", body="ولتاژ برحسب mV است.")
SEED000 = [SEED000_A, SEED000_B, SEED000_C]
SEED000_A_HEX = (
    "5b22646f632d636f6e74656e742d7631222c226661222c22d8b1d8a7d987d986d985d8a7db8c20d8add8b3daafd8b1222c22d988d984"
    "d8aad8a7da9820d8a8d8b1d8add8b3d8a8205620d8a7d8b3d8aa2e225d"
)
SEED000_A_SHA256 = "ccc7ab9029274f98953a87f389d0562af696c08eba476c76691abcf087c7c187"
SEED000_C_SHA256 = "22ed458d4896c336eb41e817568693cb84e4e16e5ff774b4036cea444d6861d8"

# Seed 001: five Chinese texts. A/B a reformatted copy, C a revision (每周 -> 每天), D a shared template, E unrelated.
SEED001_TEXTS = {
    "A": "资料整理说明：先备份原始稿件，再登记来源与版本。每周归档一次，保留修改记录。",
    "B": "资料整理说明  先备份原始稿件，再登记来源与版本！每周归档一次；保留修改记录。",
    "C": "资料整理说明：先备份原始稿件，再登记来源与版本。每天归档一次，保留修改记录。",
    "D": "资料整理说明：本文供内部参考。摄影素材需要登记镜头焦距与拍摄位置。",
    "E": "盆栽养护记录：观察叶片状态，按照土壤湿度调整浇水频率。",
}
SEED001 = [
    {"doc_id": k, "source_id": f"demo-{k}", "version": "v1", "language": "zh", "title": "", "body": v}
    for k, v in SEED001_TEXTS.items()
]
