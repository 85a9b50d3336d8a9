"""gunicorn's own settings for scripts/prod (`-c python:pixie.gunicorn_conf`).

With LOG_FORMAT=json, gunicorn's lines (start, workers booting, signals) are JSON
like Django's and Celery's. Its loggers do not propagate, because each worker's
Django setup puts its own handler on the root logger; its access log stays off,
since pixie.core.logs.RequestIdMiddleware logs every request with its id.
"""

import os

# No control socket in $HOME: several servers on one machine would share it.
control_socket_disable = True

if os.environ.get("LOG_FORMAT") == "json":
    logconfig_dict = {
        "root": {"level": "INFO", "handlers": []},
        "loggers": {
            "gunicorn.error": {"level": "INFO", "handlers": ["error_console"], "propagate": False},
            "gunicorn.access": {"level": "WARNING", "handlers": [], "propagate": False},
        },
        "formatters": {"generic": {"()": "pixie.core.logs.JsonFormatter"}},
    }
