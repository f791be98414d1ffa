#!/usr/bin/env python3
"""Extracts the real platform's own request examples from its OpenAPI document into
tests/fixtures/real-examples.json, for the end-to-end tests that send them to Ferry
(tests/e2e/real_examples.rs). Committed; run again when the reference document changes:

    python3 tools/extract-reference-examples.py [PATH-TO-THE-YAML]

Needs PyYAML (pip install pyyaml).
"""

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared/reference/real-platform-data-import-openapi.yml"
OUT = ROOT / "tests/fixtures/real-examples.json"


def main():
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    paths = yaml.safe_load(source.read_text())["paths"]
    examples = {}
    for path, operations in sorted(paths.items()):
        for method, operation in operations.items():
            if method == "parameters":
                continue
            content = operation.get("requestBody", {}).get("content", {})
            found = content.get("application/json", {}).get("examples", {})
            for name, example in found.items():
                examples.setdefault(f"{method.upper()} {path}", {})[name] = example["value"]
    document = {
        "_source": "the real platform's request examples, extracted by "
        "tools/extract-reference-examples.py; do not edit by hand",
        "examples": examples,
    }
    OUT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}: {sum(len(v) for v in examples.values())} examples")


if __name__ == "__main__":
    main()
