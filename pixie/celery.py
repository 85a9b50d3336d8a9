"""The Celery app. Without REDIS_URL tasks run in-process (see settings)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "pixie.settings")

app = Celery("pixie")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
