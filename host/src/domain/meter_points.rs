//! The meter points of an imported account and their registration: the statuses the real
//! platform reports, the registration flows a supplier sends, and an operator moving a flow
//! on. Ferry has no industry connection, so a flow is recorded (and its
//! `*.change_of_supply.gain.initiated` event published) and stays `REGISTRATION_REQUESTED`
//! until an operator moves it on through the admin API, which lets a supplier test its whole
//! flow.

use super::account::{AccountPayload as PlatformAccountData, Market};
use super::additions::Additions;
use super::api_key::ApiKeyRecord;
use super::error::DomainError;
use super::events;
use super::supplier::NamedSupplier;
use super::validation::{FieldError, FieldErrors};
use crate::domain::storage::retrying;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

/// Where every meter point starts.
pub const PRE_REGISTRATION: &str = "PRE_REGISTRATION";
/// What a registration flow sent moves a meter point to.
pub const REGISTRATION_REQUESTED: &str = "REGISTRATION_REQUESTED";
/// The statuses a new registration flow may be sent from.
const REGISTRABLE: [&str; 7] = [
    PRE_REGISTRATION,
    "UNABLE_TO_REGISTER",
    "NOMINATION_REJECTED",
    "OFFER_REJECTED",
    "REGISTRATION_REJECTED",
    "REGISTRATION_WITHDRAWN",
    "REGISTRATION_OBJECTED",
];

/// One meter point's registration, as kept on the account.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeterPoint {
    /// The MPAN or MPRN.
    pub mpxn: String,
    pub market: Market,
    /// One of the real platform's statuses (`reference_enums.json`).
    pub status: String,
    pub updated_at: DateTime<Utc>,
    /// When the last registration flow was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flow_sent_at: Option<DateTime<Utc>>,
}

/// What sending a registration flow did for one meter point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlowResult {
    pub mpxn: String,
    pub sent: bool,
    /// Why it was not sent.
    pub error_detail: Option<String>,
}

/// The meter points the account was migrated with (MPAN / MPRN and market).
pub fn meter_points_of(data: &PlatformAccountData) -> Vec<(String, Market)> {
    data.meter_points()
}

impl Additions {
    /// Every meter point of the account with its registration, in the account's order.
    async fn meter_points(
        &self,
        number: &str,
        data: &PlatformAccountData,
        since: DateTime<Utc>,
    ) -> Result<Vec<MeterPoint>, DomainError> {
        let kept = self.store.meter_points(number).await?;
        Ok(meter_points_of(data)
            .into_iter()
            .map(|(mpxn, market)| {
                kept.iter()
                    .find(|point| point.mpxn == mpxn)
                    .cloned()
                    .unwrap_or(MeterPoint {
                        mpxn,
                        market,
                        status: PRE_REGISTRATION.to_owned(),
                        updated_at: since,
                        flow_sent_at: None,
                    })
            })
            .collect())
    }

    /// `GET meterpoint-statuses-for-account/...`: the meter points of an imported account
    /// with their status (reads work whatever the supplier's status).
    pub async fn meter_point_statuses(
        &self,
        key: &ApiKeyRecord,
        supplier: &str,
        external: &str,
    ) -> Result<Vec<MeterPoint>, DomainError> {
        let target = self
            .imported_account(key, NamedSupplier::default(), supplier, external)
            .await?;
        let account = self.platform_account(&target.account.number).await?;
        let points = self
            .meter_points(&account.number, &account.data, account.created_at)
            .await?;
        if points.is_empty() {
            return Err(DomainError::NoMeterPoints(account.number));
        }
        Ok(points)
    }

    /// `POST send-registration-flows/...`: marks every meter point that can be registered
    /// `REGISTRATION_REQUESTED`, with its gain event, in one write; the others answer why not.
    pub async fn send_registration_flows(
        &self,
        key: &ApiKeyRecord,
        supplier: &str,
        external: &str,
    ) -> Result<Vec<FlowResult>, DomainError> {
        let target = self
            .target(key, NamedSupplier::default(), supplier, external)
            .await?;
        let account = self.platform_account(&target.account.number).await?;
        let number = account.number.clone();
        let points = self
            .meter_points(&number, &account.data, account.created_at)
            .await?;
        if points.is_empty() {
            return Err(DomainError::NoMeterPoints(number));
        }
        let now = Utc::now();
        let results = retrying(|| async {
            let mut unit = self.store.account_unit(&number).await?;
            let mut results = Vec::with_capacity(points.len());
            for point in &points {
                let current = unit.meter_point(&point.mpxn).await?;
                let status = current
                    .as_ref()
                    .map_or(point.status.as_str(), |p| p.status.as_str());
                if !REGISTRABLE.contains(&status) {
                    results.push(FlowResult {
                        mpxn: point.mpxn.clone(),
                        sent: false,
                        error_detail: Some(format!(
                            "Meter point {} is {status}: its registration is under way or done.",
                            point.mpxn
                        )),
                    });
                    continue;
                }
                let sent = MeterPoint {
                    status: REGISTRATION_REQUESTED.to_owned(),
                    updated_at: now,
                    flow_sent_at: Some(now),
                    ..point.clone()
                };
                unit.set_meter_point(&sent)?;
                unit.enqueue(events::gain_initiated(&number, point.market, &point.mpxn)?)?;
                results.push(FlowResult {
                    mpxn: point.mpxn.clone(),
                    sent: true,
                    error_detail: None,
                });
            }
            unit.commit().await?;
            Ok(results)
        })
        .await?;
        Ok(results)
    }

    /// An operator moves a meter point's registration on (Ferry has no industry connection).
    pub async fn set_meter_point_status(
        &self,
        number: &str,
        mpxn: &str,
        status: &str,
    ) -> Result<MeterPoint, DomainError> {
        let statuses = &super::reference::enums().meter_point_statuses;
        if !statuses.iter().any(|known| known == status) {
            return Err(DomainError::invalid(FieldErrors::single(FieldError::new(
                "status".to_owned(),
                "invalid_choice",
                format!("\"{status}\" is not a meter point status."),
            ))));
        }
        let account = self
            .store
            .account(number)
            .await?
            .ok_or(DomainError::AccountNotFound)?;
        let point = self
            .meter_points(number, &account.data, account.created_at)
            .await?
            .into_iter()
            .find(|point| point.mpxn == mpxn)
            .ok_or(DomainError::MeterPointNotFound)?;
        let now = Utc::now();
        // Read and written in one unit, so that a registration flow sent meanwhile is not
        // lost.
        let changed = retrying(|| async {
            let mut unit = self.store.account_unit(number).await?;
            let current = unit
                .meter_point(mpxn)
                .await?
                .unwrap_or_else(|| point.clone());
            let next = MeterPoint {
                status: status.to_owned(),
                updated_at: now,
                ..current
            };
            unit.set_meter_point(&next)?;
            unit.commit().await?;
            Ok(next)
        })
        .await?;
        Ok(changed)
    }

    /// The meter points of account `number` (for the admin view).
    pub async fn account_meter_points(&self, number: &str) -> Result<Vec<MeterPoint>, DomainError> {
        let account = self
            .store
            .account(number)
            .await?
            .ok_or(DomainError::AccountNotFound)?;
        self.meter_points(number, &account.data, account.created_at)
            .await
    }
}
