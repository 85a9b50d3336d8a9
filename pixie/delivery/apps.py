from django.apps import AppConfig


class DeliveryConfig(AppConfig):
    name = "pixie.delivery"
    label = "delivery"
    verbose_name = "Delivery"
