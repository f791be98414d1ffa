//! Exact money amounts: parsed without floats, printed with two decimal places (`"12.30"`).

use rust_decimal::Decimal;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An amount of money in the account's currency, exact to the penny.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Money(pub Decimal);

impl Money {
    pub const ZERO: Money = Money(Decimal::ZERO);

    pub fn new(amount: Decimal) -> Self {
        Self(amount)
    }
    pub fn amount(self) -> Decimal {
        self.0
    }

    /// An amount given in pence (the currency's lowest denomination), as the real platform
    /// gives integer amounts.
    pub fn from_pence(pence: i64) -> Self {
        Self(Decimal::new(pence, 2))
    }

    /// The amount in whole pence (rounded to the penny).
    pub fn pence(self) -> i64 {
        use rust_decimal::prelude::ToPrimitive;
        (self.0.round_dp(2) * Decimal::ONE_HUNDRED)
            .to_i64()
            .unwrap_or(i64::MAX)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut amount = self.0.round_dp(2);
        amount.rescale(2);
        write!(f, "{amount}")
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Money {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        super::validation::parse_decimal_text(&text, 2)
            .map(Money)
            .map_err(|_| serde::de::Error::custom(format!("not a money amount: {text}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr;

    #[test]
    fn pence_are_hundredths_both_ways() {
        assert_eq!(Money::from_pence(10_000).to_string(), "100.00");
        assert_eq!(Money::from_pence(-1).to_string(), "-0.01");
        assert_eq!(Money::from_pence(12_345).pence(), 12_345);
        assert_eq!(
            Money(Decimal::from_str("7.5").expect("decimal")).pence(),
            750
        );
    }

    #[test]
    fn prints_two_places() {
        let cases = [
            ("0.1", "0.10"),
            ("1234567.89", "1234567.89"),
            ("-5", "-5.00"),
            ("0", "0.00"),
        ];
        for (input, printed) in cases {
            let money = Money(Decimal::from_str(input).expect("decimal"));
            assert_eq!(money.to_string(), printed);
            let json = serde_json::to_string(&money).expect("json");
            let back: Money = serde_json::from_str(&json).expect("back");
            assert_eq!(back, money);
        }
    }
}
