"""Settings for EI Studio, read from the environment once, here.

Environment variables: DATABASE_URL, SECRET_KEY, DEBUG, ALLOWED_HOSTS, CSRF_TRUSTED_ORIGINS,
SECURE_SSL_REDIRECT, STATIC_ROOT, CACHE_BACKEND, LOGIN_MAX_FAILURES, LOGIN_LOCKOUT_SECONDS, and the
others read below. docs/deploy.md lists the production settings.
"""

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.utils.csp import CSP
from django.utils.translation import gettext_lazy as _

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean environment variable ("1", "true", "yes", "on" are true)."""
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


DEBUG = env_bool("DEBUG", False)
# Without DATABASE_URL the app runs on the local SQLite file of `make run`: a development set-up, where commands
# such as `manage.py import_items` work as the README shows them, with no secret to set. A server always names its
# database (`make serve` requires DATABASE_URL), and then a missing SECRET_KEY is refused.
LOCAL_DATABASE = "DATABASE_URL" not in os.environ
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY and (DEBUG or LOCAL_DATABASE):
    SECRET_KEY = "django-insecure-local-development-only"
if not SECRET_KEY:
    raise RuntimeError("SECRET_KEY must be set when DEBUG is off (set DEBUG=1 for local development).")

ALLOWED_HOSTS = [h.strip() for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h.strip()]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "core.apps.StudioAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "core",
    # Before django_tasks_db: llm's db_worker command (reconnects after database outages) replaces its own.
    "llm",
    "django_tasks_db",
    "annotation.items",
    "annotation.screening",
    "annotation.releases",
    "annotation.labelling",
    "calibration",
    "evaluation",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "core.storage.StaticFilesMiddleware",
    "core.inputs.CookieNulMiddleware",  # before the session is read: a NUL in a cookie would reach the database
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.middleware.UserLanguageMiddleware",
    # Before any view, in the user's language: a NUL in the address, query or form (400) and a form body over
    # DATA_UPLOAD_MAX_MEMORY_SIZE (413) are refused with a page, or JSON on /api/.
    "core.inputs.InputLimitsMiddleware",
    "core.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as axes asks: answers its lockouts (core.throttle)
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.roles",
                "core.context_processors.currency",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    # A database host that drops packets must not hang a worker's reconnect until the TCP timeout.
    DATABASES["default"].setdefault("OPTIONS", {}).setdefault("connect_timeout", 10)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Django's SQLite backend with a flush that does not fire the triggers guarding frozen releases.
    DATABASES["default"]["ENGINE"] = "core.backends.sqlite3"
    # WAL: readers (a page, a sign-in's first reads) never wait for a writer, nor a writer for them; a writer waits up
    # to SQLITE_BUSY_TIMEOUT seconds for another's transaction (IMMEDIATE: it takes the write lock when it begins, so
    # waiting is all it ever does, never a failed lock upgrade). Writes keep their transactions short: long work (a
    # calibration report) runs in a worker and stores its result in one short transaction.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {
            "timeout": float(os.environ.get("SQLITE_BUSY_TIMEOUT", "30")),
            "transaction_mode": "IMMEDIATE",
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL",
        }
    )

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

PASSWORD_HASHERS = [
    "django.contrib.auth.hashers.Argon2PasswordHasher",
    "django.contrib.auth.hashers.PBKDF2PasswordHasher",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"
LOGIN_MAX_FAILURES = int(os.environ.get("LOGIN_MAX_FAILURES", "5"))
LOGIN_LOCKOUT_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_SECONDS", "900"))

# The cache holds the API's request throttles and the figures a worker draws in advance, so the web processes and
# the workers must share it, in development too: the database cache (its table is made by `manage.py
# createcachetable`, which `make serve` and `make run` run). "locmem" keeps it per process (the tests use it).
CACHE_BACKEND = os.environ.get("CACHE_BACKEND", "database")
if CACHE_BACKEND not in {"database", "locmem"}:
    raise RuntimeError(f"CACHE_BACKEND must be 'database' or 'locmem', not {CACHE_BACKEND!r}.")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": "eistudio_cache"}
        if CACHE_BACKEND == "database"
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
# Without DEBUG, static files are collected (`make serve` runs collectstatic) with content hashes in their names
# and gzip/brotli twins, and WhiteNoise serves them with far-future caching. Not collected yet: pages still work
# (plain names, served from the source folders) and `check --deploy` says to run collectstatic.
STATIC_COLLECTED = (STATIC_ROOT / "staticfiles.json").exists()
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage" if DEBUG else "core.storage.CollectedStaticStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG or not STATIC_COLLECTED
WHITENOISE_MANIFEST_STRICT = False

SPECTACULAR_SETTINGS = {
    "TITLE": "EI Studio API",
    "DESCRIPTION": "Bilingual emotional-intelligence benchmark items, revisions and taxonomy.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # One schema name per choice set (several models call theirs "status").
    "ENUM_NAME_OVERRIDES": {
        "ItemStatusEnum": "annotation.items.models.items.Item.Status",
        "CallStatusEnum": "llm.models.CallStatus",
        "RunStatusEnum": "llm.models.RunStatus",
        "RunItemStatusEnum": "llm.models.RunItemStatus",
        "ReleaseStatusEnum": "annotation.releases.models.Release.Status",
        "RoundStatusEnum": "annotation.screening.models.ScreeningRound.Status",
        "RunModeEnum": "llm.models.RunMode",
        "DecisionEnum": "annotation.screening.models.DECISIONS",
        "ReplyAuditDecisionEnum": "annotation.items.services.replysets.AUDIT_DECISIONS",
        "ItemImportStatusEnum": "annotation.items.models.imports.ItemImportJob.Status",
    },
}

TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}

# The currency every endpoint's prices are given in (ISO 4217), shown next to every cost and budget.
PRICE_CURRENCY = os.environ.get("PRICE_CURRENCY", "USD")

# Upper bounds for untrusted text: a field longer than this is refused on import and edit.
ITEM_MAX_TEXT_CHARS = int(os.environ.get("ITEM_MAX_TEXT_CHARS", "20000"))
IMPORT_MAX_LINE_BYTES = int(os.environ.get("IMPORT_MAX_LINE_BYTES", "1000000"))
# The import page imports a file up to this size at once; a larger one goes to a background worker (an import job
# with its own page), so that no request outlives the web server's timeout. The API always queues a job.
IMPORT_SYNC_MAX_BYTES = int(os.environ.get("IMPORT_SYNC_MAX_BYTES", "1000000"))
# Release validation: TF-IDF cosine above which two items count as near-duplicates, and balance limits.
NEAR_DUPLICATE_THRESHOLD = float(os.environ.get("NEAR_DUPLICATE_THRESHOLD", "0.85"))
RELEASE_MAX_DOMAIN_SHARE = float(os.environ.get("RELEASE_MAX_DOMAIN_SHARE", "0.4"))
RELEASE_MIN_VALENCE_SHARE = float(os.environ.get("RELEASE_MIN_VALENCE_SHARE", "0.1"))
# A draft release of up to this many entries is checked in the request when its kept checklist is out of date;
# a larger one by a worker, while its page shows the previous result (annotation/releases/drafts.py).
RELEASE_CHECK_INLINE_ENTRIES = int(os.environ.get("RELEASE_CHECK_INLINE_ENTRIES", "1000"))

SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
# Behind a TLS proxy, gunicorn (make serve) trusts X-Forwarded-Proto from the addresses in FORWARDED_ALLOW_IPS.
SESSION_COOKIE_SECURE = not DEBUG
CSRF_COOKIE_SECURE = not DEBUG
# No script reads the csrftoken cookie: pages send the token from the template (htmx's hx-headers on <body>, the
# forms' hidden field), so the cookie is kept from scripts too.
CSRF_COOKIE_HTTPONLY = True
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = not DEBUG
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Content-Security-Policy: only this site's own scripts, styles and images (inline SVG charts included); no inline
# scripts, event-handler attributes or style attributes anywhere (tests/browser/test_csp.py checks every page).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "font-src": [CSP.SELF],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}

# --- LLM endpoints and background runs (llm app) ---------------------------------------------------------

# How a run is split and leased: a worker holds a chunk for LLM_LEASE_SECONDS and renews it while alive, so a
# killed worker's chunk is taken over by another once the lease expires.
LLM_CHUNK_SIZE = int(os.environ.get("LLM_CHUNK_SIZE", "50"))
LLM_LEASE_SECONDS = float(os.environ.get("LLM_LEASE_SECONDS", "60"))
LLM_TASKS_PER_RUN = int(os.environ.get("LLM_TASKS_PER_RUN", "4"))
LLM_FLUSH_SECONDS = float(os.environ.get("LLM_FLUSH_SECONDS", "0.25"))
LLM_RETRY_BACKOFF_SECONDS = float(os.environ.get("LLM_RETRY_BACKOFF_SECONDS", "0.5"))
LLM_RETRY_BACKOFF_MAX_SECONDS = float(os.environ.get("LLM_RETRY_BACKOFF_MAX_SECONDS", "30"))
LLM_MAX_PARSE_RETRIES = int(os.environ.get("LLM_MAX_PARSE_RETRIES", "2"))
LLM_RUN_MAX_PROMPTS = int(os.environ.get("LLM_RUN_MAX_PROMPTS", "200000"))
LLM_SIMULATOR_URL = os.environ.get("LLM_SIMULATOR_URL", "http://127.0.0.1:8765/v1")
# A run whose heartbeat is older than this has no live worker: workers queue it again on their own.
LLM_STALL_SECONDS = float(os.environ.get("LLM_STALL_SECONDS", str(2 * LLM_LEASE_SECONDS + 10)))
# How long a worker keeps reconnecting to an unreachable database before it exits (non-zero) for a restart.
LLM_WORKER_DB_RETRY_SECONDS = float(os.environ.get("LLM_WORKER_DB_RETRY_SECONDS", "300"))
# Names an endpoint may give for its API key variable (Django settings and variables read here never qualify).
LLM_API_KEY_ENV_PATTERN = os.environ.get("LLM_API_KEY_ENV_PATTERN", r"^[A-Z][A-Z0-9_]*_API_KEY$")
# How often a worker asks the provider whether a run's batch is done (batch mode).
LLM_BATCH_POLL_SECONDS = float(os.environ.get("LLM_BATCH_POLL_SECONDS", "30"))
# How many times a worker calls the provider's Files or Batches API (upload, create, poll, download, cancel) before
# it gives up on the batch: its requests then go live or the run fails, as the run says.
LLM_BATCH_API_ATTEMPTS = int(os.environ.get("LLM_BATCH_API_ATTEMPTS", "5"))
# One log line per HTTP request would drown the worker's log; errors are recorded on the calls instead.
LOGGING.setdefault("loggers", {}).update(
    {name: {"level": "WARNING"} for name in ("httpx", "httpx2", "httpcore", "openai")}
)

# --- Sign-in throttling and API tokens (core) ----------------------------------------------------------------

# django-axes records failed sign-ins in the database, so every server process sees them; core.throttle counts
# them per normalised username and client address, with waits that double. docs/security.md explains the policy.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # first: refuses a locked-out attempt before any password is checked
    "core.backends.auth.RequestUserBackend",  # ModelBackend with the user, profile, roles, permissions in 2 reads
]
# LOGIN_MAX_FAILURES failures of one username from one address mean waiting LOGIN_LOCKOUT_SECONDS; each failure
# after a wait doubles the next one, up to LOGIN_LOCKOUT_MAX_SECONDS. One address, whatever the usernames, may fail
# LOGIN_MAX_FAILURES_PER_ADDRESS times within LOGIN_LOCKOUT_SECONDS.
LOGIN_LOCKOUT_MAX_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_MAX_SECONDS", "86400"))
LOGIN_MAX_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_MAX_FAILURES_PER_ADDRESS", "20"))
# Reverse proxies in front of the site, each appending to X-Forwarded-For; 0: the client address is REMOTE_ADDR.
TRUSTED_PROXY_COUNT = int(os.environ.get("TRUSTED_PROXY_COUNT", "0"))
if TRUSTED_PROXY_COUNT < 0 or min(LOGIN_MAX_FAILURES, LOGIN_MAX_FAILURES_PER_ADDRESS, LOGIN_LOCKOUT_SECONDS) < 1:
    raise RuntimeError("TRUSTED_PROXY_COUNT must be 0 or more, and the LOGIN_ limits 1 or more.")
AXES_HANDLER = "core.throttle.SignInThrottleHandler"
AXES_FAILURE_LIMIT = LOGIN_MAX_FAILURES
AXES_COOLOFF_TIME = timedelta(seconds=LOGIN_LOCKOUT_SECONDS)
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_USERNAME_CALLABLE = "core.throttle.normalised_username"
AXES_CLIENT_IP_CALLABLE = "core.throttle.client_address"
AXES_LOCKOUT_CALLABLE = "core.throttle.lockout_response"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False  # no "AXES: BEGIN" banner on every command
# An attempt refused during a wait is not counted, so the wait a client was told stays true.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False

# API tokens are refused this many days after they were issued (POST /api/token/ then issues a new one).
API_TOKEN_TTL_DAYS = int(os.environ.get("API_TOKEN_TTL_DAYS", "30"))
if API_TOKEN_TTL_DAYS < 1:
    raise RuntimeError("API_TOKEN_TTL_DAYS must be 1 or more.")

# --- Input limits ---------------------------------------------------------------------------------------------

# User JSON (API bodies, imports, uploads) nested deeper than this is refused with a 400 naming the body or line.
JSON_MAX_DEPTH = int(os.environ.get("JSON_MAX_DEPTH", "64"))
if JSON_MAX_DEPTH < 1:
    raise RuntimeError("JSON_MAX_DEPTH must be 1 or more.")

# --- API (Django REST framework) --------------------------------------------------------------------------------

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "core.tokens.ExpiringTokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "core.openapi.AutoSchema",  # every operation declares its error answers
    "DEFAULT_PAGINATION_CLASS": "core.pagination.PageSizePagination",
    # A list answers 400 naming a query parameter it does not declare (core.query_params).
    "DEFAULT_FILTER_BACKENDS": ["core.query_params.KnownQueryParameters"],
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api_errors.exception_handler",
    # The throttles' client address, read as core.throttle reads it for sign-ins.
    "NUM_PROXIES": TRUSTED_PROXY_COUNT,
    # DRF's parsers with the limits of core.inputs: JSON depth and NUL characters answered 400 naming the field.
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "core.parsers.FormParser",
        "core.parsers.MultiPartParser",
    ],
}
