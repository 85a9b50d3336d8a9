"""Settings, all taken from the environment.

Defaults give a developer's machine: SQLite under data/, tasks in-process.
Production sets DATABASE_URL (PostgreSQL), REDIS_URL, SECRET_KEY, DEBUG=0 and
ALLOWED_HOSTS.
"""

import contextlib
import os
import stat
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("PIXIE_DATA_DIR", BASE_DIR / "data"))


def env_bool(name: str, default: bool) -> bool:
    return env_bool_value(os.environ.get(name), default)


def env_bool_value(value: str | None, default: bool) -> bool:
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


# Environment variables renamed, new name -> old name. The old name still works when the
# new one is not set; manage.py check warns about it (pixie.W003). Sharing's "delivery"
# (handing a sealed share to another server) became "dispatch", so that "delivery" means
# serving approved skills to agent clients (pixie/delivery/).
RENAMED_ENV = {
    "PIXIE_DISPATCH_ALLOW_PRIVATE": "PIXIE_DELIVERY_ALLOW_PRIVATE",
    "PIXIE_DISPATCH_TIMEOUT": "PIXIE_DELIVERY_TIMEOUT",
    "PIXIE_DISPATCH_MAX_RETRIES": "PIXIE_DELIVERY_MAX_RETRIES",
}


def env_renamed(new: str, default: str) -> str:
    """The value of ``new``, or of its old name when only that is set."""
    return os.environ.get(new) or os.environ.get(RENAMED_ENV[new]) or default


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
# Only for a developer's machine; production refuses to start without SECRET_KEY.
DEVELOPMENT_SECRET_KEY = "django-insecure-pixie-development-only-key-not-for-production-use"  # noqa: S105
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = DEVELOPMENT_SECRET_KEY
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,[::1]" if DEBUG else "")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "pixie.core.web.admin_site.PixieAdminConfig",  # the admin, as Pixie's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served with Pixie's own
    "reversion",
    "pixie.core",  # the kernel, label "pixie"
    "pixie",  # the wiring: commands, template tags, static files
    "catalog",
    "agents",
    "egress",
    "pixie.installer",
    "pixie.sharing",
    "pixie.delivery",
    "pixie.sources",
]

MIDDLEWARE = [
    # First: a delivery URL's token leaves the request before anything logs its path.
    "pixie.delivery.secret_paths.DeliverySecretMiddleware",
    "pixie.core.logs.RequestIdMiddleware",
    # Before anything reads a body: one past its ceiling is refused unread.
    "pixie.request_limits.RequestBodyLimit",
    "django.middleware.security.SecurityMiddleware",
    # Serves collected static files in production (gunicorn has no static server).
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, nearest the views: an Http404 a view raises gets Pixie's page, DEBUG or not.
    "pixie.not_found.NotFoundPages",
]

ROOT_URLCONF = "pixie.urls"
WSGI_APPLICATION = "pixie.wsgi.application"

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
                "pixie.core.web.admin_site.site_names",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'pixie.sqlite3'}",
        # scripts/prod keeps each process's connection open (60 s): opening one per
        # request cost more than the catalog API's queries. Checked before reuse, so
        # a connection the database dropped is replaced rather than failing a request.
        conn_max_age=int(os.environ.get("DB_CONN_MAX_AGE", "0")),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's backend with a health check that reads the socket before it asks the server
    # (pixie.database.postgresql): a quiet connection costs no SELECT 1 a request.
    DATABASES["default"]["ENGINE"] = "pixie.database.postgresql"
    # Django's server-side binding (OPTIONS, "PostgreSQL notes"), with DB_PREPARED_STATEMENTS
    # "on": values travel apart from the SQL, so psycopg prepares a statement a connection
    # has run prepare_threshold times and PostgreSQL plans it once a connection; file bytes
    # go as binary. But a statement then takes at most 65,535 values, and Django sends some
    # bulk work as one statement (an __in of a large fleet, a big bulk_create), which then
    # fails: so "off" by default, Django's client-side binding, which has no such limit and
    # also suits a pooler in transaction mode (it cannot keep a prepared statement).
    prepared = os.environ.get("DB_PREPARED_STATEMENTS", "").strip().lower() or "off"
    if prepared not in {"on", "off"}:
        raise ImproperlyConfigured(f"DB_PREPARED_STATEMENTS is {prepared!r}; it must be on or off.")
    DATABASES["default"].setdefault("OPTIONS", {}).update(  # beside the URL's ?options
        server_side_binding=prepared == "on",
        prepare_threshold=5 if prepared == "on" else None,
    )


def owner_only(data_dir: Path, database: str) -> None:
    """Make data/ (0700) and the SQLite file (0600) readable by their owner only, or
    tighten them if they already exist: the file holds every workspace's data and its
    wrapped private keys. The file is created empty here, with its mode, rather than by
    SQLite with the umask's; SQLite gives its journal and WAL files the file's mode.
    What cannot be tightened (someone else's folder) `manage.py check` reports (pixie.W002).
    """
    data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    paths = [data_dir]
    if database and database != ":memory:" and not database.startswith("file:"):
        # OSError: it exists (or its folder does not, which SQLite reports).
        with contextlib.suppress(OSError):
            os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        paths += [Path(database + suffix) for suffix in ("", "-journal", "-wal", "-shm")]
    for path in paths:
        try:
            mode = stat.S_IMODE(path.lstat().st_mode)
            if mode & 0o077 and not path.is_symlink():
                path.chmod(mode & 0o700)
        except OSError:
            continue


if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    owner_only(DATA_DIR, str(DATABASES["default"]["NAME"]))
    # Writers take their turn rather than fail: each transaction takes the write lock
    # when it begins (IMMEDIATE), so two never both read and then both try to write (the
    # deadlock SQLite answers at once with "database is locked"), and a writer waits up
    # to 30 s for the lock. WAL lets pages be read meanwhile.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        transaction_mode="IMMEDIATE",
        timeout=30,
        init_command="PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", DATA_DIR / "static"))
# With DEBUG off, collectstatic writes compressed, content-hashed copies that
# WhiteNoise serves with far-future cache headers; a developer's machine and the
# tests use the plain storage, which needs no collectstatic.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
# Look files up per request while developing (and in tests, where nothing was collected).
WHITENOISE_AUTOREFRESH = DEBUG

# Celery: with REDIS_URL, tasks go to Redis for real workers; without it they
# run in-process, and callers queue them with delay_on_commit so they still
# run only after the transaction that asked for them has committed.
REDIS_URL = os.environ.get("REDIS_URL", "")
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Longer than the longest retry delay (60 s), so a task still being retried is
# never handed to a second worker; a killed worker's task returns after it.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": int(os.environ.get("CELERY_VISIBILITY_TIMEOUT", "3600")),
    # How often a worker looks for tasks whose worker died (seconds x throttle).
    "unacked_restore_interval": int(os.environ.get("CELERY_UNACKED_RESTORE_INTERVAL", "10")),
    "unacked_restore_throttle": int(os.environ.get("CELERY_UNACKED_RESTORE_THROTTLE", "10")),
}
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_TASK_DEFAULT_QUEUE", "celery")
# Nothing lost: an approved plan whose task vanished (a broker restarted without
# persistence) is queued again by beat after this many seconds; applying twice is a no-op.
PIXIE_PLAN_STUCK_AFTER = int(os.environ.get("PIXIE_PLAN_STUCK_AFTER", "600"))
CELERY_BEAT_SCHEDULE = {
    "recover-stuck-plans": {
        "task": "catalog.tasks.recover_stuck_plans",
        "schedule": float(os.environ.get("PIXIE_RECOVER_EVERY", "300")),
    },
    # Notification emails that failed, once their time to try again has come.
    "send-notification-emails": {
        "task": "pixie.notifications.send_emails",
        "schedule": float(os.environ.get("PIXIE_EMAIL_EVERY", "60")),
    },
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # Tokens first so a refused request answers 401 with WWW-Authenticate: a person's
        # own (pixie.core.people.tokens), then DRF's older one-per-login tokens.
        "pixie.core.people.tokens.ApiTokenAuthentication",
        "pixie.core.people.tokens.LoginTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "pixie.core.people.tokens.TokenLimits",  # read-only and one-workspace tokens
    ],
    # The browsable API offers a form only to whom may use it
    # (pixie.core.web.api.PixieBrowsableAPI).
    "DEFAULT_RENDERER_CLASSES": [
        "rest_framework.renderers.JSONRenderer",
        "pixie.core.web.api.PixieBrowsableAPI",
    ],
    "DEFAULT_PAGINATION_CLASS": "pixie.core.web.pagination.PagePagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "pixie.core.web.schema.PixieAutoSchema",
    "EXCEPTION_HANDLER": "pixie.core.web.api.exception_handler",
    "DEFAULT_PARSER_CLASSES": [
        "pixie.core.web.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
}
# Bodies larger than this are refused before anything parses them (the inbox has
# its own, smaller limit).
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
SPECTACULAR_SETTINGS = {
    "TITLE": "Pixie API",
    "DESCRIPTION": "Catalog and installer of skill bundles for AI agents.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # /api/docs/ loads Swagger UI from Pixie, not from a CDN at whatever version is latest.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "PlanStatusEnum": "catalog.models.installs.Plan.State",
        "PlanKindEnum": "catalog.models.installs.Plan.Kind",
        "CatalogStatusEnum": "catalog.models.catalog.Status",
        "ChangeEnum": "catalog.api.serializers.CHANGES",
        "SkillChangeEnum": "catalog.api.serializers.SKILL_CHANGES",
        "FindingKindEnum": "catalog.api.serializers.FINDING_KINDS",
        "FindingSeverityEnum": "catalog.api.serializers.FINDING_SEVERITIES",
        "MembershipRoleEnum": "pixie.core.models.Membership.Role",
        "PolicyLevelEnum": "pixie.core.models.PolicyLevel",
    },
    # Path parameters say what their URL converters match; anything else is a 404.
    "PATH_CONVERTER_OVERRIDES": {
        "slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"},
        "int": {"type": "integer", "minimum": 0},
        "str": {"type": "string", "pattern": "^[^/]+$"},
    },
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "pixie.core.web.schema.inbox_operation",
    ],
}

# Production hardening follows DEBUG: a deployment that turns DEBUG off gets
# HTTPS-only cookies and HSTS without remembering each flag.
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0" if DEBUG else "31536000"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = not DEBUG
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Behind the TLS proxy, its X-Forwarded-Proto is trusted, and the last
# X-Forwarded-For hop (the one the proxy appends) is the client's address.
BEHIND_TLS_PROXY = env_bool("BEHIND_TLS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_TLS_PROXY else None
# Load balancers probe /healthz and /livez over plain HTTP on the private network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^livez$"]

# Logs go to stderr, one line a record; LOG_FORMAT=json (scripts/prod) makes
# each a JSON object with request_id and task_id (pixie/core/logs.py).
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "pixie.core.logs.ContextFilter"}},
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"},
        "json": {"()": "pixie.core.logs.JsonFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "json" if os.environ.get("LOG_FORMAT") == "json" else "plain",
            "filters": ["context"],
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
# Workers keep the logging above instead of Celery's own, so their lines are JSON too.
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Fault injection for the reliability tests only (pixie/core/faults.py). Both stay
# empty in production. PIXIE_PAUSE_AT="plan.apply.agents=30" makes a worker
# started by a kill test sleep at that point, inside the apply's transaction.
PIXIE_FAILPOINTS: set[str] = set()
PIXIE_PAUSEPOINTS = {
    name: float(seconds)
    for name, _, seconds in (
        item.partition("=") for item in env_list("PIXIE_PAUSE_AT", "") if "=" in item
    )
}

# --- Sharing (skills and messages between workspaces' contacts) ---
# The address other Pixie servers deliver to: PIXIE_PUBLIC_URL + /api/inbox/.
PIXIE_PUBLIC_URL = os.environ.get("PIXIE_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
# Workspaces' private keys are stored encrypted under this key (base64 of 32
# random bytes), which lives only in the environment, never in the database.
# A developer's machine derives one from SECRET_KEY; with DEBUG off it must be
# set, and sharing refuses to run without it.


def development_key_encryption_key(secret_key: str) -> str:
    import base64
    import hashlib

    return base64.b64encode(
        hashlib.blake2b(secret_key.encode(), digest_size=32, person=b"pixie-key-wrap").digest()
    ).decode()


PIXIE_KEY_ENCRYPTION_KEY = os.environ.get("PIXIE_KEY_ENCRYPTION_KEY", "")
if not PIXIE_KEY_ENCRYPTION_KEY and DEBUG:
    PIXIE_KEY_ENCRYPTION_KEY = development_key_encryption_key(SECRET_KEY)
# The key derived from the secret written above: `manage.py check` warns while it is the
# one in use (pixie.W001), since anyone with Pixie's source can derive it too.
PIXIE_SOURCE_KEY_ENCRYPTION_KEY = development_key_encryption_key(DEVELOPMENT_SECRET_KEY)
# Contacts' inboxes may be plain http:// only on a developer's machine.
PIXIE_ALLOW_HTTP_INBOX = env_bool("PIXIE_ALLOW_HTTP_INBOX", DEBUG)
# A contact's inbox must resolve to public addresses only: loopback, private,
# link-local and other internal ones are refused when a card is added and at
# each delivery. A developer's machine allows them, so two local servers can
# share; a deployment whose peers are on a private network turns this on.
PIXIE_DISPATCH_ALLOW_PRIVATE = env_bool_value(
    env_renamed("PIXIE_DISPATCH_ALLOW_PRIVATE", ""), DEBUG
)
PIXIE_INBOX_MAX_BYTES = int(os.environ.get("PIXIE_INBOX_MAX_BYTES", str(192 * 1024)))
# What strangers can make the inbox keep (pixie/sharing/guard.py; README "Sharing
# skills"). Pending = received, not yet imported, kept or deleted by an owner;
# counted per recipient workspace, unknown senders and contacts separately.
PIXIE_INBOX_UNKNOWN_MAX_PENDING = int(os.environ.get("PIXIE_INBOX_UNKNOWN_MAX_PENDING", "20"))
PIXIE_INBOX_UNKNOWN_MAX_PENDING_BYTES = int(
    os.environ.get("PIXIE_INBOX_UNKNOWN_MAX_PENDING_BYTES", str(2 << 20))
)
PIXIE_INBOX_CONTACT_MAX_PENDING = int(os.environ.get("PIXIE_INBOX_CONTACT_MAX_PENDING", "500"))
PIXIE_INBOX_CONTACT_MAX_PENDING_BYTES = int(
    os.environ.get("PIXIE_INBOX_CONTACT_MAX_PENDING_BYTES", str(64 << 20))
)
# Rate limits on unknown senders, as django-ratelimit rates ("30/h", "5/10m"; empty: none).
PIXIE_INBOX_UNKNOWN_RATE_PER_WORKSPACE = os.environ.get(
    "PIXIE_INBOX_UNKNOWN_RATE_PER_WORKSPACE", "60/h"
)
PIXIE_INBOX_UNKNOWN_RATE_PER_ADDRESS = os.environ.get(
    "PIXIE_INBOX_UNKNOWN_RATE_PER_ADDRESS", "30/h"
)
PIXIE_INBOX_UNKNOWN_RATE_PER_SENDER = os.environ.get("PIXIE_INBOX_UNKNOWN_RATE_PER_SENDER", "5/h")
# An address whose envelopes are refused (unreadable, too large, for no one here) this
# often is not read at all until the window passes.
PIXIE_INBOX_REFUSED_RATE_PER_ADDRESS = os.environ.get(
    "PIXIE_INBOX_REFUSED_RATE_PER_ADDRESS", "60/h"
)
# Retry-After (seconds) when a quota is full: it frees only when an owner acts.
PIXIE_INBOX_FULL_RETRY_AFTER = int(os.environ.get("PIXIE_INBOX_FULL_RETRY_AFTER", "3600"))
# Unknown senders' messages nobody reviewed are deleted after this many days,
# by a periodic task run every PIXIE_INBOX_EXPIRE_EVERY seconds.
PIXIE_INBOX_UNKNOWN_EXPIRY_DAYS = int(os.environ.get("PIXIE_INBOX_UNKNOWN_EXPIRY_DAYS", "14"))
CELERY_BEAT_SCHEDULE["expire-unknown-messages"] = {
    "task": "pixie.tasks.expire_unknown_messages",
    "schedule": float(os.environ.get("PIXIE_INBOX_EXPIRE_EVERY", "3600")),
}
# --- Delivery (the skills CLI's discovery index, pixie.delivery) ---
# Wrong delivery tokens from one address, as a django-ratelimit rate (empty: no limit);
# past it the address is answered 429 until the window passes.
PIXIE_DELIVERY_WRONG_TOKEN_RATE = os.environ.get("PIXIE_DELIVERY_WRONG_TOKEN_RATE", "30/10m")
# A delivery client (token, user agent, network) not seen for this many days is forgotten,
# with what it fetched, by a periodic task.
PIXIE_DELIVERY_CLIENT_DAYS = int(os.environ.get("PIXIE_DELIVERY_CLIENT_DAYS", "90"))
CELERY_BEAT_SCHEDULE["forget-old-delivery-clients"] = {
    "task": "pixie.delivery.tasks.forget_old_clients",
    "schedule": float(os.environ.get("PIXIE_DELIVERY_FORGET_EVERY", "86400")),
}
# --- Sources (the git repositories skills are published in, pixie.sources) ---
# A source must be an https:// repository on a public address. On, plain http://, file://
# and local paths, and loopback and private addresses are allowed too: an air-gapped site's
# own mirror, or a test's server on 127.0.0.1.
PIXIE_SOURCES_ALLOW_PRIVATE = env_bool("PIXIE_SOURCES_ALLOW_PRIVATE", False)
# Wall-clock seconds one check of a source may take (listing its refs, fetching, reading
# the commit); past it git is killed and the mirror is left as it was.
PIXIE_SOURCES_FETCH_SECONDS = float(os.environ.get("PIXIE_SOURCES_FETCH_SECONDS", "120"))
# Bytes one fetch may add to a source's mirror (the first fetch brings the whole history):
# twice a bundle's ceiling, for the history and the files beside the skill folders.
PIXIE_SOURCES_MAX_BYTES = int(os.environ.get("PIXIE_SOURCES_MAX_BYTES", str(512 << 20)))
# Git objects (commits, trees, files) a source's mirror may hold after a fetch: skill
# collections hold a few thousand; a large application's repository holds millions.
PIXIE_SOURCES_MAX_OBJECTS = int(os.environ.get("PIXIE_SOURCES_MAX_OBJECTS", "200000"))
# A discovery index source (pixie.sources.index_read): the bytes of the index itself, and
# the skills it may list (a site's index holds tens). Its archives and SKILL.md files are
# held to the bundle ceilings, and all it downloads in one check to PIXIE_SOURCES_MAX_BYTES
# within PIXIE_SOURCES_FETCH_SECONDS.
PIXIE_SOURCES_INDEX_MAX_BYTES = int(os.environ.get("PIXIE_SOURCES_INDEX_MAX_BYTES", str(1 << 20)))
PIXIE_SOURCES_INDEX_MAX_ENTRIES = int(os.environ.get("PIXIE_SOURCES_INDEX_MAX_ENTRIES", "500"))
# How often the beat task looks for sources whose check is due (each source says its own
# interval, an hour by default); each due source is checked in a task of its own.
CELERY_BEAT_SCHEDULE["check-due-sources"] = {
    "task": "pixie.sources.tasks.check_due_sources",
    "schedule": float(os.environ.get("PIXIE_SOURCES_CHECK_EVERY", "300")),
}

# Django's "json" format, written with the C encoder (pixie.core.audit.json_serializer):
# the same text, in less time, for every version django-reversion records.
SERIALIZATION_MODULES = {"json": "pixie.core.audit.json_serializer"}

# Rate-limit counters live in Redis when there is one (shared by every process),
# in each process's memory otherwise (a developer's machine). Their own cache,
# so nothing else's entries crowd them out, or theirs anything else's.
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    # The catalog API's answers as rendered for an ETag (catalog.api.conditional), in each
    # web process: at most 200 of at most 256 KiB each.
    "rendered": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "rendered",
        "OPTIONS": {"MAX_ENTRIES": 200},
    },
    # What each reader of the catalog API may see, kept under the catalog's stamp
    # (catalog.selectors.catalog_viewer), in each web process: a few hundred bytes each.
    "viewers": {
        "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
        "LOCATION": "viewers",
        "OPTIONS": {"MAX_ENTRIES": 5000},
    },
    "ratelimit": (
        {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "pixie",
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "ratelimit"}
    ),
}
RATELIMIT_USE_CACHE = "ratelimit"
# The admin's login: wrong passwords allowed per account and per address before logging
# in pauses for the rest of the window (pixie.login_throttle; empty: no limit).
PIXIE_LOGIN_FAILURES_PER_ACCOUNT = os.environ.get("PIXIE_LOGIN_FAILURES_PER_ACCOUNT", "5/15m")
PIXIE_LOGIN_FAILURES_PER_ADDRESS = os.environ.get("PIXIE_LOGIN_FAILURES_PER_ADDRESS", "20/15m")
# Invitation links opened that are not valid, counted by address (pixie.invitation_page):
# guessing secrets is pointless (256 bits), and this keeps it from costing the server.
PIXIE_INVITATION_MISSES_PER_ADDRESS = os.environ.get(
    "PIXIE_INVITATION_MISSES_PER_ADDRESS", "20/15m"
)
PIXIE_DISPATCH_TIMEOUT = float(env_renamed("PIXIE_DISPATCH_TIMEOUT", "10"))
PIXIE_DISPATCH_MAX_RETRIES = int(env_renamed("PIXIE_DISPATCH_MAX_RETRIES", "8"))

# Safety ceilings for skill folders (a bundle load, an upload): memory bombs are
# refused with a message naming the limit. Generous: the largest published skills
# we could find are far below them (docs/SKILL_FORMAT.md).
PIXIE_SKILL_FILE_MAX_BYTES = int(os.environ.get("PIXIE_SKILL_FILE_MAX_BYTES", str(16 << 20)))
# Guardrail rules an operator adds to Pixie's own (catalog/finding_rules.toml): a TOML
# file of [[rule]] tables with id, pattern, message (docs/SECURITY.md, Findings).
PIXIE_FINDING_RULES_FILE = os.environ.get("PIXIE_FINDING_RULES_FILE", "")
# What one agent may load (its menu lines and skill bodies, estimated at 4 characters a
# token) before a plan warns that it passes its context budget; 0 turns the check off.
PIXIE_AGENT_CONTEXT_BUDGET_TOKENS = int(
    os.environ.get("PIXIE_AGENT_CONTEXT_BUDGET_TOKENS", "32000")
)
PIXIE_SKILL_MAX_FILES = int(os.environ.get("PIXIE_SKILL_MAX_FILES", "2000"))
PIXIE_BUNDLE_MAX_BYTES = int(os.environ.get("PIXIE_BUNDLE_MAX_BYTES", str(256 << 20)))
# Entries (files and folders) in a bundle uploaded as an archive in the admin.
PIXIE_BUNDLE_MAX_FILES = int(os.environ.get("PIXIE_BUNDLE_MAX_FILES", "20000"))
# Uploaded archives (a bundle of up to PIXIE_BUNDLE_MAX_BYTES) stream to a temporary
# file past this size instead of memory; the admin upload refuses a larger body
# before reading it.
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
# Any other request body: a supporting file's limit and 1 MiB for the form around it;
# refused from its Content-Length before a byte is read (pixie.request_limits).
PIXIE_REQUEST_MAX_BYTES = int(
    os.environ.get("PIXIE_REQUEST_MAX_BYTES", str(PIXIE_SKILL_FILE_MAX_BYTES + (1 << 20)))
)

# Email (pixie.core.notifications.service): printed on the console unless an SMTP server is set;
# EMAIL_URL-style settings are Django's own, each from the environment.
EMAIL_BACKEND = os.environ.get(
    "PIXIE_EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend"
)
EMAIL_HOST = os.environ.get("PIXIE_EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("PIXIE_EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("PIXIE_EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("PIXIE_EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("PIXIE_EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("PIXIE_EMAIL_FROM", "Pixie <pixie@localhost>")
# Links in emails and one-time password links start here (PIXIE_PUBLIC_URL by default).
PIXIE_SITE_URL = os.environ.get("PIXIE_SITE_URL", PIXIE_PUBLIC_URL).rstrip("/")
# Neither set: a link shown on a page (a one-time password link, an invitation) starts with
# the address the page was asked at (its Host checked against ALLOWED_HOSTS), not with the
# default above, which is wrong wherever the server runs elsewhere. Emails keep the setting.
PIXIE_SITE_URL_GIVEN = bool(os.environ.get("PIXIE_SITE_URL") or os.environ.get("PIXIE_PUBLIC_URL"))
# The admin signs people in; a one-time password link works for three days.
LOGIN_URL = "admin:login"
PASSWORD_RESET_TIMEOUT = 3 * 24 * 3600
# How often proposed plans past their workspace's expiry are marked stale.
CELERY_BEAT_SCHEDULE["expire-plans"] = {
    "task": "pixie.installer.tasks.expire_plans",
    "schedule": float(os.environ.get("PIXIE_PLAN_EXPIRE_EVERY", "3600")),
}
