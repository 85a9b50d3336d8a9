"""API routes for contacts, messages and shares (the sharing issue fills these in)."""

urlpatterns = []
