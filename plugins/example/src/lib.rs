//! Ferry's example supplier plugin. Copy this crate to start your own (see PLUGINS.md).
//!
//! It implements every hook of `ferry:supplier-rules@0.3.0` (its account record mirrors the
//! real platform's account document, the account's ledgers included):
//! - accounts: phone numbers become E.164 (`07700 900123` → `+447700900123`, with the
//!   country code from the `default_country_code` setting, default `44`), and external
//!   account numbers must start with the `account_number_prefix` setting (when set) followed
//!   by digits;
//! - accounts' money: a last statement balance (the account's own, or a ledger's) below the
//!   `min_statement_balance` setting (when set; a debt is negative) is refused, for the
//!   supplier to migrate such accounts by hand;
//! - transactions, the account's statement transactions and the tariffs of meter points'
//!   agreements: the supplier's own product codes are mapped to the platform's through
//!   settings `product_code.<THEIRS>` = `<OURS>`;
//! - notes, statements and payment instructions pass through unchanged.
//!
//! Settings are the supplier's plugin configuration, set by the operator.

wit_bindgen::generate!({
    path: "../../wit/since_v0.3.0",
    world: "plugin",
});

use exports::ferry::supplier_rules::{
    account_rules, note_rules, payment_instruction_rules, statement_rules, transaction_rules,
};
use ferry::supplier_rules::host::{self, Level};
use ferry::supplier_rules::types::{
    Account, AccountRef, FieldError, Note, PaymentInstruction, Statement, Transaction,
};

struct Plugin;

/// The supplier's settings.
struct Settings(Vec<(String, String)>);

impl Settings {
    fn load() -> Self {
        Self(host::config())
    }
    fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    fn product_code(&self, theirs: &str) -> Option<String> {
        self.get(&format!("product_code.{theirs}"))
            .map(str::to_owned)
    }
}

fn error(attr: String, code: &str, detail: String) -> FieldError {
    FieldError {
        code: code.to_owned(),
        detail,
        attr,
    }
}

/// `07700 900123` → `+447700900123` for country code 44; numbers already in `+` form keep it.
fn to_e164(number: &str, country_code: &str) -> Option<String> {
    let digits: String = number.chars().filter(char::is_ascii_digit).collect();
    let e164 = if number.trim_start().starts_with('+') {
        format!("+{digits}")
    } else if let Some(national) = digits.strip_prefix('0') {
        format!("+{country_code}{national}")
    } else {
        return None;
    };
    (9..=16).contains(&e164.len()).then_some(e164)
}

impl account_rules::Guest for Plugin {
    fn validate_account(mut account: Account) -> Result<Account, Vec<FieldError>> {
        let settings = Settings::load();
        let country = settings
            .get("default_country_code")
            .unwrap_or("44")
            .to_owned();
        let mut errors = Vec::new();

        if let Some(prefix) = settings.get("account_number_prefix") {
            let rest = account.external_account_number.strip_prefix(prefix);
            if !rest.is_some_and(|r| !r.is_empty() && r.chars().all(|c| c.is_ascii_digit())) {
                errors.push(error(
                    "external_account_number".into(),
                    "invalid_account_number",
                    format!("Account numbers of this supplier look like {prefix}12345."),
                ));
            }
        }

        let mut normalised = 0;
        for (index, customer) in account.customers.iter_mut().enumerate() {
            for (field, number) in [
                ("mobile", &mut customer.mobile),
                ("landline", &mut customer.landline),
            ] {
                let Some(current) = number.as_deref() else {
                    continue;
                };
                match to_e164(current, &country) {
                    Some(e164) => {
                        normalised += 1;
                        *number = Some(e164);
                    }
                    None => errors.push(error(
                        format!("customers.{index}.{field}"),
                        "invalid_phone_number",
                        "Not a national or international phone number.".into(),
                    )),
                }
            }
        }
        let agreements = account
            .supply_addresses
            .iter_mut()
            .flat_map(|address| address.meter_points.iter_mut())
            .flat_map(|point| point.agreements.iter_mut());
        for agreement in agreements {
            if let Some(mapped) = settings.product_code(&agreement.tariff_code) {
                agreement.tariff_code = mapped;
            }
        }

        if let Some(minimum) = settings.get("min_statement_balance") {
            check_statement_balances(&account, minimum, &mut errors);
        }
        let statement_transactions = account
            .current_statement_transactions
            .iter_mut()
            .chain(account.historical_statement_transactions.iter_mut())
            .chain(account.ledgers.iter_mut().flat_map(|ledger| {
                ledger
                    .current_statement_transactions
                    .iter_mut()
                    .chain(ledger.historical_statement_transactions.iter_mut())
            }));
        map_product_codes(&settings, statement_transactions);
        host::log(
            Level::Info,
            "account checked",
            &[
                (
                    "external_account_number".into(),
                    account.external_account_number.clone(),
                ),
                ("phone_numbers_normalised".into(), normalised.to_string()),
            ],
        );
        if errors.is_empty() {
            Ok(account)
        } else {
            Err(errors)
        }
    }
}

/// Refuses a last statement balance, the account's own or one of its ledgers', below
/// `minimum`.
fn check_statement_balances(account: &Account, minimum: &str, errors: &mut Vec<FieldError>) {
    let own = (String::new(), &account.last_statement_balance);
    let ledgers = account
        .ledgers
        .iter()
        .enumerate()
        .map(|(index, ledger)| (format!("ledgers.{index}."), &ledger.last_statement_balance));
    for (path, balance) in std::iter::once(own).chain(ledgers) {
        let Some(balance) = balance else {
            continue;
        };
        if hundredths(balance) < hundredths(minimum) {
            errors.push(error(
                format!("{path}last_statement_balance"),
                "statement_balance_below_minimum",
                format!("A last statement balance below {minimum} is migrated by hand."),
            ));
        }
    }
}

/// A decimal (`"-42.5"`) in hundredths, anything past them cut off; `None` when it is not a
/// decimal (Ferry has checked the account's, so only a mistyped setting is `None`, which is
/// below every balance and refuses none).
fn hundredths(decimal: &str) -> Option<i64> {
    let (negative, digits) = match decimal.trim().strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, decimal.trim()),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let cents: String = fraction.chars().chain("00".chars()).take(2).collect();
    if !whole
        .chars()
        .chain(cents.chars())
        .all(|c| c.is_ascii_digit())
    {
        return None;
    }
    let value: i64 = format!("0{whole}{cents}").parse().ok()?;
    Some(if negative { -value } else { value })
}

/// Maps the supplier's product codes of `transactions` to the platform's.
fn map_product_codes<'a>(
    settings: &Settings,
    transactions: impl IntoIterator<Item = &'a mut Transaction>,
) {
    for transaction in transactions {
        if let Some(mapped) = transaction
            .product_code
            .as_deref()
            .and_then(|code| settings.product_code(code))
        {
            transaction.product_code = Some(mapped);
        }
    }
}

impl transaction_rules::Guest for Plugin {
    fn map_transactions(
        _target: AccountRef,
        mut transactions: Vec<Transaction>,
    ) -> Result<Vec<Transaction>, Vec<FieldError>> {
        map_product_codes(&Settings::load(), &mut transactions);
        Ok(transactions)
    }
}

impl note_rules::Guest for Plugin {
    fn map_notes(_target: AccountRef, notes: Vec<Note>) -> Result<Vec<Note>, Vec<FieldError>> {
        Ok(notes)
    }
}

impl statement_rules::Guest for Plugin {
    fn map_statements(
        _target: AccountRef,
        statements: Vec<Statement>,
    ) -> Result<Vec<Statement>, Vec<FieldError>> {
        Ok(statements)
    }
}

impl payment_instruction_rules::Guest for Plugin {
    fn map_payment_instruction(
        _target: AccountRef,
        instruction: PaymentInstruction,
    ) -> Result<PaymentInstruction, Vec<FieldError>> {
        Ok(instruction)
    }
}

export!(Plugin);
