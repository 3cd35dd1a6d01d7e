//! Helpers shared by the integration tests: parse and check a program from text.
#![allow(dead_code)]

use runic_syntax::{FileId, SourceMap};
use runic_types::{check_program, first_user_node_id, Checked, Type};

pub fn check(src: &str) -> Result<(Checked, SourceMap), String> {
    let mut sm = SourceMap::new();
    let f: FileId = sm.add("prog.fut", src);
    let prog = runic_syntax::parse_program(f, src, first_user_node_id())
        .map_err(|ds| runic_syntax::diag::render_all(&ds, &sm))?;
    match check_program(prog, &sm) {
        Ok(c) => Ok((c, sm)),
        Err(ds) => Err(runic_syntax::diag::render_all(&ds, &sm)),
    }
}

/// Parse and check the program in file `path`, resolving its imports; diagnostics are
/// rendered with the files' names as given.
pub fn check_file(path: &std::path::Path) -> Result<(Checked, SourceMap), String> {
    let src = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut sm = SourceMap::new();
    let name = path.display().to_string();
    let f: FileId = sm.add(name, src.clone());
    let prog = runic_syntax::parse_program(f, &src, first_user_node_id())
        .map_err(|ds| runic_syntax::diag::render_all(&ds, &sm))?;
    let prelude = sm.add(runic_types::PRELUDE_NAME, runic_types::PRELUDE_SOURCE);
    match runic_types::check_program_at(prog, &mut sm, prelude, Some(path)) {
        Ok(c) => Ok((c, sm)),
        Err(ds) => Err(runic_syntax::diag::render_all(&ds, &sm)),
    }
}

/// The type of top-level definition `name` (the type of its body wrapped in its parameters),
/// printed. Read from the exp type of the body and the pat types of the parameters.
pub fn def_type(c: &Checked, name: &str) -> String {
    use runic_syntax::ast::Dec;
    let vb = c
        .program
        .decs
        .iter()
        .rev()
        .find_map(|d| match d {
            Dec::Val(v) if v.name == name => Some(v),
            _ => None,
        })
        .expect("definition exists");
    let mut t = c.info.exp_types[&vb.body.id].clone();
    for p in vb.params.iter().rev() {
        t = Type::Arrow {
            param_name: None,
            param: Box::new(c.info.pat_types[&p.id].clone()),
            ret: Box::new(t),
        };
    }
    t.to_string()
}

pub fn ok(src: &str) -> Checked {
    match check(src) {
        Ok((c, _)) => c,
        Err(e) => panic!("expected to type-check:\n{src}\n---\n{e}"),
    }
}

pub fn fails(src: &str) -> String {
    match check(src) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e,
    }
}
