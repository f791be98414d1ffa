//! Amounts as the host writes them (decimal strings in the real platform's sign: credit
//! positive, debit negative), worded for people: whether a balance is credit or debit, a
//! difference with its sign, and the difference of two totals, computed exactly on the
//! decimal digits (never through floating point).

/// An amount in the real platform's sign with its meaning spelled out: `-35.00 (debit)`,
/// `12.30 (credit)`, `0.00`. Text that is not a number is shown as it came.
pub(crate) fn credit_or_debit(amount: &str) -> String {
    match side(amount) {
        Some(side) => format!("{amount} ({side})"),
        None => amount.to_owned(),
    }
}

/// `credit` for an amount above zero, `debit` below; `None` for zero and for text that is not
/// a number.
pub(crate) fn side(amount: &str) -> Option<&'static str> {
    match Decimal::parse(amount)?.units.signum() {
        1 => Some("credit"),
        -1 => Some("debit"),
        _ => None,
    }
}

/// A difference with its sign always written: `+32.30`, `-5.00`, `0.00`. Text that is not a
/// number is shown as it came.
pub(crate) fn signed(amount: &str) -> String {
    match Decimal::parse(amount) {
        Some(value) if value.units > 0 && !amount.starts_with('+') => format!("+{amount}"),
        _ => amount.to_owned(),
    }
}

/// `minuend - subtrahend`, with as many decimal places as the more precise of the two (two at
/// least); `None` when either is not a number.
pub(crate) fn difference(minuend: &str, subtrahend: &str) -> Option<String> {
    let minuend = Decimal::parse(minuend)?;
    let subtrahend = Decimal::parse(subtrahend)?;
    let places = minuend.places.max(subtrahend.places).max(2);
    let units = minuend
        .units_at(places)?
        .checked_sub(subtrahend.units_at(places)?)?;
    Some(Decimal { units, places }.to_string())
}

/// A decimal number as a whole count of its smallest unit (`-18.40` is -1840 at 2 places).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Decimal {
    units: i128,
    places: u32,
}

impl Decimal {
    /// `-12.30`, `+5`, `0.5`: an optional sign, digits, optionally a point and more digits.
    fn parse(text: &str) -> Option<Self> {
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let (whole, fraction) = unsigned.split_once('.').unwrap_or((unsigned, ""));
        let digits = |part: &str| part.chars().all(|c| c.is_ascii_digit());
        if whole.is_empty() && fraction.is_empty() || !digits(whole) || !digits(fraction) {
            return None;
        }
        let places = u32::try_from(fraction.len()).ok()?;
        let units: i128 = format!("{whole}{fraction}").parse().ok()?;
        Some(Self {
            units: if negative { -units } else { units },
            places,
        })
    }

    /// The same number counted at `places` decimal places (no fewer than it has).
    fn units_at(self, places: u32) -> Option<i128> {
        self.units
            .checked_mul(10_i128.checked_pow(places.checked_sub(self.places)?)?)
    }
}

impl std::fmt::Display for Decimal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let sign = if self.units < 0 { "-" } else { "" };
        let digits = format!(
            "{:0>width$}",
            self.units.unsigned_abs(),
            width = self.places as usize + 1
        );
        let (whole, fraction) = digits.split_at(digits.len() - self.places as usize);
        if fraction.is_empty() {
            write!(f, "{sign}{whole}")
        } else {
            write!(f, "{sign}{whole}.{fraction}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn balances_say_whether_they_are_credit_or_debit() {
        assert_eq!(credit_or_debit("-35.00"), "-35.00 (debit)");
        assert_eq!(credit_or_debit("12.30"), "12.30 (credit)");
        assert_eq!(credit_or_debit("+0.01"), "+0.01 (credit)");
        assert_eq!(credit_or_debit("0.00"), "0.00");
        assert_eq!(credit_or_debit("-0.00"), "-0.00");
        assert_eq!(credit_or_debit("unknown"), "unknown");
        assert_eq!(credit_or_debit(""), "");
    }

    #[test]
    fn differences_carry_their_sign() {
        assert_eq!(signed("32.30"), "+32.30");
        assert_eq!(signed("+32.30"), "+32.30");
        assert_eq!(signed("-5.00"), "-5.00");
        assert_eq!(signed("0.00"), "0.00");
        assert_eq!(signed("n/a"), "n/a");
    }

    #[test]
    fn totals_are_subtracted_to_the_penny() {
        assert_eq!(
            difference("-18690.86", "-18734.26").as_deref(),
            Some("43.40")
        );
        assert_eq!(difference("-35.00", "-35.00").as_deref(), Some("0.00"));
        assert_eq!(difference("0.05", "0.10").as_deref(), Some("-0.05"));
        assert_eq!(difference("12", "0.125").as_deref(), Some("11.875"));
        assert_eq!(difference("+1.5", "-1").as_deref(), Some("2.50"));
        // Sums beyond what a float keeps exactly stay exact.
        assert_eq!(
            difference("90071992547409.93", "0.01").as_deref(),
            Some("90071992547409.92")
        );
        assert_eq!(difference("", "1.00"), None);
        assert_eq!(difference("1.00", "1,00"), None);
        assert_eq!(difference(".", "1.00"), None);
    }
}
