"""Sources: following the git repositories where skills are published, so that the
catalog keeps up with them (issue #43; the top layer, beside pixie.installer and
pixie.sharing, above agents, egress, catalog and pixie.core in pyproject.toml's layers).

The source and its check (no admin pages or API yet):

- models: Source, the repository a bundle follows (url, ref, folder, skill folders,
  metadata for a repository without bundle.toml, a token's variable NAME, interval,
  paused) and its last check (result, words, commit, next check, the waiting draft);
- services: source_check, one worker a source (its row locked, skip_locked): fetch,
  export, read, compare with the bundle's newest version, and an upstream change made a
  draft with its provenance (catalog.manifest.Provenance, signed when published),
  replacing the draft still waiting; a rewrite, a move backwards, a ref or a listed
  folder gone reported, never a draft; operators told (notify_operators);
- tasks (check_due_sources on beat, check_source each) and manage.py sources_check.

The part that talks to git:

- destinations: which repository URLs may be fetched, every resolved address checked
  (PIXIE_SOURCES_ALLOW_PRIVATE for a mirror on a private network or a test's loopback);
- git_command: the one way git is run, fenced (environment, protocols, redirects, the
  checked address pinned, no hooks, submodules or LFS, a deadline, capped output);
- git_mirror: a bare mirror per source, fetched with full history and no '+' refspec,
  the ref's movement decided by ancestry (first, unchanged, forward, backwards,
  rewritten, vanished), bounded by PIXIE_SOURCES_FETCH_SECONDS, _MAX_BYTES, _MAX_OBJECTS;
- tree_export: the skill folders at a commit written out as a bundle folder that
  catalog's folder reader parses (symlinks never followed, submodules empty);
- upstream_text: commit messages, author names and paths bounded and made visible.

The part that reads a site's Agent Skills discovery index (Source.Kind.INDEX):

- index_format: the index (v0.2.0) parsed, its entries chosen by name, and their digest
  (what ``last_commit`` records: the same digest, nothing to download);
- index_fetch: the one way it is read over HTTP: every URL and redirect checked as a
  repository's is, the checked addresses pinned, the index's own host only, a deadline,
  capped bodies;
- index_read: each entry's bytes checked against its digest, an archive unpacked by the
  upload's own extractor, the skills written out as a bundle folder.

What it finds becomes a catalog release through catalog's own services."""
