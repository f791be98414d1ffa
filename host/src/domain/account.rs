//! The account payload suppliers stage, and Ferry's built-in rules for it.
//!
//! Kept deliberately small (DESIGN.md): plugins map richer supplier data onto it. Reading a
//! payload reports every problem at once; the typed [`AccountPayload`] that comes out is what
//! is staged and later turned into a platform account.

use super::money::Money;
use super::validation::{FieldErrors, Items, ObjectReader, Optional, Presence, Required, StrRule};
use chrono::{NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const MAX_EXTERNAL_ACCOUNT_NUMBER: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AccountPayload {
    /// Import supplier code.
    pub import_supplier: String,
    /// Account number in the supplier's own system (at most 128 characters).
    pub external_account_number: String,
    pub billing_name: String,
    pub billing_address: Address,
    /// At least one customer; exactly one is primary (the first, unless one is flagged).
    pub customers: Vec<Customer>,
    #[serde(default)]
    pub supply_points: Vec<SupplyPoint>,
    /// First day of the open statement period; defaults to the day the account is created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_statement_period_start: Option<NaiveDate>,
    /// Balance carried over from the old supplier, printed with two places.
    #[schema(value_type = String, example = "12.30")]
    pub transfer_balance: Money,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Address {
    pub address_line_1: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line_2: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address_line_3: Option<String>,
    pub town: String,
    pub postcode: String,
    /// ISO 3166-1 alpha-2 country code, e.g. `GB`.
    pub country: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Customer {
    pub given_name: String,
    pub family_name: String,
    pub email: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobile: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landline: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date_of_birth: Option<NaiveDate>,
    pub is_primary: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Market {
    Electricity,
    Gas,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SupplyPoint {
    pub market: Market,
    /// MPAN / MPRN or the market's own identifier.
    pub identifier: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product_code: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supply_start_date: Option<NaiveDate>,
}

/// Limits that depend on configuration.
#[derive(Debug, Clone, Copy)]
pub struct AccountLimits {
    pub max_items: usize,
}

const TEXT: StrRule = StrRule::max(255);
const SHORT: StrRule = StrRule::max(64);

/// Reads and validates an account payload, reporting every problem at once.
pub fn read_account(body: &Value, limits: AccountLimits) -> Result<AccountPayload, FieldErrors> {
    let items = |min| Items {
        min,
        max: limits.max_items,
    };
    let mut r = ObjectReader::root(body)?;
    let supplier = r.string("import_supplier", Required, SHORT);
    let external = r.string(
        "external_account_number",
        Required,
        StrRule::max(MAX_EXTERNAL_ACCOUNT_NUMBER),
    );
    if let Some(number) = &external
        && (number.trim() != number || number.contains('/'))
    {
        r.error(
            r.attr("external_account_number"),
            "invalid",
            "No leading or trailing spaces and no `/`.",
        );
    }
    let billing_name = r.string("billing_name", Required, TEXT);
    let address = r.object("billing_address", Required, read_address);
    let customers = r.object_array("customers", Required, items(1), read_customer);
    if let Some(list) = &customers
        && list.iter().filter(|c| c.is_primary).count() > 1
    {
        r.error(
            r.attr("customers"),
            "multiple_primary_customers",
            "At most one customer may be primary.",
        );
    }
    let supply_points = r.object_array("supply_points", Optional, items(0), read_supply_point);
    if let Some(points) = &supply_points {
        for (index, point) in points.iter().enumerate() {
            let earlier = &points[..index];
            if earlier
                .iter()
                .any(|p| p.market == point.market && p.identifier == point.identifier)
            {
                r.error(
                    r.attr(&format!("supply_points.{index}.identifier")),
                    "duplicate_supply_point",
                    "This supply point is listed twice.",
                );
            }
        }
    }
    let period_start = r.date("open_statement_period_start", Optional);
    let balance = r.decimal("transfer_balance", Optional, 2);
    r.finish(|| {
        let mut customers = customers?;
        if !customers.iter().any(|c| c.is_primary)
            && let Some(first) = customers.first_mut()
        {
            first.is_primary = true;
        }
        Some(AccountPayload {
            import_supplier: supplier?,
            external_account_number: external?,
            billing_name: billing_name?,
            billing_address: address?,
            customers,
            supply_points: supply_points.unwrap_or_default(),
            open_statement_period_start: period_start,
            transfer_balance: balance.map(Money).unwrap_or(Money::ZERO),
        })
    })
}

fn read_address(r: &mut ObjectReader<'_>) -> Option<Address> {
    let line_1 = r.string("address_line_1", Required, TEXT);
    let line_2 = r.string("address_line_2", Optional, TEXT);
    let line_3 = r.string("address_line_3", Optional, TEXT);
    let town = r.string("town", Required, TEXT);
    let postcode = r.string("postcode", Required, StrRule::max(16));
    let country = r.string("country", Required, StrRule::max(2));
    if let Some(code) = &country
        && !(code.len() == 2 && code.chars().all(|c| c.is_ascii_uppercase()))
    {
        r.error(
            r.attr("country"),
            "invalid",
            "Use an ISO 3166-1 alpha-2 code such as GB.",
        );
    }
    Some(Address {
        address_line_1: line_1?,
        address_line_2: line_2,
        address_line_3: line_3,
        town: town?,
        postcode: postcode?,
        country: country?,
    })
}

fn read_customer(r: &mut ObjectReader<'_>) -> Option<Customer> {
    let given = r.string("given_name", Required, TEXT);
    let family = r.string("family_name", Required, TEXT);
    let email = r.string("email", Required, StrRule::max(254));
    if let Some(address) = &email
        && !is_valid_email(address)
    {
        r.error(r.attr("email"), "invalid", "Enter a valid email address.");
    }
    let mobile = read_phone(r, "mobile");
    let landline = read_phone(r, "landline");
    let birth = r.date("date_of_birth", Optional);
    if let Some(date) = birth
        && date > Utc::now().date_naive()
    {
        r.error(
            r.attr("date_of_birth"),
            "invalid",
            "The date of birth is in the future.",
        );
    }
    let primary = r.boolean("is_primary", Optional);
    Some(Customer {
        given_name: given?,
        family_name: family?,
        email: email?,
        mobile,
        landline,
        date_of_birth: birth,
        is_primary: primary.unwrap_or(false),
    })
}

fn read_phone(r: &mut ObjectReader<'_>, name: &'static str) -> Option<String> {
    let text = r.string(name, Optional, StrRule::max(32))?;
    match normalise_phone(&text) {
        Some(number) => Some(number),
        None => {
            r.error(
                r.attr(name),
                "invalid_phone_number",
                "Enter a valid phone number.",
            );
            None
        }
    }
}

fn read_supply_point(r: &mut ObjectReader<'_>) -> Option<SupplyPoint> {
    let market_text = r.string("market", Required, StrRule::max(16));
    let market = market_text.as_deref().and_then(|text| match text {
        "ELECTRICITY" => Some(Market::Electricity),
        "GAS" => Some(Market::Gas),
        _ => None,
    });
    if let (Some(text), None) = (&market_text, market) {
        r.error(
            r.attr("market"),
            "invalid_choice",
            format!("\"{text}\" is not a valid choice: use ELECTRICITY or GAS."),
        );
    }
    let identifier = r.string("identifier", Required, SHORT);
    let product_code = r.string("product_code", Presence::Optional, SHORT);
    let start = r.date("supply_start_date", Optional);
    Some(SupplyPoint {
        market: market?,
        identifier: identifier?,
        product_code,
        supply_start_date: start,
    })
}

/// A phone number with spaces, dashes, dots and brackets removed: an optional `+` and 7 to 15
/// digits (E.164's bound). `None` when it is not one.
pub fn normalise_phone(text: &str) -> Option<String> {
    let compact: String = text
        .chars()
        .filter(|c| !matches!(c, ' ' | '-' | '.' | '(' | ')'))
        .collect();
    let digits = compact.strip_prefix('+').unwrap_or(&compact);
    let valid = (7..=15).contains(&digits.len())
        && digits.chars().all(|c| c.is_ascii_digit())
        && !(compact.starts_with('+') && digits.starts_with('0'));
    valid.then_some(compact)
}

pub fn is_valid_email(address: &str) -> bool {
    email_address::EmailAddress::is_valid(address)
        && address
            .rsplit_once('@')
            .is_some_and(|(_, domain)| domain.contains('.') && !domain.ends_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const LIMITS: AccountLimits = AccountLimits { max_items: 100 };

    pub fn valid_account() -> Value {
        json!({
            "import_supplier": "OLD_CO",
            "external_account_number": "ACC-1",
            "billing_name": "Ada Lovelace",
            "billing_address": {"address_line_1": "1 Analytical St", "town": "London", "postcode": "N1 1AA", "country": "GB"},
            "customers": [{"given_name": "Ada", "family_name": "Lovelace", "email": "ada@example.com", "landline": "020 7946 0000"}],
            "transfer_balance": 12.3
        })
    }

    #[test]
    fn reads_a_valid_account() {
        let account = read_account(&valid_account(), LIMITS).expect("valid");
        assert_eq!(account.transfer_balance.to_string(), "12.30");
        assert!(account.customers[0].is_primary);
        assert_eq!(
            account.customers[0].landline.as_deref(),
            Some("02079460000")
        );
    }

    #[test]
    fn reports_every_problem() {
        let mut body = valid_account();
        body["customers"][0]["landline"] = json!("not a phone");
        body["customers"][0]["email"] = json!("nobody");
        body["billing_address"]["country"] = json!("United Kingdom");
        body["surprise"] = json!(1);
        body["transfer_balance"] = json!("1.234");
        let errors = read_account(&body, LIMITS).expect_err("invalid");
        let found: Vec<(String, String)> = errors
            .0
            .iter()
            .map(|e| (e.attr.clone().unwrap_or_default(), e.code.clone()))
            .collect();
        for expected in [
            ("customers.0.landline", "invalid_phone_number"),
            ("customers.0.email", "invalid"),
            ("billing_address.country", "max_length"),
            ("surprise", "unknown_field"),
            ("transfer_balance", "max_decimal_places"),
        ] {
            assert!(
                found.contains(&(expected.0.to_owned(), expected.1.to_owned())),
                "{expected:?} missing from {found:?}"
            );
        }
    }

    #[test]
    fn phone_numbers() {
        assert_eq!(
            normalise_phone("+44 (0)20 7946-0000").as_deref(),
            Some("+4402079460000")
        );
        assert_eq!(
            normalise_phone("+44 20 7946 0000").as_deref(),
            Some("+442079460000")
        );
        assert!(normalise_phone("12345").is_none());
        assert!(normalise_phone("+0123456789").is_none());
        assert!(normalise_phone("0800-ABC").is_none());
    }
}
