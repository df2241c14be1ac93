use std::io::Read;

fn main() {
    let mut s = String::new();
    std::io::stdin().read_to_string(&mut s).unwrap();
    let mut it = s.split_whitespace();
    let (mode, data) = (it.next().unwrap(), it.next().unwrap());
    let out: String = if mode == "encode" {
        data.bytes().map(|c| format!("{:02}", c - b'a' + 1)).collect()
    } else {
        data.as_bytes()
            .chunks(2)
            .map(|p| (b'a' + std::str::from_utf8(p).unwrap().parse::<u8>().unwrap() - 1) as char)
            .collect()
    };
    println!("{}", out);
}
