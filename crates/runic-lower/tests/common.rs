//! Shared helpers: parse, check and lower source text.
#![allow(dead_code)]

use runic_syntax::SourceMap;

pub fn check(text: &str) -> (SourceMap, runic_types::Checked) {
    let mut sources = SourceMap::new();
    let file = sources.add("test.fut", text);
    let program = runic_syntax::parse_program(file, text, 0).expect("parses");
    let checked = runic_types::check_program(program, &sources).expect("type-checks");
    (sources, checked)
}

pub fn lower_text(text: &str) -> Result<runic_ir::Prog, runic_lower::LowerError> {
    let (sources, checked) = check(text);
    runic_lower::lower_with_sources(&checked, Some(&sources))
}

/// Lower, verify and print.
pub fn lowered(text: &str) -> String {
    let prog = lower_text(text).unwrap_or_else(|e| panic!("lowering failed: {e}"));
    let printed = prog.to_string();
    if let Err(errs) = runic_ir::verify(&prog) {
        panic!("verifier: {errs:#?}\n{printed}");
    }
    printed
}
