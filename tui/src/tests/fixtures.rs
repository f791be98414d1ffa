//! Realistic, fixed data for the tests: three suppliers in different states, one supplier's
//! imports (hand-written rows and enough generated ones to need several pages), one account in
//! full and one whose ledger does not hold what was declared, a plugin, a migration, a few
//! events, and each supplier's campaign report with its rows (OLD_CO's by hand, with errors of
//! three codes and three mismatches; the others' made from their counts); and, for the column
//! tests, suppliers with long codes and events with long types that differ only at the end.
//! All times are fixed.

use crate::api::{
    AccountDetail, AccountReconciliation, AccountReportRow, CampaignReport, ClientError,
    ErrorGroup, Event, EventPage, ImportFailure, ImportItem, ImportState, Migration,
    MigrationState, Plugin, PluginRecord, RelayStatus, ReportAccounts, ReportData,
    ReportReconciliation, Supplier, SupplierPlugin, SupplierStatus,
};
use serde_json::json;
use std::collections::BTreeMap;

pub const OLD_CO_SHA256: &str = "9f2c1e7a4b5d6c8e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f70";

fn supplier(code: &str, name: &str, status: &str, counts: [u64; 5]) -> Supplier {
    Supplier {
        code: code.to_owned(),
        name: name.to_owned(),
        document_root: format!("{}/", code.to_lowercase()),
        send_migration_emails: true,
        status: SupplierStatus::parse(status).expect("a status"),
        expiry_window_days: 30,
        strict_unknown_fields: false,
        created_at: "2025-01-06T09:00:00Z".to_owned(),
        updated_at: "2025-02-27T16:40:00Z".to_owned(),
        counts: ImportState::ALL.into_iter().zip(counts).collect(),
        plugin: None,
    }
}

pub fn suppliers() -> Vec<Supplier> {
    let mut old_co = supplier("OLD_CO", "Old Co Energy", "ONGOING", [120, 3, 842, 7, 2]);
    old_co.plugin = Some(SupplierPlugin {
        sha256: OLD_CO_SHA256.to_owned(),
        name: "old-co-rules".to_owned(),
        version: "1.4.0".to_owned(),
        installed_at: "2025-02-27T16:40:00Z".to_owned(),
        size_bytes: 48_213,
    });
    vec![
        old_co,
        supplier("BRIGHT", "Bright Power Ltd", "PAUSED", [0, 0, 1530, 12, 4]),
        supplier(
            "NORTHWIND",
            "Northwind Gas & Electric",
            "COMPLETE",
            [0, 0, 2210, 0, 9],
        ),
    ]
}

/// OLD_CO and two suppliers whose codes differ only after their 17th character, with plugins
/// whose names are long.
pub fn long_named_suppliers() -> Vec<Supplier> {
    let plugin = |sha256: &str, name: &str, version: &str| SupplierPlugin {
        sha256: sha256.to_owned(),
        name: name.to_owned(),
        version: version.to_owned(),
        installed_at: "2025-03-02T08:30:00Z".to_owned(),
        size_bytes: 1_318_912,
    };
    let mut legacy = supplier(
        "SSE_ENERGY_NORTH_LEGACY",
        "SSE Energy North (legacy tariffs)",
        "ONGOING",
        [4210, 12, 18344, 97, 31],
    );
    legacy.plugin = Some(plugin(
        "c0ffee00d15ea5e5b01dfacefeedbead0123456789abcdef0123456789abcdef",
        "sse-north-legacy-tariff-mapper",
        "2.11.0-rc.3",
    ));
    let mut business = supplier(
        "SSE_ENERGY_NORTH_BUSINESS",
        "SSE Energy North Business Customers",
        "PAUSED",
        [880, 0, 5021, 4, 0],
    );
    business.plugin = Some(plugin(
        "b0a710ad00c0ffee5eed0123456789abcdef0123456789abcdef0123456789ab",
        "sse-north-business-rules",
        "1.0.0",
    ));
    let mut list = suppliers();
    list.truncate(1);
    list.extend([legacy, business]);
    list
}

/// The plugin the host reports for `supplier`: OLD_CO's in full, others' from their summary.
pub fn plugin_of(supplier: &Supplier) -> Option<Plugin> {
    if supplier.code == "OLD_CO" {
        return Some(plugin());
    }
    let summary = supplier.plugin.as_ref()?;
    Some(Plugin {
        record: PluginRecord {
            supplier: supplier.code.clone(),
            sha256: summary.sha256.clone(),
            name: summary.name.clone(),
            version: summary.version.clone(),
            size_bytes: summary.size_bytes,
            installed_at: summary.installed_at.clone(),
            config: BTreeMap::new(),
            hooks: vec!["validate-account".to_owned(), "map-transactions".to_owned()],
            wit_version: Some("0.1.0".to_owned()),
        },
        recent_failures: Vec::new(),
        low_priority: false,
    })
}

fn row(number: &str, state: &str, platform: Option<&str>, day: u32) -> ImportItem {
    ImportItem {
        external_account_number: number.to_owned(),
        state: ImportState::parse(state).expect("a state"),
        platform_account_number: platform.map(str::to_owned),
        account_created_at: platform.map(|_| format!("2025-03-{day:02}T10:02:00Z")),
        staged_at: format!("2025-03-{day:02}T09:15:00Z"),
        updated_at: format!("2025-03-{day:02}T10:02:00Z"),
        last_failure: None,
    }
}

/// OLD_CO's import processes, ordered by external account number as the host orders them.
pub fn imports() -> Vec<ImportItem> {
    let mut rows = vec![
        row("ACC-1001", "PROCESSED", Some("A-1B2C3D4E"), 3),
        row("ACC-1002", "PROCESSED", Some("A-2C3D4E5F"), 3),
        row("ACC-1003", "ERRORED", None, 4),
        row("ACC-1004", "PENDING", None, 4),
        row("ACC-1005", "IN_PROGRESS", None, 5),
        row("ACC-1010", "ERRORED", None, 5),
        row("ACC-1011", "CANCELLED", None, 6),
        row("ACC-1012", "PROCESSED", Some("A-3D4E5F6A"), 6),
    ];
    rows[2].last_failure = Some(ImportFailure {
        code: "invalid_postcode".to_owned(),
        detail: "Postcode \"XX1 1XX\" is not a UK postcode.".to_owned(),
        at: "2025-03-04T09:16:00Z".to_owned(),
    });
    rows[5].last_failure = Some(ImportFailure {
        code: "duplicate_email".to_owned(),
        detail: "ada@example.com is already a customer.".to_owned(),
        at: "2025-03-05T09:16:00Z".to_owned(),
    });
    rows.extend((0..60).map(|index| row(&format!("ACC-2{index:03}"), "PENDING", None, 7)));
    rows
}

/// A migrated account in debit whose document carried its money: a closed statement with two
/// historical transactions, two open ones after it, a confirmed and a pending payment
/// instruction, and fields Ferry keeps only in the document (campaigns, consents, debts,
/// payment plans and schedules, metadata, references, ...).
pub fn account() -> AccountDetail {
    serde_json::from_value(json!({
        "platform_account_number": "A-1B2C3D4E",
        "import_supplier": "OLD_CO",
        "external_account_number": "ACC-1001",
        "created_at": "2025-03-03T10:02:00.482113Z",
        "account": {
            "import_supplier": "OLD_CO",
            "external_account_number": "ACC-1001",
            "account_type": "DOMESTIC",
            "billing_name": "Ada Lovelace",
            "billing_address": {"street_address": "1 Analytical St", "locality": "London", "postal_code": "N1 1AA", "country": "GB"},
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com"}],
            "supply_addresses": [{"supply_address1": "1 Analytical St", "supply_postcode": "N1 1AA", "meter_points": [{"identifier": "1200023305967"}, {"identifier": "3406086401"}]}],
            "transfer_balance": "-35.00",
            "last_statement_balance": "-18.40",
            "last_statement_closing_date": "2025-02-28",
            "last_statement_issue_date": "2025-03-03",
            "historical_statement_transactions": [
                {"transaction_id": "OLDCO-TX-000117", "transaction_date": "2025-01-31", "amount": "58.40", "type": "CHARGE"},
                {"transaction_id": "OLDCO-TX-000118", "transaction_date": "2025-02-14", "amount": "40.00", "type": "PAYMENT"}
            ],
            "current_statement_transactions": [
                {"transaction_id": "OLDCO-TX-000119", "transaction_date": "2025-03-01", "amount": "23.77", "type": "CHARGE"},
                {"transaction_id": "OLDCO-TX-000120", "transaction_date": "2025-03-02", "amount": "7.17", "type": "PAYMENT"}
            ],
            "notes": [{"body": "Customer prefers contact by email.", "is_pinned": true}],
            "payment_instructions": [
                {"vendor": "GOCARDLESS", "reference": "MD-00042", "type": "DIRECT_DEBIT"},
                {"vendor": "GOCARDLESS", "reference": "MD-00077", "type": "DIRECT_DEBIT", "valid_from": "2025-04-01"}
            ],
            "account_campaigns": [{"slug": "winter-saver-2024", "campaign_name": "Winter Saver", "start_date": "2024-11-01"}],
            "consents": [
                {"type": "MARKETING_EMAIL", "value": "OPTED_OUT", "signed_at": "2024-06-01T09:00:00Z"},
                {"type": "SMART_METER_DATA", "value": "HALF_HOURLY", "signed_at": "2024-06-01T09:00:00Z"}
            ],
            "debts": [{"agency_name": "Northern Recoveries", "start_date": "2024-09-01", "is_insolvent": false, "aged_debt": [{"debt_amount": "18.40", "due_date": "2025-03-20"}]}],
            "payment_plans": [{"strategy_name": "MONTHLY_INSTALMENTS", "accepted_at": "2025-02-20T12:00:00Z", "payments": [{"amount": "9.20"}, {"amount": "9.20"}]}],
            "payment_schedules": [{"amount": "35.00", "day_of_month": 14, "frequency": "MONTHLY", "means": "DD", "start_date": "2025-04-14"}],
            "metadata": [{"key": "legacy_tariff", "value": "OC-FIX-24"}, {"key": "crm", "value": {"segment": "loyal", "since": 2016}}],
            "references": [{"namespace": "old-co.crm-id", "value": "CRM-88213"}],
            "dunning_path": {"path_name": "standard_domestic", "start_date": "2025-03-20"},
            "warm_home_discount": [],
            "billing_sub_name": "",
            "smart_read_cycle_day": 10,
            "unknown_occupier": false,
            "last_billed_to_date": "2025-02-28"
        },
        "open_statement_period_start": "2025-03-01",
        "balance": "-35.00",
        "reconciliation": {"state": "RECONCILED", "declared": "-35.00", "held": "-35.00", "difference": "0.00"},
        "closed_statements": [
            {"first_transaction_date": "2025-01-31", "closing_date": "2025-02-28", "issued_date": "2025-03-03", "closing_balance": "-18.40", "transactions": 2}
        ],
        "notes": [
            {"id": 1, "body": "Customer prefers contact by email.", "document_paths": [], "created_at": "2025-03-03T10:02:00Z", "is_pinned": true, "source": "IMPORT"},
            {"id": 2, "document_paths": ["old_co/letters/ACC-1001-welcome.pdf"], "created_at": "2025-03-03T10:05:00Z", "is_pinned": false, "source": "SYSTEM"}
        ],
        "transactions": [
            {"transaction_id": "OLDCO-TX-000117", "transaction_date": "2025-01-31", "amount": "58.40", "type": "CHARGE", "reason": "IMPORTED_CHARGE", "reference": "INV-2025-01", "display_note": "January electricity", "status": "TRANSACTION_IMPORT_SUCCESS", "ledger_entry_id": 1, "historical": true},
            {"transaction_id": "OLDCO-TX-000118", "transaction_date": "2025-02-14", "amount": "40.00", "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "reference": "DD-0214", "payment_type": "DIRECT_DEBIT", "display_note": "Direct Debit payment, thank you", "status": "TRANSACTION_IMPORT_SUCCESS", "ledger_entry_id": 2, "historical": true},
            {"transaction_id": "OLDCO-TX-000119", "transaction_date": "2025-03-01", "amount": "23.77", "type": "CHARGE", "reason": "IMPORTED_CHARGE", "reference": "OLDCO/INV/2025-02/REISSUE-0003", "description": "Moved from 2025-02-28 into the open statement period", "original_transaction_date": "2025-02-28", "status": "TRANSACTION_IMPORT_SUCCESS", "ledger_entry_id": 3, "historical": false},
            {"transaction_id": "OLDCO-TX-000120", "transaction_date": "2025-03-02", "amount": "7.17", "type": "PAYMENT", "reason": "ACCOUNT_CHARGE_PAYMENT", "reference": "DD-0302", "payment_type": "DIRECT_DEBIT", "status": "TRANSACTION_IMPORT_SUCCESS", "ledger_entry_id": 4}
        ],
        "ledger_entries": [
            {"id": 1, "transaction_id": "OLDCO-TX-000117", "type": "CHARGE", "amount": "58.40", "balance_after": "-58.40", "transaction_date": "2025-01-31", "posted_at": "2025-03-03T10:02:00Z"},
            {"id": 2, "transaction_id": "OLDCO-TX-000118", "type": "PAYMENT", "amount": "40.00", "balance_after": "-18.40", "transaction_date": "2025-02-14", "posted_at": "2025-03-03T10:02:00Z"},
            {"id": 3, "transaction_id": "OLDCO-TX-000119", "type": "CHARGE", "amount": "23.77", "balance_after": "-42.17", "transaction_date": "2025-03-01", "posted_at": "2025-03-03T10:02:00Z"},
            {"id": 4, "transaction_id": "OLDCO-TX-000120", "type": "PAYMENT", "amount": "7.17", "balance_after": "-35.00", "transaction_date": "2025-03-02", "posted_at": "2025-03-03T10:02:00Z"}
        ],
        "statements": [
            {"bill_period_from_date": "2025-01-01", "bill_period_to_date": "2025-01-31", "statement_id": "S-1", "issued_date": "2025-02-03", "number": "ST-0001", "gross_amount": "58.40", "statement_path": "old_co/statements/ST-0001.pdf"},
            {"bill_period_from_date": "2025-02-01", "bill_period_to_date": "2025-02-28", "statement_id": "S-2", "issued_date": "2025-03-03", "number": "ST-0002", "gross_amount": "23.77"}
        ],
        "payment_instructions": [
            {"vendor": "GOCARDLESS", "reference": "MD-00042", "type": "DIRECT_DEBIT", "details": {"mandate_id": "MD-00042", "day_of_month": 14}, "added_at": "2025-03-03T10:02:00Z"},
            {"vendor": "GOCARDLESS", "reference": "MD-00077", "type": "DIRECT_DEBIT", "details": {}, "added_at": "2025-03-03T10:02:00Z", "pending": true, "valid_from": "2025-04-01"}
        ],
        "operations_team_name": "Billing Operations",
        "meter_points": [
            {"mpxn": "1200023305967", "market": "ELECTRICITY", "status": "REGISTRATION_REQUESTED", "updated_at": "2025-03-04T09:00:00Z", "flow_sent_at": "2025-03-04T09:00:00Z"},
            {"mpxn": "3406086401", "market": "GAS", "status": "PRE_REGISTRATION", "updated_at": "2025-03-03T10:02:00Z", "flow_sent_at": null}
        ]
    }))
    .expect("the account fixture reads")
}

/// The account of ACC-1002: its document declared a transfer balance of -67.30 where its
/// ledger holds -35.00 (a plugin changed an amount on the way).
pub fn mismatched_account() -> AccountDetail {
    let mut account = account();
    account.platform_account_number = "A-2C3D4E5F".to_owned();
    account.external_account_number = "ACC-1002".to_owned();
    account.account["external_account_number"] = json!("ACC-1002");
    account.account["transfer_balance"] = json!("-67.30");
    account.reconciliation = Some(AccountReconciliation {
        state: "MISMATCH".to_owned(),
        declared: Some("-67.30".to_owned()),
        held: "-35.00".to_owned(),
        difference: Some("32.30".to_owned()),
        first_diverging: Some("transfer_balance".to_owned()),
    });
    account
}

/// The supplier's campaign report: OLD_CO's by hand; the others' from their counts, every
/// migrated account reconciled, the errored ones split between two codes.
pub fn campaign_report(supplier: &Supplier) -> CampaignReport {
    let count = |state| supplier.count(state);
    let accounts = ReportAccounts {
        staged: ImportState::ALL.into_iter().map(count).sum(),
        pending: count(ImportState::Pending),
        in_progress: count(ImportState::InProgress),
        migrated: count(ImportState::Processed),
        errored: count(ImportState::Errored),
        dry_run_errored: 0,
        cancelled: count(ImportState::Cancelled),
    };
    if supplier.code == "OLD_CO" {
        return CampaignReport {
            supplier: supplier.code.clone(),
            accounts: ReportAccounts {
                dry_run_errored: 5,
                ..accounts
            },
            data: ReportData {
                notes: 1311,
                transactions: 20544,
                statements: 2508,
                payment_instructions: 863,
            },
            reconciliation: ReportReconciliation {
                reconciled: 815,
                mismatched: 3,
                not_declared: 24,
                declared_total: "-18734.26".to_owned(),
                held_total: "-18690.86".to_owned(),
            },
            errors: error_groups(&[
                ("invalid_postcode", 4),
                ("duplicate_email", 2),
                ("balance_mismatch_on_transfer_balance", 1),
            ]),
        };
    }
    let migrated = accounts.migrated;
    CampaignReport {
        supplier: supplier.code.clone(),
        data: ReportData {
            notes: migrated,
            transactions: migrated * 12,
            statements: migrated * 2,
            payment_instructions: migrated,
        },
        reconciliation: ReportReconciliation {
            reconciled: migrated,
            mismatched: 0,
            not_declared: 0,
            declared_total: "-48210.55".to_owned(),
            held_total: "-48210.55".to_owned(),
        },
        errors: error_groups(&generated_errors(accounts.errored)),
        accounts,
    }
}

fn error_groups(groups: &[(&str, u64)]) -> Vec<ErrorGroup> {
    groups
        .iter()
        .filter(|(_, count)| *count > 0)
        .map(|(code, count)| ErrorGroup {
            code: (*code).to_owned(),
            count: *count,
        })
        .collect()
}

/// The error groups of a supplier other than OLD_CO: two thirds of its errored accounts (the
/// larger group) for a plugin past its deadline, the rest for postcodes.
fn generated_errors(errored: u64) -> [(&'static str, u64); 2] {
    [
        ("plugin_deadline_exceeded", errored - errored / 3),
        ("invalid_postcode", errored / 3),
    ]
}

fn report_row(number: &str, state: &str) -> AccountReportRow {
    AccountReportRow {
        external_account_number: number.to_owned(),
        platform_account_number: None,
        state: state.to_owned(),
        reconciliation: None,
        declared: None,
        held: None,
        difference: None,
        error_code: None,
        error_detail: None,
    }
}

fn errored_row(number: &str, code: &str, detail: &str) -> AccountReportRow {
    AccountReportRow {
        error_code: Some(code.to_owned()),
        error_detail: Some(detail.to_owned()),
        ..report_row(number, "ERRORED")
    }
}

fn migrated_row(
    number: &str,
    platform: &str,
    reconciliation: &str,
    amounts: [Option<&str>; 3],
) -> AccountReportRow {
    let [declared, held, difference] = amounts.map(|amount| amount.map(str::to_owned));
    AccountReportRow {
        platform_account_number: Some(platform.to_owned()),
        reconciliation: Some(reconciliation.to_owned()),
        declared,
        held,
        difference,
        ..report_row(number, "PROCESSED")
    }
}

/// The rows of the supplier's report, ordered by external account number as the host orders
/// them.
pub fn report_rows(supplier: &Supplier) -> Vec<AccountReportRow> {
    if supplier.code == "OLD_CO" {
        return vec![
            migrated_row(
                "ACC-1001",
                "A-1B2C3D4E",
                "RECONCILED",
                [Some("-35.00"), Some("-35.00"), Some("0.00")],
            ),
            migrated_row(
                "ACC-1002",
                "A-2C3D4E5F",
                "MISMATCH",
                [Some("-67.30"), Some("-35.00"), Some("32.30")],
            ),
            errored_row(
                "ACC-1003",
                "invalid_postcode",
                "Postcode \"XX1 1XX\" is not a UK postcode.",
            ),
            report_row("ACC-1004", "PENDING"),
            errored_row(
                "ACC-1010",
                "duplicate_email",
                "ada@example.com is already a customer.",
            ),
            migrated_row(
                "ACC-1012",
                "A-3D4E5F6A",
                "MISMATCH",
                [Some("-112.00"), Some("-104.83"), Some("7.17")],
            ),
            errored_row(
                "ACC-1013",
                "invalid_postcode",
                "Postcode \"ZZ9 9ZZ\" is not a UK postcode.",
            ),
            errored_row(
                "ACC-1014",
                "invalid_postcode",
                "billing_postcode: the billing address has no postcode, and no supply address gives one to take its place.",
            ),
            errored_row(
                "ACC-1015",
                "invalid_postcode",
                "Postcode \"N1\" is not a UK postcode.",
            ),
            errored_row(
                "ACC-1016",
                "duplicate_email",
                "grace@example.com is already a customer.",
            ),
            errored_row(
                "ACC-1017",
                "balance_mismatch_on_transfer_balance",
                "The transactions add up to -42.17, not the transfer balance -35.00.",
            ),
            migrated_row(
                "ACC-1020",
                "A-4E5F6A7B",
                "MISMATCH",
                [Some("120.00"), Some("123.93"), Some("3.93")],
            ),
            migrated_row(
                "ACC-1021",
                "A-5F6A7B8C",
                "NOT_DECLARED",
                [None, Some("0.00"), None],
            ),
        ];
    }
    let mut rows: Vec<AccountReportRow> = Vec::new();
    for (code, count) in generated_errors(supplier.count(ImportState::Errored)) {
        let detail = match code {
            "invalid_postcode" => "Postcode \"XX1 1XX\" is not a UK postcode.",
            _ => "The plugin ran past its deadline (validate-account).",
        };
        for _ in 0..count {
            let number = format!("ERR-{:05}", rows.len() + 1);
            rows.push(errored_row(&number, code, detail));
        }
    }
    rows
}

pub fn running_migration() -> Migration {
    Migration {
        id: "mig-0007".to_owned(),
        supplier: "OLD_CO".to_owned(),
        state: MigrationState::Running,
        total: 120,
        processed: 45,
        failed: 3,
        started_at: "2025-03-07T11:00:00Z".to_owned(),
        finished_at: None,
        selection: Default::default(),
    }
}

pub fn plugin() -> Plugin {
    serde_json::from_value(json!({
        "supplier": "OLD_CO",
        "sha256": OLD_CO_SHA256,
        "name": "old-co-rules",
        "version": "1.4.0",
        "size_bytes": 48213,
        "installed_at": "2025-02-27T16:40:00Z",
        "config": {"strict_postcodes": "true", "tariff_map": "legacy-v2"},
        "hooks": ["validate-account", "map-notes", "map-transactions"],
        "wit_version": "0.2.0",
        "low_priority": false,
        "recent_failures": [
            {"at": "2025-03-05T09:16:00Z", "hook": "validate-account", "error": "wasm trap: wasm `unreachable` instruction executed"},
            {"at": "2025-03-04T09:16:00Z", "hook": "map-notes", "error": "the plugin ran past its deadline (epoch interruption)"}
        ]
    }))
    .expect("the plugin fixture reads")
}

pub fn events() -> Vec<Event> {
    serde_json::from_value(json!([
        {"seq": 1, "id": "evt-0001", "type": "import_supplier.status_changed", "version": "v1", "time": "2025-03-07T10:58:00Z",
         "subject": "OLD_CO", "data": {"from": "PAUSED", "to": "ONGOING"}, "published_at": "2025-03-07T10:58:01Z"},
        {"seq": 2, "id": "evt-0002", "type": "migration.started", "version": "v1", "time": "2025-03-07T11:00:00Z",
         "subject": "OLD_CO", "data": {"migration_id": "mig-0007", "total": 120}, "published_at": "2025-03-07T11:00:01Z"},
        {"seq": 3, "id": "evt-0003", "type": "account.migrated", "version": "v1", "time": "2025-03-07T11:00:04Z",
         "subject": "A-1B2C3D4E", "data": {"external_account_number": "ACC-1001", "import_supplier": "OLD_CO", "balance": "42.17"}, "published_at": null},
        {"seq": 4, "id": "evt-0004", "type": "account.import_failed", "version": "v1", "time": "2025-03-07T11:00:05Z",
         "subject": null, "data": {"external_account_number": "ACC-1003", "code": "invalid_postcode"}, "published_at": null}
    ]))
    .expect("the events fixture reads")
}

/// The events, then two whose types differ only after their 27th character.
pub fn long_typed_events() -> Vec<Event> {
    let mut all = events();
    let more: Vec<Event> = serde_json::from_value(json!([
        {"seq": 5, "id": "evt-0005", "type": "data_import.import_process.dry_run_complete", "version": "v1", "time": "2025-03-07T11:02:00Z",
         "subject": "SSE_ENERGY_NORTH_LEGACY", "data": {"accounts": 4210, "would_fail": 12}, "published_at": null},
        {"seq": 6, "id": "evt-0006", "type": "data_import.import_process.dry_run_error", "version": "v1", "time": "2025-03-07T11:02:30Z",
         "subject": "SSE_ENERGY_NORTH_BUSINESS", "data": {"error": "the plugin ran past its deadline"}, "published_at": null}
    ]))
    .expect("the long event fixtures read");
    all.extend(more);
    all
}

pub fn relay() -> RelayStatus {
    RelayStatus {
        state: "connected".to_owned(),
        last_error: None,
        published: 2,
        last_published_at: Some("2025-03-07T11:00:01Z".to_owned()),
        lag: 2,
    }
}

/// The page of `all` after `after`, `limit` at most, as the host answers it: `after` is a
/// `seq`, or the id of an event in the log (400 for any other).
pub fn events_after(
    all: &[Event],
    after: Option<&str>,
    limit: usize,
) -> Result<EventPage, ClientError> {
    let after = match after {
        None => None,
        Some(text) => Some(match text.parse::<u64>() {
            Ok(seq) => seq,
            Err(_) => all
                .iter()
                .find(|event| event.id == text)
                .map(|event| event.seq)
                .ok_or_else(|| ClientError::Refused {
                    status: 400,
                    code: "invalid_query_parameter".to_owned(),
                    detail: format!("after: no event {text} in the log"),
                    errors: Vec::new(),
                })?,
        }),
    };
    let rest: Vec<&Event> = all
        .iter()
        .filter(|event| after.is_none_or(|after| event.seq > after))
        .collect();
    let page: Vec<Event> = rest
        .iter()
        .take(limit)
        .map(|&event| event.clone())
        .collect();
    Ok(EventPage {
        next_after: if page.len() < rest.len() {
            page.last().map(|event| event.seq.to_string())
        } else {
            None
        },
        events: page,
        relay: relay(),
    })
}
