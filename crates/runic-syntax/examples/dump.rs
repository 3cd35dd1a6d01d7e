fn main() {
    let arg = std::env::args().nth(1).unwrap();
    let text = std::fs::read_to_string(&arg).unwrap_or(arg);
    match runic_syntax::parse_program(runic_syntax::FileId(0), &text, 0) {
        Ok(p) => print!("{}", runic_syntax::pretty::print_program(&p)),
        Err(es) => {
            let mut sm = runic_syntax::SourceMap::new();
            sm.add("in.fut", text.clone());
            print!("{}", runic_syntax::diag::render_all(&es, &sm));
        }
    }
}
