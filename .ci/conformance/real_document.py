"""Prepares the real platform's OpenAPI document for a conformance run against Ferry.

Reads ../shared/reference/real-platform-data-import-openapi.yml and writes it as JSON with:
- `servers` set to Ferry's base URL;
- every `import_supplier` / `import_supplier_code` enumeration (one tenancy's suppliers)
  replaced by the demo supplier, and the payment vendors (of `payment-instruction/create/` and
  of the account document's `payment_instructions`) by the demo vendor: in Ferry the operators
  create suppliers and configure vendors;
- `external_account_number` required in the account document, as the spec has it (every
  account is named by its supplier code and external account number; the real document
  leaves it optional and does not say what it does without one).

    python3 real_document.py SOURCE.yml BASE_URL OUT.json
"""

import json
import sys

import yaml

# The operations the conformance run covers, by path.
COVERED = [
    "/v1/data-import/validate-account/",
    "/v1/data-import/account-import-process/create-or-update/",
    "/v2/data-import/accounts/",
    "/v2/data-import/accounts/validate/",
    "/v1/data-import/account-import-process/process/",
    "/v1/data-import/account-transfer-status/{import_supplier_code}/{external_account_number}/",
    "/v1/data-import/all-account-import-processes/{import_supplier_code}/",
    "/v1/data-import/historical-statements/create/",
    "/v1/data-import/imported-account-import-processes/{import_supplier_code}/",
    "/v1/data-import/meterpoint-statuses-for-account/{import_supplier_code}/{external_account_number}/",
    "/v1/data-import/notes/create/",
    "/v1/data-import/payment-instruction/create/",
    "/v1/data-import/pending-account-import-processes/{import_supplier_code}/",
    "/v1/data-import/send-registration-flows/{import_supplier_code}/{external_account_number}/",
    "/v1/data-import/transactions/create/",
    "/v2/data-import/accounts/{import_supplier_code}/{external_identifier}/",
]


def walk(node):
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("import_supplier", "import_supplier_code") and isinstance(value, dict):
                if "enum" in value:
                    value["enum"] = ["DEMO"]
                    value.pop("x-enum-descriptions", None)
            walk(value)
    elif isinstance(node, list):
        for item in node:
            walk(item)


def main():
    source, base, out = sys.argv[1:4]
    document = yaml.safe_load(open(source))
    document["servers"] = [{"url": base}]
    document["paths"] = {path: document["paths"][path] for path in COVERED}
    walk(document)
    # The vendors Ferry asks: `payment-instruction/create/`'s, and the account document's
    # instructions', which a migration confirms with them.
    for schema in ("LegacyPaymentInstruction", "PaymentInstruction"):
        vendor = document["components"]["schemas"][schema]["properties"]["vendor"]
        vendor["enum"] = ["SANDBOX"]
        vendor.pop("x-enum-descriptions", None)
    account = document["components"]["schemas"]["EnergyAccount"]
    account["required"] = sorted(set(account.get("required", [])) | {"external_account_number"})
    with open(out, "w") as file:
        json.dump(document, file)


if __name__ == "__main__":
    main()
