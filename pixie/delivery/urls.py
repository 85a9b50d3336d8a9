from django.urls import re_path

from . import views

# Every path under /deliver/ (the token itself already taken out: secret_paths).
urlpatterns = [
    re_path(r"^deliver/[^/]*(?P<rest>.*)\Z", views.deliver, name="delivery"),
    # The workspace's Claude Code marketplace, its token sent as a header.
    re_path(r"^claude/(?P<rest>.*)\Z", views.claude_marketplace, name="claude-marketplace"),
]
