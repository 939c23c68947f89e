# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The docs come from the same tables as the code: a stale copy fails here."""
import json
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, run


def test_rules_doc_is_generated_from_the_table():
    generated = run("rules", "--markdown", check=True).stdout
    assert (ROOT / "docs" / "rules.md").read_text() == generated, "run 'make docs'"


def test_every_rule_is_in_the_json_schema(tmp_path):
    ids = [r["id"] for r in json.loads(run("rules", "--json", check=True).stdout)]
    assert len(ids) == len(set(ids))
    readme = (ROOT / "README.md").read_text()
    assert "docs/rules.md" in readme
    for rid in ("icrc", "truncated", "ip_fragment", "tver", "opcode", "pkey", "reserved", "pad",
                "payload_length", "se", "atomic_align", "aeth_syndrome", "psn_gap", "psn_duplicate",
                "opcode_sequence", "msn_regress", "pmtu_inconsistent", "flow_evicted", "cnp",
                "ecn_ce", "nak_psn", "nak_invalid", "nak_access", "nak_operational", "nak_rnr",
                "opcode_vendor"):
        assert rid in ids


def test_manual_page_is_generated_and_renders_cleanly():
    generated = run("help", "--man", check=True).stdout
    assert (ROOT / "docs" / "roceval.8").read_text() == generated, "run 'make docs'"
    # every command, every rule
    for name in re.findall(r"^  (\w+) ", run("help", check=True).stdout.split("Commands:")[1].split("Options:")[0],
                           re.M):
        assert f'.SS "{name} ' in generated, name
    for rule in json.loads(run("rules", "--json", check=True).stdout):
        assert f".B {rule['id']}\n" in generated
    if not shutil.which("man"):
        pytest.skip("man (Debian package man-db) is not installed")
    res = subprocess.run(["man", "--warnings", "-l", str(ROOT / "docs" / "roceval.8")], capture_output=True,
                         text=True, env={"MANWIDTH": "100", "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin"})
    assert res.returncode == 0 and res.stderr == "", res.stderr
    assert "roceval detach --stale --all" in res.stdout


def heading_anchors(text):
    """The anchors GitHub gives a Markdown file's headings: lower case, punctuation dropped,
    spaces made hyphens, a repeated one numbered."""
    anchors, seen = set(), {}
    for title in re.findall(r"^#{1,6} (.+)$", re.sub(r"^```.*?^```", "", text, flags=re.M | re.S), re.M):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
        seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_every_relative_link_in_the_docs_resolves():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert len(pages) > 3
    checked = 0
    for page in pages:
        text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            assert dest.is_file(), f"{page.relative_to(ROOT)}: {target}: no such file"
            if anchor:
                assert anchor in heading_anchors(dest.read_text()), \
                    f"{page.relative_to(ROOT)}: {target}: no such heading"
            checked += 1
    assert checked > 30, checked


def test_the_readme_links_every_topic_file():
    readme = (ROOT / "README.md").read_text()
    for doc in sorted((ROOT / "docs").iterdir()):
        assert f"](docs/{doc.name})" in readme, doc.name
