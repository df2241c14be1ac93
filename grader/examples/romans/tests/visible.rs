//! Visible tests: students see these results as soon as they ran.
use romans::{from_roman, to_roman};

#[test]
fn small_numbers() {
    assert_eq!(to_roman(3), "III");
    assert_eq!(to_roman(8), "VIII");
}

#[test]
fn subtractive_forms() {
    assert_eq!(to_roman(4), "IV");
    assert_eq!(to_roman(90), "XC");
}

#[test]
fn reads_back() {
    assert_eq!(from_roman("XLII"), Some(42));
}
