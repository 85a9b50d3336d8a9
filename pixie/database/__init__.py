"""Pixie's database backends: Django's own, subclassed as its documentation allows."""
