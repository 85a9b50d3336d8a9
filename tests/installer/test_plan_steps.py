"""The step types (pixie.installer.steps) are the one description of a plan's steps: the
planner writes them (tests/conftest.py checks every plan any test makes), the plan page
shows every type, and the API's schema describes each."""

import pytest
from drf_spectacular.generators import SchemaGenerator

from pixie.installer.plan_display import GROUPS
from pixie.installer.steps import STEP_TYPES, step_problems

pytestmark = pytest.mark.django_db


def test_the_plan_page_shows_every_step_type():
    shown = {step_type for _, _, types in GROUPS for step_type in types}
    assert shown == set(STEP_TYPES)


def test_the_api_schema_describes_each_step_type_with_its_keys():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    items = schema["components"]["schemas"]["Plan"]["properties"]["steps"]["items"]["oneOf"]
    described = {item["properties"]["type"]["enum"][0]: item for item in items}
    assert set(described) == set(STEP_TYPES)
    for step_type, item in described.items():
        keys = set(STEP_TYPES[step_type].__annotations__)
        assert set(item["properties"]) == keys, step_type
        assert set(item["required"]) == keys, step_type


def test_a_step_that_strays_from_its_type_is_named():
    good = {"type": "egress.remove", "host": "api.example.com", "port": 443, "reason": "r"}
    assert step_problems(good) == []
    assert step_problems({**good, "port": "443"}) == ["egress.remove.port: str, not <class 'int'>"]
    assert step_problems({**good, "port": True}) == ["egress.remove.port: a boolean, not a number"]
    assert step_problems({k: v for k, v in good.items() if k != "host"}) == [
        "egress.remove: no 'host'"
    ]
    assert step_problems({**good, "extra": 1}) == ["egress.remove: unknown key 'extra'"]
    assert step_problems({"type": "skill.teleport"}) == ["unknown step type 'skill.teleport'"]
