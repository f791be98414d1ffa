//! The WIT records of `ferry:supplier-rules` as Ferry hands them to a hook: borrowed
//! from the request's JSON, so that each string is copied once, straight into the guest's
//! memory. What a hook returns is lifted into the owned records `bindgen!` generates
//! ([`super::bindings`]).
//!
//! These mirror the records every version shares (`wit/since_v0.3.0/supplier-rules.wit`) field
//! for field, and the account records of `wit/since_v0.1.0/` (those of 0.2.0 and later are in
//! [`super::account_document`] and the version's own module). Wasmtime checks them
//! against the component's own types when a plugin is loaded (`Runtime::load` types every hook it
//! exports), so a mismatch refuses the plugin and never reaches a call; the end-to-end tests
//! load the example plugin, which exports every hook.

use wasmtime::component::{ComponentType, Lower};

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Address<'a> {
    #[component(name = "address-line-1")]
    pub address_line_1: &'a str,
    #[component(name = "address-line-2")]
    pub address_line_2: Option<&'a str>,
    #[component(name = "address-line-3")]
    pub address_line_3: Option<&'a str>,
    pub town: &'a str,
    pub postcode: &'a str,
    pub country: &'a str,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Customer<'a> {
    #[component(name = "given-name")]
    pub given_name: &'a str,
    #[component(name = "family-name")]
    pub family_name: &'a str,
    pub email: &'a str,
    pub mobile: Option<&'a str>,
    pub landline: Option<&'a str>,
    #[component(name = "date-of-birth")]
    pub date_of_birth: Option<&'a str>,
    #[component(name = "is-primary")]
    pub is_primary: bool,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct SupplyPoint<'a> {
    pub market: &'a str,
    pub identifier: &'a str,
    #[component(name = "product-code")]
    pub product_code: Option<&'a str>,
    #[component(name = "supply-start-date")]
    pub supply_start_date: Option<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Account<'a> {
    #[component(name = "import-supplier")]
    pub import_supplier: &'a str,
    #[component(name = "external-account-number")]
    pub external_account_number: &'a str,
    #[component(name = "billing-name")]
    pub billing_name: &'a str,
    #[component(name = "billing-address")]
    pub billing_address: Address<'a>,
    pub customers: Vec<Customer<'a>>,
    #[component(name = "supply-points")]
    pub supply_points: Vec<SupplyPoint<'a>>,
    #[component(name = "open-statement-period-start")]
    pub open_statement_period_start: Option<&'a str>,
    #[component(name = "transfer-balance")]
    pub transfer_balance: &'a str,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct AccountRef<'a> {
    #[component(name = "import-supplier")]
    pub import_supplier: &'a str,
    #[component(name = "external-account-number")]
    pub external_account_number: &'a str,
    #[component(name = "platform-account-number")]
    pub platform_account_number: &'a str,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Note<'a> {
    pub body: Option<&'a str>,
    #[component(name = "document-paths")]
    pub document_paths: Vec<&'a str>,
    #[component(name = "created-at")]
    pub created_at: Option<&'a str>,
    #[component(name = "is-pinned")]
    pub is_pinned: bool,
    #[component(name = "unpin-at")]
    pub unpin_at: Option<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct LineItem<'a> {
    #[component(name = "rate-band")]
    pub rate_band: &'a str,
    #[component(name = "start-date")]
    pub start_date: &'a str,
    #[component(name = "end-date")]
    pub end_date: &'a str,
    #[component(name = "number-of-units")]
    pub number_of_units: &'a str,
    #[component(name = "net-amount")]
    pub net_amount: &'a str,
    #[component(name = "price-per-unit")]
    pub price_per_unit: &'a str,
    pub units: Vec<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct TaxItem<'a> {
    pub amount: &'a str,
    #[component(name = "tax-type")]
    pub tax_type: &'a str,
    #[component(name = "value-taxed")]
    pub value_taxed: &'a str,
    pub rate: &'a str,
    #[component(name = "unit-type")]
    pub unit_type: &'a str,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Transaction<'a> {
    #[component(name = "transaction-id")]
    pub transaction_id: &'a str,
    #[component(name = "transaction-date")]
    pub transaction_date: &'a str,
    pub amount: &'a str,
    #[component(name = "type")]
    pub type_: &'a str,
    pub reason: Option<&'a str>,
    pub reference: Option<&'a str>,
    #[component(name = "payment-type")]
    pub payment_type: Option<&'a str>,
    #[component(name = "display-note")]
    pub display_note: Option<&'a str>,
    pub note: Option<&'a str>,
    #[component(name = "product-code")]
    pub product_code: Option<&'a str>,
    #[component(name = "line-items")]
    pub line_items: Option<Vec<LineItem<'a>>>,
    #[component(name = "tax-items")]
    pub tax_items: Option<Vec<TaxItem<'a>>>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct Statement<'a> {
    #[component(name = "bill-period-from-date")]
    pub bill_period_from_date: &'a str,
    #[component(name = "bill-period-to-date")]
    pub bill_period_to_date: &'a str,
    #[component(name = "statement-id")]
    pub statement_id: &'a str,
    #[component(name = "issued-date")]
    pub issued_date: &'a str,
    pub number: &'a str,
    #[component(name = "gross-amount")]
    pub gross_amount: &'a str,
    #[component(name = "statement-path")]
    pub statement_path: Option<&'a str>,
}

#[derive(ComponentType, Lower)]
#[component(record)]
pub struct PaymentInstruction<'a> {
    pub vendor: &'a str,
    pub reference: &'a str,
    #[component(name = "type")]
    pub type_: &'a str,
}
