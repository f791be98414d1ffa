//! `ferry meter-point ...`: an operator moving a meter point's registration on (Ferry has no
//! industry connection, so registration flows wait for this).

use super::admin_client::{AdminClient, failed};
use super::output::print_json;
use clap::Subcommand;
use ferry_admin_api::MeterPointChange;

#[derive(Debug, Subcommand)]
pub enum MeterPointAction {
    /// Set a meter point's registration status (ON_SUPPLY, REGISTRATION_REJECTED, ...).
    SetStatus {
        /// The platform account number (A-…).
        account: String,
        /// The MPAN or MPRN.
        mpxn: String,
        status: String,
    },
}

pub async fn run(client: &AdminClient, action: MeterPointAction) -> anyhow::Result<()> {
    match action {
        MeterPointAction::SetStatus {
            account,
            mpxn,
            status,
        } => {
            let change = MeterPointChange {
                status: status.to_uppercase(),
            };
            let point = client
                .set_meter_point_status(&account, &mpxn, &change)
                .await
                .map_err(|error| failed(client, error))?;
            Ok(print_json(&point)?)
        }
    }
}
