//! `runic repl` (§6.6). The session is a growing program text: a declaration is appended
//! when the program still checks with it; an expression `e` is evaluated as the constant
//! `def repl_result_N = e` of a temporary program, with the interpreter.

use crate::cli::ReplArgs;
use crate::driver::{self, Loaded};
use crate::error::CliResult;
use crate::exec;
use runic_interp::Interpreter;
use runic_syntax::ast::Dec;
use std::io::{BufRead, IsTerminal};

const COMMANDS: &[(&str, &str)] = &[
    (
        "load",
        ":load FILE    load a program, replacing every earlier declaration",
    ),
    ("type", ":type EXPR    print the type of an expression"),
    ("help", ":help         list the commands"),
    ("quit", ":quit         leave"),
];

/// Words that start a declaration; such a line's own error is the one to report.
const DECLARATION_WORDS: &[&str] = &[
    "def", "entry", "let", "type", "module", "open", "import", "local",
];

/// The REPL's state: the declarations so far.
pub struct Session {
    /// Program text: the loaded file (if any) followed by the declarations entered.
    decls: String,
    /// Numbering of the temporary constants.
    counter: usize,
}

/// What one input line produced.
#[derive(Debug, PartialEq)]
pub enum Reply {
    /// Text for stdout (may be empty).
    Output(String),
    /// An error message for stderr.
    Error(String),
    Quit,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    pub fn new() -> Session {
        Session {
            decls: String::new(),
            counter: 0,
        }
    }

    /// Replace the session's program by a file.
    pub fn load(&mut self, path: &str) -> Reply {
        let text = match driver::read_source(std::path::Path::new(path)) {
            Ok(t) => t,
            Err(e) => return Reply::Error(e.text().to_string()),
        };
        match driver::load_text(path, &text) {
            Ok(_) => {
                self.decls = text;
                Reply::Output(String::new())
            }
            Err(e) => Reply::Error(e.text().to_string()),
        }
    }

    /// Handle one input line.
    pub fn line(&mut self, line: &str) -> Reply {
        let line = line.trim();
        if line.is_empty() {
            return Reply::Output(String::new());
        }
        if let Some(cmd) = line.strip_prefix(':') {
            return self.command(cmd);
        }
        let as_declaration = format!("{}\n{}\n", self.decls, line);
        let declaration_error = match driver::load_text("[repl]", &as_declaration) {
            Ok(_) => {
                self.decls = as_declaration;
                return Reply::Output(String::new());
            }
            Err(e) => e.text().to_string(),
        };
        let first_word = line.split_whitespace().next().unwrap_or("");
        match self.evaluate(line) {
            Ok(v) => Reply::Output(v),
            Err(_) if DECLARATION_WORDS.contains(&first_word) && first_word != "let" => {
                Reply::Error(declaration_error)
            }
            Err(e) => Reply::Error(e),
        }
    }

    /// Type-check `def repl_result_N = expr` after the declarations.
    fn with_constant(&mut self, expr: &str) -> Result<(Loaded, String), String> {
        let name = format!("repl_result_{}", self.counter);
        self.counter += 1;
        let text = format!("{}\ndef {name} = {expr}\n", self.decls);
        let loaded = driver::load_text("[repl]", &text).map_err(|e| e.text().to_string())?;
        Ok((loaded, name))
    }

    fn evaluate(&mut self, expr: &str) -> Result<String, String> {
        let (loaded, name) = self.with_constant(expr)?;
        let result = exec::quietly(|| {
            let interp = Interpreter::new(loaded.checked.clone(), loaded.sources.clone());
            interp
                .eval_constant(&name)
                .map_err(|e| e.render(&loaded.sources))
        })
        .map_err(|m| format!("Error: internal error (a bug in runic): {m}"))??;
        Ok(runic_data::print_value_repl(&result))
    }

    fn type_of(&mut self, expr: &str) -> Result<String, String> {
        let (loaded, name) = self.with_constant(expr)?;
        let checked = &loaded.checked;
        let body = checked.program.decs.iter().rev().find_map(|d| match d {
            Dec::Val(v) if v.name == name => Some(v.body.id),
            _ => None,
        });
        body.and_then(|id| checked.info.exp_types.get(&id))
            .map(|t| t.to_string())
            .ok_or_else(|| "Error: the type of the expression is not known".to_string())
    }

    fn command(&mut self, cmd: &str) -> Reply {
        let (word, arg) = match cmd.find(char::is_whitespace) {
            Some(i) => (&cmd[..i], cmd[i..].trim()),
            None => (cmd, ""),
        };
        let matching: Vec<&str> = COMMANDS
            .iter()
            .map(|(n, _)| *n)
            .filter(|n| n.starts_with(word))
            .collect();
        let name = match matching.as_slice() {
            [one] => *one,
            _ if COMMANDS.iter().any(|(n, _)| *n == word) => word,
            [] => return Reply::Error(format!("Unknown command ':{word}'")),
            many => {
                let list: Vec<String> = many.iter().map(|n| format!(":{n}")).collect();
                return Reply::Error(format!(
                    "Ambiguous command ':{word}': could be {}",
                    list.join(", ")
                ));
            }
        };
        match name {
            "quit" => Reply::Quit,
            "help" => Reply::Output(COMMANDS.iter().map(|(_, h)| format!("{h}\n")).collect()),
            "load" if arg.is_empty() => Reply::Error(":load needs a file name".into()),
            "load" => self.load(arg),
            "type" if arg.is_empty() => Reply::Error(":type needs an expression".into()),
            _ => match self.type_of(arg) {
                Ok(t) => Reply::Output(format!("{arg} : {t}\n")),
                Err(e) => Reply::Error(e),
            },
        }
    }
}

pub fn run(args: &ReplArgs) -> CliResult {
    let mut session = Session::new();
    if let Some(p) = &args.program {
        if let Reply::Error(e) = session.load(&p.display().to_string()) {
            eprintln!("{}", e.trim_end());
        }
    }
    if std::io::stdin().is_terminal() {
        interactive(&mut session);
    } else {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if respond(&mut session, &line) {
                break;
            }
        }
    }
    Ok(())
}

/// Print the reply to one line; true when the session should end.
fn respond(session: &mut Session, line: &str) -> bool {
    match session.line(line) {
        Reply::Quit => return true,
        Reply::Output(s) => {
            if !s.is_empty() {
                print!("{}", crate::cmd_check::ensure_newline(&s));
            }
        }
        Reply::Error(e) => eprintln!("{}", e.trim_end()),
    }
    false
}

fn interactive(session: &mut Session) {
    println!(
        "runic {} interactive environment. Type :help for the commands, :quit to leave.",
        env!("CARGO_PKG_VERSION")
    );
    let mut editor = match rustyline::DefaultEditor::new() {
        Ok(e) => e,
        Err(e) => {
            eprintln!("Error: cannot start the line editor: {e}");
            return;
        }
    };
    let mut n = 0usize;
    loop {
        match editor.readline(&format!("[{n}]> ")) {
            Ok(line) => {
                if !line.trim().is_empty() {
                    let _ = editor.add_history_entry(line.as_str());
                }
                if respond(session, &line) {
                    break;
                }
            }
            Err(rustyline::error::ReadlineError::Interrupted) => {}
            Err(_) => break,
        }
        n += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_by_unique_prefix() {
        let mut s = Session::new();
        assert_eq!(s.line(":q"), Reply::Quit);
        assert_eq!(s.line(":x"), Reply::Error("Unknown command ':x'".into()));
        assert!(matches!(s.line(":h"), Reply::Output(t) if t.contains(":load FILE")));
        assert_eq!(
            s.line(":load"),
            Reply::Error(":load needs a file name".into())
        );
    }
}
