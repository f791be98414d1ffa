//! `/admin/v1/operations-teams`: the teams an account can be allocated to when it is migrated
//! (`process/`'s `operations_team_name` must name one of them).

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Body of `POST /admin/v1/operations-teams`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewOperationsTeam {
    #[schema(min_length = 1, max_length = 255, example = "Billing Operations")]
    pub name: String,
}

/// An operations team.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
pub struct OperationsTeam {
    pub name: String,
    pub created_at: String,
}
