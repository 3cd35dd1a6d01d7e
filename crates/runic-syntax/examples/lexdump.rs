fn main() {
    let arg = std::env::args().nth(1).unwrap();
    match runic_syntax::lexer::lex(runic_syntax::FileId(0), &arg) {
        Ok(ts) => {
            for t in ts {
                println!("{:?} ws={} {:?}", t.tok, t.ws_before, t.span);
            }
        }
        Err(e) => println!("{e:?}"),
    }
}
