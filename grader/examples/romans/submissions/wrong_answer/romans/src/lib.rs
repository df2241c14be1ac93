// no subtractive forms: 4 is IIII
const TABLE: [(u32, char); 7] = [
    (1000, 'M'), (500, 'D'), (100, 'C'), (50, 'L'), (10, 'X'), (5, 'V'), (1, 'I'),
];

pub fn to_roman(mut n: u32) -> String {
    let mut out = String::new();
    for &(value, digit) in TABLE.iter() {
        while n >= value {
            out.push(digit);
            n -= value;
        }
    }
    out
}

pub fn from_roman(s: &str) -> Option<u32> {
    let mut n = 0;
    for c in s.chars() {
        n += TABLE.iter().find(|&&(_, d)| d == c)?.0;
    }
    if n > 0 { Some(n) } else { None }
}
