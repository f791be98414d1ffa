//! `payment-instruction/create/`: an instruction confirmed with its vendor, then kept.

use super::{Additions, Request};
use crate::domain::api_key::ApiKeyRecord;
use crate::domain::campaign::{Counts, counter};
use crate::domain::error::DomainError;
use crate::domain::events;
use crate::domain::payment_instruction::{
    PaymentInstruction, PaymentInstructionInput, confirm_with_vendor, read_payment_instruction,
};
use crate::domain::ports::Hook;
use crate::domain::storage::retrying;
use crate::domain::validation::Reported;
use chrono::Utc;
use serde_json::Value;

impl Additions {
    fn parse_payment_instruction(
        &self,
        body: &Value,
    ) -> Result<(String, String, PaymentInstructionInput), DomainError> {
        let posted =
            read_payment_instruction(body, self.limits.max_items, |code| self.vendors.knows(code))
                .map_err(DomainError::invalid)?;
        let external = posted.account.external_account_number().to_owned();
        Ok((
            posted.account.import_supplier.clone(),
            external,
            posted.instruction(),
        ))
    }

    /// Confirms the instruction with its vendor and keeps it; returns the platform account
    /// number and the reference kept. Sending the same instruction again is harmless.
    pub async fn add_payment_instruction(
        &self,
        key: &ApiKeyRecord,
        body: &Value,
    ) -> Result<Reported<(String, String)>, DomainError> {
        let Request {
            target,
            posted: input,
            ignored,
            ..
        } = self
            .read_request(key, body, Hook::MapPaymentInstruction, None, |body| {
                self.parse_payment_instruction(body)
            })
            .await?;
        let PaymentInstructionInput {
            vendor,
            reference,
            kind,
            terms,
        } = input;
        let number = target.account.number.clone();
        let supplier = target.supplier.code.clone();
        // Read, then let go of the account while the vendor answers.
        let known = self
            .store
            .account_unit(&number)
            .await?
            .payment_instruction(&vendor, &reference)
            .await?
            .is_some();
        if known {
            return Ok(Reported {
                value: (number, reference),
                ignored,
            });
        }
        // Not worth asking the vendor for what could not be kept.
        self.store.writable()?;
        let details = confirm_with_vendor(self.vendors.as_ref(), &vendor, &reference).await?;
        let instruction = PaymentInstruction {
            vendor,
            reference: reference.clone(),
            kind,
            details,
            added_at: Utc::now(),
            pending: false,
            terms,
        };
        retrying(|| async {
            let mut unit = self.store.account_unit(&number).await?;
            // Sent again meanwhile: kept once.
            if unit
                .payment_instruction(&instruction.vendor, &instruction.reference)
                .await?
                .is_none()
            {
                unit.add_payment_instruction(&instruction).await?;
                unit.enqueue(events::payment_method_new(&number, &instruction)?)?;
                let mut counts = Counts::default();
                counts.add(counter::PAYMENT_INSTRUCTIONS, 1);
                unit.count(&supplier, &counts)?;
                unit.commit().await?;
            }
            Ok(())
        })
        .await?;
        Ok(Reported {
            value: (number, reference),
            ignored,
        })
    }
}
