"""Attacks on the site through its documentation folder: links that would publish what lies outside."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tests.test_site import KB, REPO


def _build(tmp_path: Path, link: str, target: Path) -> subprocess.CompletedProcess:
    """mkdocs build of the fixture knowledge base with a copy of the repository's site/ holding ``link``."""
    repo = tmp_path / "repo"
    shutil.copytree(REPO / "site", repo / "site")
    (repo / "site" / link).symlink_to(target)
    cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    cfg["docs_dir"], cfg["site_dir"] = str(repo / "site"), str(repo / "build" / "site")
    cfg["plugins"] = [p if p != "assay" else {"assay": {"root": str(KB)}} for p in cfg["plugins"]]
    (repo / "mkdocs.yml").write_text(yaml.safe_dump(cfg), encoding="utf-8")
    argv = [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(repo / "mkdocs.yml")]
    return subprocess.run(argv, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"}, timeout=120)


def test_a_link_to_the_environment_is_refused_and_nothing_is_published(tmp_path):
    done = _build(tmp_path, "env.txt", Path("/proc/self/environ"))
    assert done.returncode != 0
    assert "site/env.txt is a link to something outside the repository; Assay publishes only files inside it" in done.stderr
    assert not (tmp_path / "repo" / "build" / "site" / "env.txt").exists()


def test_a_page_linked_from_outside_is_refused(tmp_path):
    outside = tmp_path / "outside.md"
    outside.write_text("# A page from elsewhere\n")
    done = _build(tmp_path, "leak.md", outside)
    assert done.returncode != 0 and "site/leak.md is a link to something outside the repository" in done.stderr


def test_a_folder_linked_to_a_large_tree_is_refused_before_it_is_walked(tmp_path):
    done = _build(tmp_path, "usr", Path("/usr"))  # MkDocs would walk and copy every file under it
    assert done.returncode != 0 and "site/usr is a link to something outside the repository" in done.stderr


def test_a_site_folder_whose_parent_links_outside_is_refused_before_mkdocs_cleans_it(tmp_path):
    outside = tmp_path / "outside"
    (outside / "site").mkdir(parents=True)
    (outside / "site" / "keep.txt").write_text("precious\n")
    (tmp_path / "repo" / "build").parent.mkdir(parents=True)
    (tmp_path / "repo" / "build").symlink_to(outside)  # site_dir is repo/build/site
    done = _build(tmp_path, "index-link.md", tmp_path / "repo" / "site" / "index.md")  # a link that stays inside
    assert done.returncode != 0
    assert (
        "site_dir build/ is a link to a folder outside the knowledge base; MkDocs deletes and writes what is in it, so "
        "Assay builds only inside the repository (remove the link, or name the outside folder itself as the site_dir)"
    ) in done.stderr
    assert [p.name for p in (outside / "site").iterdir()] == ["keep.txt"]
