"""The pure rules under a source's check: which URLs and addresses, which refs, what git's
answers and a commit's bytes mean, how upstream text is shown, how git is fenced. No
server, no database."""

import base64
import ipaddress
import socket
from datetime import UTC, datetime

import pytest

from pixie.sources.destinations import (
    Destination,
    DestinationRefused,
    destination_check,
    source_url_problems,
)
from pixie.sources.git_command import fence_environment, fence_options
from pixie.sources.git_mirror import (
    Movement,
    commit_parse,
    failure_of,
    movement_of,
    ref_problem,
    refs_parse,
    tag_version,
    versions_at,
)
from pixie.sources.tree_export import TreeEntry, skill_folders_choose, skill_folders_find
from pixie.sources.upstream_text import upstream_line, upstream_message

A, B, C = "a" * 40, "b" * 40, "c" * 40

# Where a source may fetch from

GOOD = [
    "https://github.com/anthropics/skills.git",
    "https://github.com/anthropics/skills",
    "https://GitLab.Example.com:8443/team/sub-group/skills.git",
    "https://93.184.215.14/skills.git",
    "https://[2606:4700:4700::1111]/skills.git",
]
BAD = {
    "ftp://github.com/skills.git": "must be an https:// URL",
    "git@github.com:anthropics/skills.git": "must be an https:// URL",
    "ssh://git@github.com/anthropics/skills.git": "must be an https:// URL",
    "ext::sh -c touch% /tmp/pwned": "plain ASCII",
    "https://user:ghp_secret@github.com/skills.git": "must not hold a user or a password",
    "https://github.com/skills.git?ref=main": "plain ASCII",
    "https://github.com/skills.git#main": "plain ASCII",
    "https://github.com/a/../../etc/passwd": "must not contain '.' or '..'",
    "https://github.com/%2e%2e/skills.git": "plain ASCII",
    "https://github.com": "must name a repository",
    "https://2130706433/skills.git": "DNS name or an IP address",
    "https://0x7f.1/skills.git": "DNS name or an IP address",
    "https://github.com./skills.git": "DNS name or an IP address",
    "https://github.com:0/skills.git": "port 0",
    "https://exa mple.com/skills.git": "plain ASCII",
    "https://github.com/skills.git\n": "plain ASCII",
    "http://github.com/skills.git": "Plain http:// is turned off",
    "file:///srv/git/skills.git": "A local repository is turned off",
    "/srv/git/skills.git": "A local repository is turned off",
}


@pytest.mark.parametrize("url", GOOD)
def test_an_https_repository_url_passes(url):
    assert source_url_problems(url, allow_private=False) == []


@pytest.mark.parametrize(("url", "why"), BAD.items())
def test_a_url_a_source_may_not_have_is_refused_naming_why(url, why):
    problems = source_url_problems(url, allow_private=False)
    assert len(problems) == 1 and why in problems[0], problems


def test_the_setting_allows_plain_http_and_local_repositories_only():
    allowed = ["http://127.0.0.1:8080/skills.git", "file:///srv/git/skills.git", "/srv/git/x.git"]
    for url in allowed:
        assert source_url_problems(url, allow_private=True) == [], url
    assert source_url_problems("file://host/srv/git.git", allow_private=True) != []
    assert source_url_problems("https://u:p@example.com/x.git", allow_private=True) != []


def answers(*addresses):
    def getaddrinfo(host, port, *args, **kwargs):
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port))
            for a in addresses
        ]

    return getaddrinfo


def test_every_address_a_name_resolves_to_is_checked(monkeypatch):
    monkeypatch.setattr(socket, "getaddrinfo", answers("93.184.215.14", "10.0.0.7"))

    with pytest.raises(DestinationRefused) as refused:
        destination_check("https://mixed.example.com/skills.git", allow_private=False)

    assert str(refused.value) == (
        "The repository's host mixed.example.com resolves to 10.0.0.7, a private address; a "
        "source must be on a public address (PIXIE_SOURCES_ALLOW_PRIVATE allows loopback and "
        "private ones)"
    )


def test_the_checked_addresses_are_the_ones_pinned_for_git(monkeypatch):
    monkeypatch.setattr(socket, "getaddrinfo", answers("93.184.215.14", "2606:4700::6810:84e5"))

    destination = destination_check("https://Skills.Example.com/a/b.git", allow_private=False)

    assert destination == Destination(
        url="https://skills.example.com/a/b.git",
        scheme="https",
        host="skills.example.com",
        port=443,
        addresses=(
            ipaddress.ip_address("93.184.215.14"),
            ipaddress.ip_address("2606:4700::6810:84e5"),
        ),
    )
    assert destination.pin == "skills.example.com:443:93.184.215.14,[2606:4700::6810:84e5]"
    assert fence_options(destination)[-2:] == ["-c", f"http.curloptResolve={destination.pin}"]


def test_a_metadata_address_is_refused_by_its_literal():
    with pytest.raises(DestinationRefused) as refused:
        destination_check("https://169.254.169.254/latest.git", allow_private=False)
    assert "169.254.169.254 is a link-local address" in str(refused.value)


# How git is fenced


def test_git_inherits_no_git_variable_and_no_proxy(monkeypatch):
    monkeypatch.setenv("GIT_DIR", "/elsewhere")
    monkeypatch.setenv("GIT_SSH_COMMAND", "touch /tmp/pwned")
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example.com:3128")

    environment = fence_environment()

    assert not any(k.startswith("GIT_") and k not in {
        "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TERMINAL_PROMPT", "GIT_LFS_SKIP_SMUDGE",
        "GIT_NO_REPLACE_OBJECTS", "GIT_LITERAL_PATHSPECS", "GIT_PROTOCOL_FROM_USER",
    } for k in environment)  # fmt: skip
    assert "HTTPS_PROXY" not in environment
    assert environment["HOME"] == "/dev/null"  # no ~/.netrc, no ~/.gitconfig


def test_only_https_is_allowed_unless_the_url_was_allowed_another_transport():
    https = Destination(url="https://x.example/r.git", scheme="https", host="x.example", port=443)
    http = Destination(url="http://127.0.0.1/r.git", scheme="http", host="127.0.0.1", port=80)
    local = Destination(url="/srv/r.git", scheme="file")

    def settings_of(destination):
        return fence_options(destination)[1::2]

    for fenced in (settings_of(https), settings_of(http), settings_of(local)):
        assert fenced[:3] == [
            "protocol.allow=never",
            "protocol.https.allow=always",
            "http.followRedirects=false",
        ]
        assert "credential.helper=" in fenced and "core.hooksPath=/dev/null" in fenced
    assert not any(s.startswith("protocol.http.") for s in settings_of(https))
    assert "protocol.http.allow=always" in settings_of(http)
    assert "protocol.file.allow=always" in settings_of(local)


def test_a_token_goes_to_git_as_configuration_in_the_environment(monkeypatch):
    monkeypatch.setenv("SKILLS_DEPLOY_TOKEN", "deploy-user:s3cret")
    destination = Destination(url="https://x.example/r.git", scheme="https", host="x.example",
                              port=443)  # fmt: skip

    environment = fence_environment(destination, credential_variable="SKILLS_DEPLOY_TOKEN")

    assert environment["GIT_CONFIG_COUNT"] == "1"
    assert environment["GIT_CONFIG_KEY_0"] == "http.https://x.example/r.git.extraHeader"
    assert environment["GIT_CONFIG_VALUE_0"] == (
        "Authorization: Basic " + base64.b64encode(b"deploy-user:s3cret").decode()
    )
    assert not any("s3cret" in argument for argument in fence_options(destination))


# Refs, tags and how a ref moved


@pytest.mark.parametrize(
    "ref", ["main", "release/2.x", "v1.2.0", "refs/heads/main", "refs/tags/v1.2.0", A]
)
def test_a_branch_tag_or_sha_may_be_followed(ref):
    assert ref_problem(ref) is None


@pytest.mark.parametrize(
    "ref",
    ["", "HEAD", "--upload-pack=touch /tmp/x", "-main", "main..next", "a b", "main.lock",
     "main/", "/main", ".hidden", "skills/.curated", "ma\x1bin", "main@{1}", "x" * 256],
)  # fmt: skip
def test_a_ref_git_would_not_take_or_that_reads_as_an_option_is_refused(ref):
    assert ref_problem(ref) is not None


def test_an_annotated_tag_points_at_its_commit():
    listing = (
        f"{A}\trefs/heads/main\n{B}\trefs/tags/v1.2.0\n{A}\trefs/tags/v1.2.0^{{}}\n"
        f"{A}\trefs/tags/1.1.0\n{C}\trefs/tags/v2.0.0\nnot a line\n"
    ).encode()

    refs = refs_parse(listing)

    assert refs == {
        "refs/heads/main": A,
        "refs/tags/v1.2.0": A,
        "refs/tags/1.1.0": A,
        "refs/tags/v2.0.0": C,
    }
    assert versions_at(refs, A) == ("1.2.0", "1.1.0")


@pytest.mark.parametrize(
    ("tag", "version"),
    [("v1.2.0", "1.2.0"), ("1.2.0-rc.1", "1.2.0-rc.1"), ("refs/tags/v0.1.0", "0.1.0"),
     ("release-1.2.0", None), ("v1.2", None), ("vv1.2.0", None), ("V1.2.0", None),
     ("v١.٢.٠", None), ("v１.２.０", None)],
)  # fmt: skip
def test_a_tag_names_a_version_only_when_it_is_semantic_and_plain_ascii(tag, version):
    assert tag_version(tag) == version


def test_how_a_ref_moved_is_decided_from_ancestry():
    history = {(A, B), (A, C)}  # B and C both descend from A; neither from the other

    def descends(old, new):
        return old == new or (old, new) in history

    assert movement_of(None, A, descends=descends) == Movement.FIRST
    assert movement_of(A, A, descends=descends) == Movement.UNCHANGED
    assert movement_of(A, B, descends=descends) == Movement.FORWARD
    assert movement_of(B, A, descends=descends) == Movement.BACKWARDS
    assert movement_of(B, C, descends=descends) == Movement.REWRITTEN


@pytest.mark.parametrize(
    ("stderr", "reason"),
    [
        ("fatal: couldn't find remote ref refs/heads/x", "ref not found"),
        ("fatal: remote error: upload-pack: not our ref " + A, "ref not found"),
        ("fatal: repository 'https://x.example/r.git/' not found", "not found"),
        ("fatal: unable to access '...': The requested URL returned error: 301", "redirect"),
        ("fatal: could not read Username for 'https://x': terminal prompts disabled",
         "credentials"),
        ("fatal: unable to access '...': The requested URL returned error: 403", "forbidden"),
        ("fatal: unable to access '...': The requested URL returned error: 502", "server error"),
        ("fatal: unable to access '...': Failed to connect to x port 443: Connection refused",
         "unreachable"),
        ("fatal: unable to access '...': SSL certificate problem: self-signed certificate",
         "tls"),
        ("remote: \x1b[31mmalicious\x1b[0m\nfatal: the remote end hung up", "git failed"),
    ],
)  # fmt: skip
def test_git_s_errors_are_words_an_operator_can_act_on(stderr, reason):
    failure = failure_of(stderr, url="https://x.example/r.git", ref="main")
    assert failure.reason == reason
    assert "\x1b" not in str(failure)


# A commit's bytes


def test_a_commit_in_another_encoding_with_a_signature_is_read():
    raw = (
        b"tree " + A.encode() + b"\nparent " + B.encode() + b"\n"
        b"author Ren\xe9 Dupont <rene@example.com> 1714557600 -0230\n"
        b"committer Ren\xe9 Dupont <rene@example.com> 1714557600 -0230\n"
        b"encoding ISO-8859-1\n"
        b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n author Not Him <x@y> 1 +0000\n"
        b" -----END PGP SIGNATURE-----\n\n"
        b"Caf\xe9 au lait\n"
    )

    commit = commit_parse(raw, C, ("1.0.0",))

    assert (commit.author, commit.message, commit.versions) == ("René Dupont", "Café au lait",
                                                                ("1.0.0",))  # fmt: skip
    assert commit.date.astimezone(UTC) == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert commit.date.utcoffset().total_seconds() == -(2 * 3600 + 30 * 60)


def test_a_commit_with_a_date_that_is_not_one_has_none():
    raw = b"author A <a@b> 99999999999999 +9999\ncommitter A <a@b> 99999999999999 +9999\n\nx"
    assert commit_parse(raw, C).date is None


# Upstream text


def test_a_line_from_upstream_is_bounded_and_hides_nothing():
    assert upstream_line("Ada\tLovelace\r\n", limit=50) == "Ada⟨U+0009⟩Lovelace⟨U+000D⟩⟨U+000A⟩"
    assert upstream_line("x" * 30, limit=10) == "xxxxxxxxxx… (30 characters in all)"
    # A written-out character is cut whole, and the limit holds.
    cut = upstream_line("ab\u202e" * 10, limit=12)
    assert cut == "ab… (30 characters in all)"


def test_a_message_keeps_its_lines_and_tabs():
    assert upstream_message("Title\r\n\r\n\tbody\u2066x\u2069\n\n", limit=100) == (
        "Title\n\n\tbody⟨U+2066 LEFT-TO-RIGHT ISOLATE⟩x⟨U+2069 POP DIRECTIONAL ISOLATE⟩"
    )


# Skill folders in a tree


def entry(path, mode="100644"):
    return TreeEntry(mode, "blob", A, 1, path)


def test_skill_folders_are_the_outermost_holding_a_regular_skill_md():
    entries = [
        entry("skills/.curated/alpha/SKILL.md"),
        entry("skills/.curated/alpha/examples/inner/SKILL.md"),
        entry("plugins/finance/skills/beta/SKILL.md"),
        entry("skills/gamma/SKILL.md", mode="120000"),
        entry("skills/delta/README.md"),
    ]
    assert skill_folders_find(entries) == ["plugins/finance/skills/beta", "skills/.curated/alpha"]
    assert skill_folders_find([entry("SKILL.md"), entry("sub/x/SKILL.md")]) == [""]


def test_names_choose_by_folder_name_or_by_path():
    found = ["a/alpha", "b/alpha", "c/beta"]

    chosen, problems = skill_folders_choose(found, ["beta", "alpha", "b/alpha", "beta"])

    assert [s.path for s in chosen] == ["c/beta", "b/alpha"]
    assert problems == [
        "alpha: 2 skill folders have that name (a/alpha, b/alpha); name one by its path",
        "beta: listed twice",
    ]
