# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
"""The docs come from the same tables as the code: a stale copy fails here."""
import json

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
