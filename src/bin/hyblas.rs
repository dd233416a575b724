fn main() {
    println!("hyblas {}", env!("CARGO_PKG_VERSION"));
}
