"""What an apply asks egress to write: the rules a plan approves, and those it drops,
exactly the (host, port) pairs named, in one statement however many there are."""

import pytest
from django.utils import timezone

from egress.models import EgressRule
from egress.services import HostWanted, egress_rules_apply

pytestmark = pytest.mark.django_db


def test_only_the_named_host_and_port_pairs_are_dropped_in_one_delete(
    acme, owner, django_assert_num_queries
):
    now = timezone.now()
    for host, port in [("a.example.com", 443), ("a.example.com", 8443), ("b.example.com", 443)]:
        EgressRule.objects.create(
            workspace=acme, host=host, port=port, approved_by=owner, approved_at=now
        )
    with django_assert_num_queries(1):  # nothing to add: the one DELETE
        egress_rules_apply(
            workspace=acme, plan=None, approver=owner, now=now, add=[],
            remove=[("a.example.com", 443), ("b.example.com", 443), ("c.example.com", 443)],
        )  # fmt: skip
    kept = list(EgressRule.objects.values_list("host", "port"))
    assert kept == [("a.example.com", 8443)]
    added = egress_rules_apply(
        workspace=acme, plan=None, approver=owner, now=now,
        add=[HostWanted("c.example.com", 443, "Lookups", "")], remove=[],
    )  # fmt: skip
    assert [(r.host, r.port, r.approved_by) for r in added] == [("c.example.com", 443, owner)]
