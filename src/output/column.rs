//! The columns of the CSV files, each with the one type its cells have in every file: the type
//! `out/README.md` gives it (a test holds the two together) and `retrysim plot` checks when it
//! reads a file back.

/// What the cells of a column hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A name from the config; never empty.
    Text,
    /// One of a fixed set of words, none of which a CSV reader takes for a number, a boolean
    /// or a missing value.
    Word(&'static [&'static str]),
    /// A whole number.
    Count,
    /// A whole number, or empty where it does not apply.
    CountOrEmpty,
    /// A decimal number with six decimals; `inf` or `nan` where there is no finite value.
    Number,
    /// A decimal number, or empty where it does not apply.
    NumberOrEmpty,
    /// Free text that may be empty (a key, a layer path): read it as a string.
    Label,
    /// `true` or `false`.
    Flag,
}

impl Kind {
    /// The type's name in `out/README.md`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Text => "text",
            Kind::Word(_) => "word",
            Kind::Count => "count",
            Kind::CountOrEmpty => "count or empty",
            Kind::Number => "number",
            Kind::NumberOrEmpty => "number or empty",
            Kind::Label => "label",
            Kind::Flag => "flag",
        }
    }

    /// Whether `cell` is a value of this type.
    pub fn accepts(self, cell: &str) -> bool {
        let count = |c: &str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_digit());
        let number =
            |c: &str| c.parse::<f64>().is_ok_and(f64::is_finite) && !c.contains(['e', 'E', 'x']);
        match self {
            Kind::Text => !cell.is_empty(),
            Kind::Word(words) => words.contains(&cell),
            Kind::Count => count(cell),
            Kind::CountOrEmpty => cell.is_empty() || count(cell),
            Kind::Number => number(cell),
            Kind::NumberOrEmpty => cell.is_empty() || number(cell),
            Kind::Label => true,
            Kind::Flag => cell == "true" || cell == "false",
        }
    }
}

/// One column of a CSV file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: &'static str,
    pub kind: Kind,
}

/// A column named `name` of type `kind`.
pub const fn col(name: &'static str, kind: Kind) -> Column {
    Column { name, kind }
}

/// A time in ticks as seconds, for plotting: exact, since a tick is a microsecond.
pub fn seconds(ticks: u64) -> String {
    let mut s = String::new();
    push_seconds(&mut s, ticks);
    s
}

/// [`seconds`], written onto the end of `out`: a trace writes millions of them.
pub fn push_seconds(out: &mut String, ticks: u64) {
    let mut digits = itoa::Buffer::new();
    out.push_str(digits.format(ticks / 1_000_000));
    out.push('.');
    let micros = digits.format(ticks % 1_000_000);
    out.extend(std::iter::repeat_n('0', 6 - micros.len()));
    out.push_str(micros);
}

/// A mean time in ticks as seconds, at the fixed precision of every float.
pub fn mean_seconds(ticks: f64) -> String {
    super::fixed(ticks / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_type_takes_its_own_values_only() {
        assert!(
            Kind::Count.accepts("12") && !Kind::Count.accepts("") && !Kind::Count.accepts("1.5")
        );
        assert!(Kind::CountOrEmpty.accepts("") && !Kind::CountOrEmpty.accepts("unlimited"));
        assert!(Kind::Number.accepts("0.125000") && !Kind::Number.accepts("abc"));
        for not_finite in ["inf", "-inf", "nan", "NaN", "infinity"] {
            assert!(!Kind::Number.accepts(not_finite), "{not_finite}");
            assert!(!Kind::NumberOrEmpty.accepts(not_finite), "{not_finite}");
        }
        assert!(!Kind::Number.accepts("") && Kind::NumberOrEmpty.accepts(""));
        assert!(Kind::Word(&["yes", "no"]).accepts("no") && !Kind::Word(&["yes"]).accepts("true"));
        assert!(!Kind::Text.accepts("") && Kind::Label.accepts(""));
        assert_eq!(
            (seconds(1_500_000), seconds(7)),
            ("1.500000".into(), "0.000007".into())
        );
    }
}
