"""Delivery's periodic task: clients not seen for PIXIE_DELIVERY_CLIENT_DAYS are forgotten,
with what they fetched (a network and a user agent are about people: kept while useful)."""

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from .models import DeliveryClient


@shared_task(name="pixie.delivery.tasks.forget_old_clients")
def forget_old_clients() -> int:
    cutoff = timezone.now() - timedelta(days=settings.PIXIE_DELIVERY_CLIENT_DAYS)
    deleted, by_model = DeliveryClient.objects.filter(last_seen__lt=cutoff).delete()
    return by_model.get(DeliveryClient._meta.label, 0)
