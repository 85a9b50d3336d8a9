from django.urls import re_path

from . import views

# Every path under /deliver/ (the token itself already taken out: secret_paths).
urlpatterns = [re_path(r"^deliver/[^/]*(?P<rest>.*)\Z", views.deliver, name="delivery")]
