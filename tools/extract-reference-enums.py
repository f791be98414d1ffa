#!/usr/bin/env python3
"""Extracts the enumerations of the real platform's answers that Ferry uses.

The real document (../shared/reference/real-platform-data-import-openapi.yml) is the reference
for the values the data-import API uses where the spec only shows "values that occur". The
enumerations of the request bodies are part of their schemas (tools/extract-request-schemas.py);
this writes those of the answers (the registration statuses of a meter point) to
host/src/domain/reference_enums.json, which is committed; run it again when the reference
document changes:

    python3 tools/extract-reference-enums.py [PATH-TO-THE-YAML]

Needs PyYAML (pip install pyyaml).
"""

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared/reference/real-platform-data-import-openapi.yml"
OUT = ROOT / "host/src/domain/reference_enums.json"


def enum_of(schemas, schema, field):
    prop = schemas[schema]["properties"][field]
    values = prop.get("enum")
    if values is None and "allOf" in prop:
        values = schemas[prop["allOf"][0]["$ref"].split("/")[-1]]["enum"]
    if values is None:
        raise SystemExit(f"{schema}.{field} has no enumeration")
    return [str(value) for value in values]


def main():
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    schemas = yaml.safe_load(source.read_text())["components"]["schemas"]
    document = {
        "_source": "extracted by tools/extract-reference-enums.py from the real platform's "
        "OpenAPI document; do not edit by hand",
        "meter_point_statuses": enum_of(schemas, "GbrMeterPointStatus", "status"),
    }
    OUT.write_text(json.dumps(document, indent=1) + "\n")
    counts = {key: (len(value) if isinstance(value, list) else {k: len(v) for k, v in value.items()})
              for key, value in document.items() if not key.startswith("_")}
    print(f"wrote {OUT.relative_to(ROOT)}: {counts}")


if __name__ == "__main__":
    main()
