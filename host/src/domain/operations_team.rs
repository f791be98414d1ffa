//! Operations teams: the platform's teams an account can be allocated to when it is
//! migrated (`process/`'s `operations_team_name`). Operators manage them; a supplier can
//! only name one that exists.

use super::validation::{FieldErrors, ObjectReader, Required, StrRule};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest team name.
pub const MAX_TEAM_NAME: usize = 255;

/// A team, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OperationsTeam {
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// Reads `{name}`, the body that creates a team.
pub fn read_new_team(body: &Value, now: DateTime<Utc>) -> Result<OperationsTeam, FieldErrors> {
    let mut r = ObjectReader::root(body)?;
    let name = r.string("name", Required, StrRule::max(MAX_TEAM_NAME));
    r.finish(|| {
        Some(OperationsTeam {
            name: name?,
            created_at: now,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_team_needs_a_name_and_nothing_else() {
        let now = Utc::now();
        let team = read_new_team(&json!({"name": "Billing Ops"}), now).expect("reads");
        assert_eq!(team.name, "Billing Ops");
        let errors = read_new_team(&json!({"name": "", "colour": "red"}), now)
            .expect_err("refused")
            .0
            .into_iter()
            .map(|error| (error.attr.unwrap_or_default(), error.code))
            .collect::<Vec<_>>();
        assert_eq!(
            errors,
            [
                ("name".to_owned(), "blank".to_owned()),
                ("colour".to_owned(), "unknown_field".to_owned())
            ]
        );
    }
}
