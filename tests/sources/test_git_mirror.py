"""A source's mirror against real repositories served by git http-backend on loopback:
how a ref moved, what a commit says, and every refusal leaving the mirror as it was."""

import base64
import hashlib
import os
import socket
import subprocess
import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from pixie.sources import git_command
from pixie.sources.destinations import DestinationRefused
from pixie.sources.git_mirror import (
    KEPT_REF,
    MESSAGE_MAX,
    FetchFailed,
    FetchLimitExceeded,
    Movement,
    mirror_fetch,
)
from tests.sources.git_server import git_environment, run_git


def git_in(mirror, *args):
    return run_git(*args, cwd=mirror, env=git_environment(mirror.parent))


def mirror_state(mirror) -> dict[str, str]:
    """Every file of the mirror and its digest: 'as it was' means byte for byte."""
    if not mirror.exists():
        return {}
    return {
        str(path.relative_to(mirror)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(mirror.rglob("*"))
        if path.is_file()
    }


def published(upstream, *skills, message="Add the skills"):
    for name in skills:
        upstream.skill(name)
    sha = upstream.commit(message)
    upstream.push()
    return sha


# How a ref moves


def test_a_first_fetch_keeps_the_whole_history_and_reads_the_commit(upstream, mirror):
    first = published(upstream, "invoice-chase")
    upstream.skill("payment-reminder")
    second = upstream.commit(
        "Add payment-reminder\n\nIt nudges politely.",
        author=("Bo Writer", "bo@example.com"),
        date="2024-06-02T08:30:00+02:00",
    )
    upstream.push()

    result = mirror_fetch(mirror, upstream.url, "main")

    assert result.movement == Movement.FIRST
    assert result.previous is None
    assert result.report == f"main is at {second[:12]}"
    commit = result.commit
    assert commit.sha == second
    assert commit.author == "Bo Writer"
    assert commit.message == "Add payment-reminder\n\nIt nudges politely."
    assert commit.date == datetime(2024, 6, 2, 8, 30, tzinfo=timezone(timedelta(hours=2)))
    assert commit.versions == ()
    # Full history, not shallow, and no ref but Pixie's own.
    assert not (mirror / "shallow").exists()
    git_in(mirror, "cat-file", "-e", f"{first}^{{commit}}")
    assert git_in(mirror, "for-each-ref", "--format=%(refname) %(objectname)") == (
        f"{KEPT_REF} {second}"
    )


def test_a_new_commit_on_top_is_an_update_forward(upstream, mirror):
    first = published(upstream, "invoice-chase")
    mirror_fetch(mirror, upstream.url, "main")
    second = published(upstream, "payment-reminder", message="Add payment-reminder")

    result = mirror_fetch(mirror, upstream.url, "main")

    assert (result.movement, result.previous, result.commit.sha) == (
        Movement.FORWARD,
        first,
        second,
    )
    assert result.report == f"main moved forward from {first[:12]} to {second[:12]}"


def test_nothing_new_upstream_is_unchanged(upstream, mirror):
    sha = published(upstream, "invoice-chase")
    mirror_fetch(mirror, upstream.url, "main")

    result = mirror_fetch(mirror, upstream.url, "main")

    assert (result.movement, result.previous, result.commit.sha) == (Movement.UNCHANGED, sha, sha)


def test_a_tag_on_the_commit_gives_its_version_and_can_be_followed(upstream, mirror):
    sha = published(upstream, "invoice-chase")
    upstream.tag("v1.2.0", annotated=True)
    upstream.tag("1.1.0")
    upstream.tag("release-candidate")
    upstream.push()

    by_branch = mirror_fetch(mirror, upstream.url, "main")
    by_tag = mirror_fetch(mirror, upstream.url, "v1.2.0")

    assert by_branch.commit.versions == ("1.2.0", "1.1.0")
    assert by_tag.commit.sha == sha  # the annotated tag's commit, not the tag object
    assert by_tag.movement == Movement.UNCHANGED


def test_a_force_push_is_reported_as_rewritten(upstream, mirror):
    base = published(upstream, "invoice-chase")
    before = published(upstream, "payment-reminder")
    mirror_fetch(mirror, upstream.url, "main")
    upstream.reset(base)
    upstream.skill("dunning-letter")
    after = upstream.commit("Replace payment-reminder")
    upstream.push(force=True)

    result = mirror_fetch(mirror, upstream.url, "main")

    assert (result.movement, result.previous, result.commit.sha) == (
        Movement.REWRITTEN,
        before,
        after,
    )
    assert "rewritten (force-pushed)" in result.report


def test_a_ref_moved_back_to_an_earlier_commit_is_reported_as_backwards(upstream, mirror):
    base = published(upstream, "invoice-chase")
    published(upstream, "payment-reminder")
    mirror_fetch(mirror, upstream.url, "main")
    upstream.reset(base)
    upstream.push(force=True)

    result = mirror_fetch(mirror, upstream.url, "main")

    assert (result.movement, result.commit.sha) == (Movement.BACKWARDS, base)


def test_a_vanished_branch_is_reported_and_its_last_commit_kept(upstream, mirror):
    sha = published(upstream, "invoice-chase")
    upstream.push(branch="next")
    mirror_fetch(mirror, upstream.url, "next")
    upstream.delete_branch("next")

    result = mirror_fetch(mirror, upstream.url, "next")

    assert (result.movement, result.previous, result.commit) == (Movement.VANISHED, sha, None)
    assert result.report == f"next is no longer in the repository (it was at {sha[:12]})"
    assert git_in(mirror, "rev-parse", KEPT_REF) == sha


def test_a_commit_named_by_its_sha_is_followed(upstream, mirror):
    first = published(upstream, "invoice-chase")
    published(upstream, "payment-reminder")

    result = mirror_fetch(mirror, upstream.url, first)

    assert (result.movement, result.commit.sha) == (Movement.FIRST, first)


def test_the_movement_is_told_against_the_commit_the_caller_last_saw(upstream, mirror):
    first = published(upstream, "invoice-chase")
    mirror_fetch(mirror, upstream.url, "main")
    second = published(upstream, "payment-reminder")
    mirror_fetch(mirror, upstream.url, "main")  # the caller failed to record this one

    result = mirror_fetch(mirror, upstream.url, "main", since=first)
    unknown = mirror_fetch(mirror, upstream.url, "main", since="0" * 40)

    assert (result.movement, result.previous, result.commit.sha) == (
        Movement.FORWARD,
        first,
        second,
    )
    assert (unknown.movement, unknown.previous) == (Movement.FIRST, None)


# Refusals are words, and the mirror is as it was


def test_a_ref_that_is_not_there_is_refused_and_makes_no_mirror(upstream, mirror):
    published(upstream, "invoice-chase")

    with pytest.raises(FetchFailed) as refused:
        mirror_fetch(mirror, upstream.url, "release")

    assert refused.value.reason == "ref not found"
    assert str(refused.value) == f"release is not a branch or tag of {upstream.url}"
    assert not mirror.exists()
    assert [p.name for p in mirror.parent.iterdir()] == ["1.git.lock"]


def test_no_repository_at_the_url_is_a_404_in_words(git_server, mirror):
    with pytest.raises(FetchFailed) as refused:
        mirror_fetch(mirror, git_server.url("nothing-here"), "main")

    assert refused.value.reason == "not found"
    assert "There is no git repository at" in str(refused.value)


def test_a_repository_over_the_byte_limit_is_refused_and_the_mirror_is_as_it_was(
    upstream, mirror, settings
):
    published(upstream, "invoice-chase")
    mirror_fetch(mirror, upstream.url, "main")
    before = mirror_state(mirror)
    upstream.write("skills/invoice-chase/assets/scan.bin", os.urandom(300_000))
    upstream.commit("Add a scan")
    upstream.push()
    settings.PIXIE_SOURCES_MAX_BYTES = 100_000

    with pytest.raises(FetchLimitExceeded) as refused:
        mirror_fetch(mirror, upstream.url, "main")

    assert refused.value.setting == "PIXIE_SOURCES_MAX_BYTES"
    assert "passed 100,000 bytes, the limit for one fetch (PIXIE_SOURCES_MAX_BYTES)" in str(
        refused.value
    )
    assert mirror_state(mirror) == before


def test_a_repository_over_the_object_limit_is_refused_and_the_mirror_is_as_it_was(
    upstream, mirror, settings
):
    published(upstream, "invoice-chase")
    mirror_fetch(mirror, upstream.url, "main")
    before = mirror_state(mirror)
    published(upstream, "payment-reminder", "dunning-letter", "late-fee")
    settings.PIXIE_SOURCES_MAX_OBJECTS = 8

    with pytest.raises(FetchLimitExceeded) as refused:
        mirror_fetch(mirror, upstream.url, "main")

    assert refused.value.setting == "PIXIE_SOURCES_MAX_OBJECTS"
    assert "the limit is 8 (PIXIE_SOURCES_MAX_OBJECTS)" in str(refused.value)
    assert mirror_state(mirror) == before


def test_a_first_fetch_over_a_limit_leaves_no_mirror_behind(upstream, mirror, settings):
    published(upstream, "invoice-chase")
    settings.PIXIE_SOURCES_MAX_OBJECTS = 1

    with pytest.raises(FetchLimitExceeded):
        mirror_fetch(mirror, upstream.url, "main")

    assert sorted(p.name for p in mirror.parent.iterdir()) == ["1.git.lock"]


def test_a_server_that_does_not_answer_is_stopped_at_the_time_limit(
    upstream, git_server, mirror, settings
):
    published(upstream, "invoice-chase")
    mirror_fetch(mirror, upstream.url, "main")
    before = mirror_state(mirror)
    git_server.stalled.add("skills")
    settings.PIXIE_SOURCES_FETCH_SECONDS = 0.5

    started = time.monotonic()
    with pytest.raises(FetchLimitExceeded) as refused:
        mirror_fetch(mirror, upstream.url, "main")

    # Killed at the limit, not left waiting on the stalled server (a loaded machine's
    # slack allowed: the figure is the refusal's, below).
    assert time.monotonic() - started < 20
    assert (refused.value.reason, refused.value.setting) == (
        "timed out",
        "PIXIE_SOURCES_FETCH_SECONDS",
    )
    assert "longer than 0.5 seconds" in str(refused.value)
    assert mirror_state(mirror) == before


# Where a source may fetch from


def test_a_loopback_address_is_refused_when_private_addresses_are_off(
    upstream, git_server, mirror, settings
):
    published(upstream, "invoice-chase")
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False
    served = len(git_server.requests)

    with pytest.raises(DestinationRefused) as refused:
        mirror_fetch(mirror, f"https://127.0.0.1:{git_server.base_url.rsplit(':')[-1]}/x.git",
                     "main")  # fmt: skip
    with pytest.raises(DestinationRefused) as plain_http:
        mirror_fetch(mirror, upstream.url, "main")

    assert "127.0.0.1 is a loopback address" in str(refused.value)
    assert "PIXIE_SOURCES_ALLOW_PRIVATE" in str(refused.value)
    assert "Plain http:// is turned off" in str(plain_http.value)
    assert len(git_server.requests) == served  # nothing was asked of the server
    assert not mirror.exists()


def test_a_local_repository_is_refused_unless_the_setting_allows_it(upstream, mirror, settings):
    sha = published(upstream, "invoice-chase")
    settings.PIXIE_SOURCES_ALLOW_PRIVATE = False
    with pytest.raises(DestinationRefused) as refused:
        mirror_fetch(mirror, f"file://{upstream.bare}", "main")
    assert "A local repository is turned off" in str(refused.value)

    settings.PIXIE_SOURCES_ALLOW_PRIVATE = True
    assert mirror_fetch(mirror, f"file://{upstream.bare}", "main").commit.sha == sha


def test_a_redirect_is_not_followed(upstream, git_server, mirror):
    published(upstream, "invoice-chase")

    with pytest.raises(FetchFailed) as refused:
        mirror_fetch(mirror, git_server.redirect_url("skills"), "main")

    assert refused.value.reason == "redirect"
    assert "redirect (HTTP 301), which Pixie does not follow" in str(refused.value)
    assert git_server.requests == ["GET /moved/skills.git/info/refs"]


def test_git_connects_to_the_address_that_was_checked(upstream, git_server, mirror, monkeypatch):
    """upstream.invalid resolves only in Pixie's own check: git can reach it only through
    the address pinned for it."""
    sha = published(upstream, "invoice-chase")
    resolve = socket.getaddrinfo

    def resolver(host, *args, **kwargs):
        return resolve("127.0.0.1" if host == "upstream.invalid" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    port = git_server.base_url.rsplit(":")[-1]

    result = mirror_fetch(mirror, f"http://upstream.invalid:{port}/skills.git", "main")

    assert result.commit.sha == sha


def test_a_private_repository_s_token_comes_from_the_variable_the_source_names(
    upstream, git_server, mirror, monkeypatch
):
    published(upstream, "invoice-chase")
    token = "ghp_not-a-real-token"  # noqa: S105
    header = "Basic " + base64.b64encode(f"x-access-token:{token}".encode()).decode()
    git_server.authorization["skills"] = header
    commands = []
    popen = subprocess.Popen

    def recording(command, *args, **kwargs):
        commands.append(" ".join(command))
        return popen(command, *args, **kwargs)

    monkeypatch.setattr(git_command.subprocess, "Popen", recording)

    with pytest.raises(FetchFailed) as without:
        mirror_fetch(mirror, upstream.url, "main")
    with pytest.raises(FetchFailed) as unset:
        mirror_fetch(mirror, upstream.url, "main", credential_variable="PIXIE_TEST_SKILLS_TOKEN")
    monkeypatch.setenv("PIXIE_TEST_SKILLS_TOKEN", token)
    result = mirror_fetch(
        mirror, upstream.url, "main", credential_variable="PIXIE_TEST_SKILLS_TOKEN"
    )

    assert without.value.reason == "credentials"
    assert "PIXIE_TEST_SKILLS_TOKEN, which holds this source's token, is not set" in str(
        unset.value
    )
    assert result.movement == Movement.FIRST
    assert commands and not any(token in c or header in c for c in commands)


def test_hostile_commit_text_comes_back_bounded_with_nothing_hidden(upstream, mirror):
    published(upstream, "invoice-chase")
    upstream.raw_commit(
        "Mallory \u202eredivorp\u202c \x1b[31mTrusted",
        "Fix\u200b a typo \x1b]0;owned\x07\r\n".encode() + b"A" * 50_000,
    )
    upstream.push()

    commit = mirror_fetch(mirror, upstream.url, "main").commit

    assert commit.author == (
        "Mallory ⟨U+202E RIGHT-TO-LEFT OVERRIDE⟩redivorp⟨U+202C POP DIRECTIONAL FORMATTING⟩ "
        "⟨U+001B⟩[31mTrusted"
    )
    assert commit.message.startswith(
        "Fix⟨U+200B ZERO WIDTH SPACE⟩ a typo ⟨U+001B⟩]0;owned⟨U+0007⟩\nAAA"
    )
    assert len(commit.message) < MESSAGE_MAX + 40
    assert commit.message.endswith("… (50,023 characters in all)")


def test_two_checks_of_one_source_at_once_take_turns_on_the_mirror(upstream, mirror):
    sha = published(upstream, "invoice-chase", "payment-reminder")
    results, failures = [], []

    def check():
        try:
            results.append(mirror_fetch(mirror, upstream.url, "main"))
        except Exception as exc:  # noqa: BLE001 (the test reports it)
            failures.append(exc)

    threads = [threading.Thread(target=check) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)

    assert failures == []
    assert sorted(r.movement for r in results) == [Movement.FIRST, Movement.UNCHANGED]
    assert {r.commit.sha for r in results} == {sha}
    git_in(mirror, "fsck", "--strict", "--no-progress")
    assert git_in(mirror, "for-each-ref", "--format=%(refname)") == KEPT_REF
