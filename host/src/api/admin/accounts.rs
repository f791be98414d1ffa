//! `/admin/v1/accounts/{number}`: everything on an imported account; and operators moving a
//! meter point's registration on (Ferry has no industry connection).

use super::moment;
use crate::api::AppState;
use crate::api::error::{ApiError, ErrorBody};
use crate::api::extract::{JsonBody, OperatorCaller, PathParams};
use crate::domain::additions::AccountView;
use crate::domain::error::DomainError;
use crate::domain::meter_points::MeterPoint as DomainMeterPoint;
use crate::domain::notes::NoteSource;
use crate::domain::validation::{ObjectReader, Required, StrRule};
use axum::extract::State;
use axum::routing::{get, patch};
use axum::{Json, Router};
use ferry_admin_api::{
    AccountDetail, AccountReconciliation, ClosedStatement, LedgerEntry, MeterPoint,
    MeterPointChange, Note, PaymentInstruction, Statement, Transaction,
};
use serde::Serialize;
use serde_json::Value;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/v1/accounts/{number}", get(get_account))
        .route(
            "/admin/v1/accounts/{number}/meter-points/{mpxn}",
            patch(set_meter_point_status),
        )
}

#[utoipa::path(get, path = "/admin/v1/accounts/{number}", tag = "admin",
    params(("number" = String, Path, description = "platform account number")),
    responses((status = 200, body = AccountDetail), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn get_account(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams(number): PathParams<String>,
) -> Result<Json<AccountDetail>, ApiError> {
    let meter_points = state.additions.account_meter_points(&number).await?;
    let mut answer = account_answer(state.additions.account_view(&number).await?);
    answer.meter_points = meter_points.into_iter().map(meter_point_answer).collect();
    Ok(Json(answer))
}

/// Moves a meter point's registration on to `status` (one of the real platform's).
#[utoipa::path(patch, path = "/admin/v1/accounts/{number}/meter-points/{mpxn}", tag = "admin",
    params(("number" = String, Path, description = "platform account number"), ("mpxn" = String, Path, description = "MPAN or MPRN")),
    request_body = MeterPointChange,
    responses((status = 200, body = MeterPoint), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)),
    security(("operator" = [])))]
pub async fn set_meter_point_status(
    State(state): State<AppState>,
    _: OperatorCaller,
    PathParams((number, mpxn)): PathParams<(String, String)>,
    JsonBody(body): JsonBody,
) -> Result<Json<MeterPoint>, ApiError> {
    let mut r = ObjectReader::root(&body).map_err(DomainError::invalid)?;
    let status = r.string("status", Required, StrRule::max(64));
    let status = r.finish(|| status).map_err(DomainError::invalid)?;
    let point = state
        .additions
        .set_meter_point_status(&number, &mpxn, &status)
        .await?;
    Ok(Json(meter_point_answer(point)))
}

fn meter_point_answer(point: DomainMeterPoint) -> MeterPoint {
    MeterPoint {
        market: as_json(&point.market)
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        mpxn: point.mpxn,
        status: point.status,
        updated_at: moment(point.updated_at),
        flow_sent_at: point.flow_sent_at.map(moment),
    }
}

/// A record kept as the supplier sent it (line items, the staged account) in its JSON form.
fn as_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn account_answer(view: AccountView) -> AccountDetail {
    AccountDetail {
        platform_account_number: view.platform_account_number,
        import_supplier: view.import_supplier,
        external_account_number: view.external_account_number,
        created_at: moment(view.created_at),
        account: as_json(&view.account),
        open_statement_period_start: view.open_statement_period_start.to_string(),
        operations_team_name: view.operations_team_name,
        balance: view.balance.to_string(),
        reconciliation: Some(AccountReconciliation {
            state: view.reconciliation.state.as_str().to_owned(),
            declared: view.reconciliation.declared.map(|money| money.to_string()),
            held: view.reconciliation.held.to_string(),
            difference: view
                .reconciliation
                .difference
                .map(|money| money.to_string()),
            first_diverging: view.reconciliation.first_diverging,
        }),
        closed_statements: view
            .closed_statements
            .into_iter()
            .map(|statement| ClosedStatement {
                ledger: statement.ledger,
                first_transaction_date: statement.first_transaction_date.map(|d| d.to_string()),
                closing_date: statement.closing_date.to_string(),
                issued_date: statement.issued_date.to_string(),
                closing_balance: statement.closing_balance.to_string(),
                transactions: statement.transactions,
            })
            .collect(),
        notes: view
            .notes
            .into_iter()
            .map(|note| Note {
                id: note.id,
                body: note.body,
                document_paths: note.document_paths,
                created_at: moment(note.created_at),
                is_pinned: note.is_pinned,
                unpin_at: note.unpin_at.map(moment),
                source: match note.source {
                    NoteSource::Import => "IMPORT",
                    NoteSource::System => "SYSTEM",
                }
                .to_owned(),
                external_id: note.external_id,
                is_archived: note.is_archived,
            })
            .collect(),
        transactions: view
            .transactions
            .into_iter()
            .map(|transaction| Transaction {
                transaction_id: transaction.transaction_id,
                transaction_date: transaction.transaction_date.to_string(),
                amount: transaction.amount.to_string(),
                kind: transaction.kind.as_str().to_owned(),
                reason: transaction.reason,
                reference: transaction.reference,
                payment_type: transaction.payment_type,
                display_note: transaction.display_note,
                note: transaction.note,
                product_code: transaction.product_code,
                line_items: transaction
                    .line_items
                    .map(|items| items.iter().map(as_json).collect()),
                tax_items: transaction
                    .tax_items
                    .map(|items| items.iter().map(as_json).collect()),
                description: transaction.description,
                original_transaction_date: transaction
                    .original_transaction_date
                    .map(|date| date.to_string()),
                status: transaction.status,
                ledger_entry_id: transaction.ledger_entry_id,
                historical: transaction.historical,
                ledger: transaction.ledger,
            })
            .collect(),
        ledger_entries: view
            .ledger_entries
            .into_iter()
            .map(|entry| LedgerEntry {
                id: entry.id,
                transaction_id: entry.transaction_id,
                kind: entry.kind.as_str().to_owned(),
                amount: entry.amount.to_string(),
                balance_after: entry.balance_after.to_string(),
                transaction_date: entry.transaction_date.to_string(),
                posted_at: moment(entry.posted_at),
            })
            .collect(),
        statements: view
            .statements
            .into_iter()
            .map(|statement| Statement {
                bill_period_from_date: statement.bill_period_from_date.to_string(),
                bill_period_to_date: statement.bill_period_to_date.to_string(),
                statement_id: statement.statement_id,
                issued_date: statement.issued_date.map(|date| date.to_string()),
                number: statement.number,
                gross_amount: statement.gross_amount.map(|amount| amount.to_string()),
                statement_path: statement.statement_path,
            })
            .collect(),
        payment_instructions: view
            .payment_instructions
            .into_iter()
            .map(|instruction| PaymentInstruction {
                vendor: instruction.vendor,
                reference: instruction.reference,
                kind: instruction.kind,
                details: instruction.details,
                added_at: moment(instruction.added_at),
                pending: instruction.pending,
                ledger_code: instruction.terms.ledger_code,
                valid_from: instruction.terms.valid_from.map(|date| date.to_string()),
                use_for_scheduled_payments: instruction.terms.use_for_scheduled_payments,
            })
            .collect(),
        meter_points: Vec::new(),
    }
}
