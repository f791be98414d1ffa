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

/// The longest text [`Money::printed`] writes: a sign, the 20 digits of a `u64` and a point.
const PRINTED_LEN: usize = 22;

impl Money {
    /// The amount rounded to the penny, printed as [`Decimal`] prints it (`"-12.30"`), into
    /// `text` on the stack, when its pence fit 64 bits; else the rounded amount, for
    /// [`Decimal`] to print. Every amount is printed, in records, events and answers, so this
    /// spares each the general printer's work on 96 bits.
    fn printed(self, text: &mut [u8; PRINTED_LEN]) -> Result<&str, Decimal> {
        let mut amount = self.0.round_dp(2);
        amount.rescale(2);
        let scale = amount.scale() as usize;
        let Ok(mut magnitude) = u64::try_from(amount.mantissa().unsigned_abs()) else {
            return Err(amount);
        };
        if scale > 2 {
            return Err(amount);
        }
        let mut start = text.len();
        let mut digits = 0;
        // At least one digit before the point, as Decimal prints.
        while magnitude > 0 || digits <= scale {
            if digits == scale && scale > 0 {
                start -= 1;
                text[start] = b'.';
            }
            start -= 1;
            text[start] = b'0' + (magnitude % 10) as u8;
            magnitude /= 10;
            digits += 1;
        }
        if amount.is_sign_negative() {
            start -= 1;
            text[start] = b'-';
        }
        std::str::from_utf8(&text[start..]).map_err(|_| amount)
    }
}

impl fmt::Display for Money {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = [0; PRINTED_LEN];
        match self.printed(&mut text) {
            Ok(printed) => f.write_str(printed),
            Err(amount) => write!(f, "{amount}"),
        }
    }
}

impl Serialize for Money {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut text = [0; PRINTED_LEN];
        match self.printed(&mut text) {
            Ok(printed) => serializer.serialize_str(printed),
            Err(amount) => serializer.collect_str(&amount),
        }
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
    fn prints_as_decimal_prints_the_amount_rounded_to_the_penny() {
        let general = |money: Money| {
            let mut amount = money.0.round_dp(2);
            amount.rescale(2);
            amount.to_string()
        };
        let mut amounts: Vec<Decimal> = [
            "0",
            "-0",
            "0.004",
            "-0.004",
            "-0.005",
            "0.005",
            "7",
            "-7.1",
            "12.345",
            "0.10",
            "99.999",
            "-100",
            "184467440737095516.15",
            "184467440737095516.16",
            "-184467440737095516.16",
            "79228162514264337593543950335",
            "-79228162514264337593543950335",
            "0.0000000000000000000000000001",
        ]
        .iter()
        .map(|text| Decimal::from_str(text).expect("decimal"))
        .collect();
        amounts.extend((-2000..2000).map(|pence| Decimal::new(pence * 7, 3)));
        for amount in amounts {
            let money = Money(amount);
            assert_eq!(money.to_string(), general(money), "{amount:?}");
            assert_eq!(
                serde_json::to_string(&money).expect("json"),
                format!("\"{}\"", general(money)),
                "{amount:?}"
            );
        }
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
