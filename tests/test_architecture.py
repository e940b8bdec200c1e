"""The shape of the code, checked: what import-linter's contracts (pyproject.toml, run by `make test`) do
not say. Short functions, thin jobs, module names that tell modules apart, contracts that keep up."""

from __future__ import annotations

import ast
import pkgutil
import re
import tomllib
from collections import defaultdict
from pathlib import Path

import screening

ROOT = Path(__file__).resolve().parent.parent
APPS = ("dedup_site", "screening", "review")
# Django's and the styleguide's names, one per app or package by design; any other stem names one module.
CONVENTIONAL = {"__init__", "models", "views", "urls", "forms", "admin", "apps", "jobs", "services", "selectors"}
LONGEST_FUNCTION = 60
LONGEST_JOBS_MODULE = 120


def app_modules() -> list[Path]:
    return [p for app in APPS for p in (ROOT / app).rglob("*.py") if "migrations" not in p.parts]


def test_no_function_in_the_apps_is_longer_than_sixty_lines():
    long = []
    for path in app_modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > LONGEST_FUNCTION:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({length} lines)")
    assert long == []


def test_jobs_modules_stay_thin():
    for path in ROOT.glob("*/jobs.py"):
        assert len(path.read_text(encoding="utf-8").splitlines()) < LONGEST_JOBS_MODULE, path


def test_no_two_modules_of_the_apps_share_a_name():
    by_stem = defaultdict(list)
    for path in app_modules():
        if path.stem not in CONVENTIONAL:
            by_stem[path.stem].append(str(path.relative_to(ROOT)))
    assert {stem: paths for stem, paths in by_stem.items() if len(paths) > 1} == {}


def test_the_engine_contract_names_every_module_of_screening_outside_the_engine():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["name"].startswith("The engine imports nothing")]
    # The vocabulary is plain Python written for the engine too (tests below keep it so).
    outside = {f"screening.{m.name}" for m in pkgutil.iter_modules(screening.__path__)} - {
        "screening.engine", "screening.vocabulary"}
    assert outside <= set(contract["forbidden_modules"])


def test_the_plain_modules_load_without_django():
    """import-linter sees import statements; a package __init__ that pulled Django in would slip past it.
    So each module the contract calls plain is imported in a fresh interpreter, and Django must not load."""
    import subprocess
    import sys

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (contract,) = [c for c in config["contracts"] if c["name"].startswith("The algorithms are plain Python")]
    modules = []
    for name in contract["source_modules"]:
        path = ROOT / name.replace(".", "/")
        modules += [f"{name}.{p.stem}" for p in sorted(path.glob("*.py")) if p.stem != "__init__"] \
            if path.is_dir() else [name]
    code = ("import importlib, sys\n"
            f"for m in {modules!r}: importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'django_rq', 'rq')))")
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True,
                            env={"PATH": "/usr/bin:/bin"})
    assert result.stdout.strip() == "[]", result.stdout


# --- one vocabulary ------------------------------------------------------------------------------

VOCABULARY = ROOT / "screening" / "vocabulary.py"


def _vocabulary_words() -> set[str]:
    from screening.vocabulary import WITHDRAWN, ArbitrationReason, PairState, RunState, Verdict

    # "arbitration" is also the name of a kind of record and of a page: only the verdict's other keys count.
    return ({v.value for v in Verdict if v is not Verdict.ARBITRATION} | {s.value for s in PairState}
            | {r.value for r in RunState} | {a.value for a in ArbitrationReason} | {WITHDRAWN})


def test_no_verdict_or_state_is_spelled_outside_the_vocabulary_in_python():
    words, found = _vocabulary_words(), []
    for path in app_modules():
        if path == VOCABULARY:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in words:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.value!r}")
    assert found == [], "import it from screening.vocabulary"


def test_no_verdict_key_is_spelled_outside_the_vocabulary_anywhere():
    from screening.vocabulary import Verdict

    keys = re.compile("|".join(re.escape(v.value) for v in Verdict if "-" in v.value))
    words = "|".join(re.escape(w) for w in sorted(_vocabulary_words()))
    quoted_state = re.compile(rf"""["']({words})["']""")
    files = [*app_modules(), *(ROOT / "templates").rglob("*.html"), *(ROOT / "static").rglob("*.js"),
             *(p for app in APPS for p in (ROOT / app).rglob("migrations/*.py"))]
    found = []
    for path in files:
        if path == VOCABULARY:
            continue
        text = path.read_text(encoding="utf-8")
        if keys.search(text) or (path.suffix != ".py" and quoted_state.search(text)):
            found.append(str(path.relative_to(ROOT)))
    assert found == [], "verdict keys and states come from screening.vocabulary (json_script for page scripts)"


def test_the_vocabulary_is_plain_python():
    imports = {alias.name for node in ast.walk(ast.parse(VOCABULARY.read_text(encoding="utf-8")))
               if isinstance(node, ast.Import) for alias in node.names}
    imports |= {node.module for node in ast.walk(ast.parse(VOCABULARY.read_text(encoding="utf-8")))
                if isinstance(node, ast.ImportFrom)}
    assert imports <= {"__future__", "enum"}


# Templates Django itself renders by name: the error pages and the login view's default.
RENDERED_BY_DJANGO = {"403.html", "404.html", "500.html", "registration/login.html"}


def test_every_template_is_rendered_or_included_somewhere():
    """vulture (make lint) finds dead Python; a template nobody names is dead too."""
    sources = "\n".join(p.read_text(encoding="utf-8") for pattern in ("*.py", "*.html")
                        for app in (*APPS, "templates") for p in (ROOT / app).rglob(pattern))
    names = {str(p.relative_to(ROOT / "templates")).removeprefix("jinja2/")  # the Jinja2 backend's folder
             for p in (ROOT / "templates").rglob("*.html")}
    assert {n for n in names - RENDERED_BY_DJANGO if f'"{n}"' not in sources and f"'{n}'" not in sources} == set()


def test_no_application_code_marks_html_safe_by_hand():
    """HTML is written in templates, which escape (Django's, and Jinja2's for the hot partials: autoescape
    on). A mark_safe, a SafeString, a Markup or an {% autoescape off %} would be an escaping rule no engine
    checks on pages that show hostile text."""
    hand_made = ("mark_safe", "SafeString", "SafeText", "Markup(", "autoescape off", "autoescape false", "|safe")
    found = [f"{path.relative_to(ROOT)}: {word}"
             for path in [*app_modules(), *(ROOT / "templates").rglob("*.html")]
             for word in hand_made if word in path.read_text(encoding="utf-8")]
    assert found == []


def test_the_jinja2_partials_escape_whatever_the_settings_say():
    from django.template import engines

    from dedup_site.jinja import partial

    assert engines["jinja2"].env.autoescape is True
    rows = [(type("Row", (), {"left": "<script>x</script>", "right": "r", "left_title": "", "below": False,
                              "pass_name": "near", "score": "0.9", "cluster": None, "revision_signals": [],
                              "suggestion": "", "status": "pending", "status_label": "pending",
                              "final_verdict": "", "mine": False})(), "/p/?a=1&b=2")]
    html = str(partial("review/queue_rows.html", rows=rows, cluster_href="").__html__())
    assert "&lt;script&gt;x&lt;/script&gt;" in html and 'href="/p/?a=1&amp;b=2"' in html and "<script>" not in html
