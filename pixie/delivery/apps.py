from django.apps import AppConfig


class DeliveryConfig(AppConfig):
    name = "pixie.delivery"
    label = "delivery"
    verbose_name = "Delivery"

    def ready(self):
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_save

        from .offboarding import maker_left

        # A maker leaving keeps their tokens working and tells the remaining owners.
        post_save.connect(
            maker_left, sender=get_user_model(), dispatch_uid="pixie-delivery-maker-left"
        )
