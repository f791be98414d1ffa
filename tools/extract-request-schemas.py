#!/usr/bin/env python3
"""Extracts the real platform's request documents as JSON Schema Ferry validates against.

The real document (../shared/reference/real-platform-data-import-openapi.yml) defines the
bodies Ferry's data-import operations take: the account (`EnergyAccount`: `validate-account/`,
`account-import-process/create-or-update/` and the v2 account operations), notes
(`AccountNote`), transactions (`Transactions`), historical statements
(`HistoricalStatements`) and payment instructions (`LegacyPaymentInstruction`), and the
component schemas they reach. This writes them, once, to host/src/domain/request_schemas.json
(JSON Schema 2020-12, one `$defs` for all), which is committed and is the one place these
shapes are written down: Ferry validates each body against its root, and its OpenAPI
document describes each body with the same definitions. Run it again when the reference
document changes:

    python3 tools/extract-request-schemas.py [PATH-TO-THE-YAML]

How OpenAPI 3.0 becomes JSON Schema here:
- `nullable: true` admits `null` (in `type`, in `enum`, or around a `$ref`);
- `oneOf` with a `discriminator` becomes one `if`/`then` per mapped value, so that a request
  is checked against the one variant it names and its errors say which field is wrong (a
  discriminator that is a setting, not a field, checks the union of the variants);
- an object that lists its properties refuses others (`additionalProperties: false`): Ferry
  turns those errors into the ignored-field report, or refuses them for a strict supplier;
- a `decimal` string may also be sent as a JSON number, as the real REST framework accepts;
- `date-time` and `time` become Ferry's `drf-datetime` and `drf-time`: the REST framework
  reads ISO 8601 (a date alone is a datetime at midnight; a time needs no offset), not
  RFC 3339;
- descriptions, examples and `x-` extensions are dropped.

Where Ferry departs from the document (the spec speaks there, or Ferry bounds what it keeps):
- `import_supplier` has no enumeration: the operator creates suppliers, and any existing
  supplier code is valid (checked by Ferry, not by the schema); campaign slugs and payment
  vendors likewise (the vendors are the ones the operator configured);
- the account's `external_account_number` is required: the spec identifies every account by
  the pair (import supplier code, external account number);
- the strings and numbers Ferry keeps have bounds (BOUNDS below), which the document leaves
  open;
- the account's `ledgers` are defined (`EnergyLedger`): the document names them (its
  deprecated ledger fields say `x-use-instead: ledgers.<field>`, its own examples send them,
  and its account validators check "each ledger in `ledgers`") but its account schema leaves
  them out. A ledger has the deprecated top-level fields' own schemas, under the same names,
  with the real `Ledger`'s `ledger_code` and `ledger_identifier` and the examples'
  `ledger_balance` (the transfer balance's schema);
- the account's payment instructions take any vendor code, as `payment-instruction/create/`
  does (the vendors are the ones the operator configured).

Needs PyYAML (pip install pyyaml).
"""

import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT.parent / "shared/reference/real-platform-data-import-openapi.yml"
OUT = ROOT / "host/src/domain/request_schemas.json"
ROOTS = ["EnergyAccount", "AccountNote", "HistoricalStatements", "LegacyPaymentInstruction",
         "Transactions"]

# Ferry's bounds on what it keeps: (schema, property) -> keywords added.
BOUNDS = {
    ("Note", "body"): {"maxLength": 10000},
    ("Note", "external_id"): {"maxLength": 255},
    ("NoteDocument", "document_path"): {"maxLength": 1024},
    ("Statement", "statement_id"): {"maxLength": 128},
    ("Statement", "number"): {"maxLength": 255},
    ("Statement", "statement_path"): {"maxLength": 1024},
    # A trillion pounds either way, in pence.
    ("Statement", "gross_amount"): {"minimum": -100_000_000_000_000,
                                    "maximum": 100_000_000_000_000},
    ("LegacyPaymentInstruction", "vendor"): {"maxLength": 64},
    ("LegacyPaymentInstruction", "ledger_code"): {"maxLength": 64},
    ("LineItem", "rate_band"): {"maxLength": 255},
    ("LineItem", "external_rate_identifier"): {"maxLength": 255},
    ("LineItem", "rate_specification_code"): {"maxLength": 255},
    ("LineItem", "time_series_specification_code"): {"maxLength": 255},
    ("TaxItem", "tax_type"): {"maxLength": 64},
}
# The fields of the transaction types, bounded alike in each type that has them.
TRANSACTION_TYPES = ["EnergyCharge", "EnergyCredit", "EnergyPayment", "EnergyRepayment",
                     "EnergySupplyCharge"]
TRANSACTION_BOUNDS = {
    "transaction_id": 128,
    "note": 2000,
    "display_note": 2000,
    "billing_document_identifier": 255,
    "to_prepay_meter_serial_number": 255,
    "reference": 512,
    "product_code": 255,
    "supply_point_identifier": 255,
}
# The account reference every body carries, bounded alike in each root that has it
# (`account_number` is the deprecated name of `external_account_number`).
REFERENCE_BOUNDS = {"import_supplier": 64, "external_account_number": 128, "account_number": 128}

# The formats the real REST framework reads its own way, checked by Ferry under these names
# (host/src/domain/request_document.rs); `date` and `email` are JSON Schema's own.
FORMATS = {"date-time": "drf-datetime", "time": "drf-time"}

DROPPED = {"description", "example", "examples", "deprecated", "readOnly", "writeOnly",
           "title", "default", "discriminator", "nullable"}


def ref_name(ref):
    return ref.split("/")[-1]


def reachable(schemas, name, seen):
    if name in seen:
        return
    seen.add(name)

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "$ref":
                    reachable(schemas, ref_name(value), seen)
                else:
                    walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schemas[name])


def convert(node, schemas):
    """One OpenAPI schema object as JSON Schema."""
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return {"$ref": "#/$defs/" + ref_name(node["$ref"])}
    out = {}
    for key, value in node.items():
        if key in DROPPED or key.startswith("x-"):
            continue
        if key == "properties":
            out[key] = {name: convert(prop, schemas) for name, prop in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = convert(value, schemas)
        elif key in ("allOf", "anyOf"):
            out[key] = [convert(part, schemas) for part in value]
        elif key == "oneOf":
            continue  # below, with its discriminator
        else:
            out[key] = value
    if "oneOf" in node:
        out.update(discriminated(node, schemas))
    if "format" in out:
        out["format"] = FORMATS.get(out["format"], out["format"])
    if out.get("format") == "decimal":
        out["type"] = ["string", "number"]
    if out.get("type") == "object" and "properties" in out and "allOf" not in out:
        out["additionalProperties"] = False
    if node.get("nullable"):
        out = admit_null(out)
    return out


def discriminated(node, schemas):
    discriminator = node.get("discriminator")
    if not discriminator:
        raise SystemExit(f"oneOf without a discriminator: {node}")
    prop = discriminator["propertyName"]
    mapping = discriminator["mapping"]
    variants = [schemas[ref_name(ref)] for ref in mapping.values()]
    if not all(prop in variant.get("properties", {}) for variant in variants):
        # Chosen by a setting, not by the request (`Business`: the supplier's
        # `enforce_business_contracts_exist`): a request may be any variant, so it is checked
        # against their union (every property of any, those all require), which reports
        # each error at its own field where an `anyOf` would report one for the whole.
        merged = [convert(variant, schemas) for variant in variants]
        properties = {}
        for variant in merged:
            for name, prop in variant.get("properties", {}).items():
                properties.setdefault(name, prop)
        required = set.intersection(*(set(variant.get("required", [])) for variant in merged))
        union = {"type": "object", "properties": properties, "additionalProperties": False}
        if required:
            union["required"] = sorted(required)
        return union
    return {
        "type": "object",
        "required": [prop],
        "properties": {prop: {"enum": list(mapping)}},
        "allOf": [
            {
                "if": {"required": [prop], "properties": {prop: {"const": value}}},
                "then": {"$ref": "#/$defs/" + ref_name(ref)},
            }
            for value, ref in mapping.items()
        ],
    }


def admit_null(schema):
    if "type" in schema and "allOf" not in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        schema["type"] = types + ["null"]
        if "enum" in schema and None not in schema["enum"]:
            schema["enum"] = schema["enum"] + [None]
        return schema
    # A `$ref` (wrapped in `allOf`) or an untyped schema: anything but null must match it.
    return {"if": {"type": "null"}, "else": schema}


# The fields of a ledger that the account's top level also has (deprecated there).
LEDGER_FIELDS = ["current_statement_transactions", "historical_statement_transactions",
                 "last_statement_balance", "last_statement_closing_date",
                 "last_statement_issue_date"]


def ledger(account):
    """`EnergyLedger`: one element of the account's `ledgers`."""
    properties = {
        "ledger_code": {"type": "string", "maxLength": 64},
        "ledger_identifier": {"type": "string", "maxLength": 255},
    }
    for name in LEDGER_FIELDS:
        properties[name] = json.loads(json.dumps(account["properties"][name]))
    properties["ledger_balance"] = json.loads(json.dumps(account["properties"]["transfer_balance"]))
    return {"type": "object", "properties": properties, "additionalProperties": False}


def main():
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    schemas = yaml.safe_load(source.read_text())["components"]["schemas"]
    names = set()
    for root in ROOTS:
        reachable(schemas, root, names)
    defs = {name: convert(schemas[name], schemas) for name in sorted(names)}

    for root in ROOTS:
        defs[root]["properties"]["import_supplier"].pop("enum", None)
    account = defs["EnergyAccount"]
    # Campaign names and slugs are the tenancy's own lists (the document's own example sends
    # a slug that is not in its list), as suppliers are.
    for name in ("slug", "campaign_name"):
        defs["AccountCampaign"]["properties"][name].pop("enum", None)
    account["required"] = sorted(set(account.get("required", [])) | {"external_account_number"})
    defs["LegacyPaymentInstruction"]["properties"]["vendor"].pop("enum", None)
    defs["PaymentInstruction"]["properties"]["vendor"].pop("enum", None)
    defs["EnergyLedger"] = ledger(account)
    account["properties"]["ledgers"] = {"type": "array", "items": {"$ref": "#/$defs/EnergyLedger"}}
    for (name, prop), keywords in BOUNDS.items():
        defs[name]["properties"][prop].update(keywords)
    for name in TRANSACTION_TYPES:
        properties = defs[name]["properties"]
        for prop, limit in TRANSACTION_BOUNDS.items():
            if prop in properties:
                properties[prop]["maxLength"] = limit
    for root in ROOTS:
        properties = defs[root]["properties"]
        for prop, limit in REFERENCE_BOUNDS.items():
            if prop in properties:
                properties[prop].setdefault("maxLength", limit)

    document = {
        "$comment": "extracted by tools/extract-request-schemas.py from the real platform's "
        "OpenAPI document; do not edit by hand",
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$defs": defs,
    }
    OUT.write_text(json.dumps(document, indent=1, sort_keys=False) + "\n")
    print(f"{OUT.relative_to(ROOT)}: {len(defs)} schemas, {OUT.stat().st_size} bytes")


if __name__ == "__main__":
    main()
