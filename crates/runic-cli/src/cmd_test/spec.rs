//! Finding and parsing the test blocks embedded in `.fut` comments (data-tests-cli.md §5.1,
//! §5.2). Values inside `{ }` are kept as raw text: they are parsed only when a case runs,
//! because their type hints come from the type-checked program (§5.7).

use std::fmt;

/// Everything the test blocks of one file say.
#[derive(Clone, Debug, PartialEq)]
pub struct TestSpec {
    /// Tags of the `tags { }` section of the first block.
    pub tags: Vec<String>,
    /// 1-based line of the first `-- ==` line.
    pub first_line: usize,
    pub kind: SpecKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum SpecKind {
    /// The first block is `error: RE`: compilation must fail with a matching diagnostic.
    CompileError { regex: String, line: usize },
    /// Ordinary blocks of cases (possibly none: a compile-only file).
    Blocks(Vec<Block>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Line of this block's `-- ==`.
    pub line: usize,
    /// Entry points the cases apply to (`main` without an `entry:` line).
    pub entries: Vec<String>,
    pub cases: Vec<Case>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    /// Index within the block (§5.4).
    pub index: usize,
    /// Line of the `input` keyword.
    pub line: usize,
    /// The `"quoted"` name, if any.
    pub name: Option<String>,
    pub tags: Vec<String>,
    pub input: Input,
    pub expect: Expect,
}

/// Raw text from inside a block with the file position where it starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub text: String,
    pub line: usize,
    pub col: usize,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// `input { values }`
    Values(Located),
    /// `input @ FILE` (path as written, relative to the program's directory).
    File(String),
    /// `random input { items }`: each item is a type (`[10]f32`) or a literal scalar.
    Random(Vec<String>),
    /// `script input { expr }`: not supported; the case is skipped.
    Script(String),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expect {
    None,
    Values(Located),
    File(String),
    Auto,
    /// A run-time error matching the regular expression.
    Error(String),
}

/// A syntax error in a test block, with its position in the file.
#[derive(Clone, Debug, PartialEq)]
pub struct SpecError {
    pub line: usize,
    pub col: usize,
    pub message: String,
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.col, self.message)
    }
}

impl TestSpec {
    /// Number of cases of the file as counted by §5.10.
    pub fn case_count(&self) -> usize {
        match &self.kind {
            SpecKind::CompileError { .. } => 1,
            SpecKind::Blocks(blocks) => {
                let n: usize = blocks.iter().map(|b| b.entries.len() * b.cases.len()).sum();
                n.max(1)
            }
        }
    }
}

/// Is this line a block opener: `--`, blanks, `==`, blanks?
fn is_block_start(line: &str) -> bool {
    line.strip_prefix("--")
        .map(|rest| rest.trim_matches([' ', '\t']) == "==")
        .unwrap_or(false)
}

/// The text of one block: its lines without the leading `--`, joined by newlines, and where
/// each line came from.
struct RawBlock {
    line: usize,
    text: String,
    /// (byte offset in `text`, 1-based file line) of every line.
    lines: Vec<(usize, usize)>,
}

fn find_blocks(source: &str) -> Vec<RawBlock> {
    let mut blocks: Vec<RawBlock> = Vec::new();
    let mut open = false;
    for (idx, raw) in source.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let lineno = idx + 1;
        if is_block_start(line) {
            blocks.push(RawBlock {
                line: lineno,
                text: String::new(),
                lines: Vec::new(),
            });
            open = true;
        } else if open && line.starts_with("--") {
            let b = blocks.last_mut().expect("a block is open");
            b.lines.push((b.text.len(), lineno));
            b.text.push_str(&line[2..]);
            b.text.push('\n');
        } else {
            open = false;
        }
    }
    blocks
}

/// Parse every test block of a source file. `Ok(None)` if the file has no test block.
pub fn parse_spec(source: &str) -> Result<Option<TestSpec>, SpecError> {
    let raw = find_blocks(source);
    let Some(first) = raw.first() else {
        return Ok(None);
    };
    let first_line = first.line;
    let mut tags = Vec::new();
    let mut blocks = Vec::new();
    for (i, rb) in raw.iter().enumerate() {
        let mut p = BlockParser { rb, pos: 0 };
        if i == 0 {
            tags = p.tags()?;
            p.skip_ws();
            if p.peek_word() == "error:" {
                let line = p.here().0;
                p.pos += "error:".len();
                let regex = p.rest_of_line();
                p.skip_ws();
                if !p.at_end() {
                    return Err(p.error("nothing may follow a compile-time error: line"));
                }
                if raw.len() > 1 {
                    let (line, col) = (raw[1].line, 1);
                    return Err(SpecError {
                        line,
                        col,
                        message:
                            "a file expecting a compile-time error may not have further test blocks"
                                .into(),
                    });
                }
                return Ok(Some(TestSpec {
                    tags,
                    first_line,
                    kind: SpecKind::CompileError { regex, line },
                }));
            }
        }
        if let Some(block) = p.io_block(i == 0)? {
            blocks.push(block);
        }
    }
    Ok(Some(TestSpec {
        tags,
        first_line,
        kind: SpecKind::Blocks(blocks),
    }))
}

struct BlockParser<'a> {
    rb: &'a RawBlock,
    pos: usize,
}

fn is_tag_word(w: &str) -> bool {
    !w.is_empty()
        && w.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
}

impl BlockParser<'_> {
    fn text(&self) -> &str {
        &self.rb.text
    }
    fn at_end(&self) -> bool {
        self.pos >= self.text().len()
    }
    /// File line and column of the cursor.
    fn here(&self) -> (usize, usize) {
        self.pos_of(self.pos)
    }
    fn pos_of(&self, offset: usize) -> (usize, usize) {
        let i = match self.rb.lines.binary_search_by_key(&offset, |&(o, _)| o) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        match self.rb.lines.get(i) {
            Some(&(start, line)) => (line, self.text()[start..offset].chars().count() + 3),
            None => (self.rb.line, 1),
        }
    }
    fn error(&self, message: impl Into<String>) -> SpecError {
        let (line, col) = self.here();
        SpecError {
            line,
            col,
            message: message.into(),
        }
    }
    fn skip_ws(&mut self) {
        let rest = &self.text()[self.pos..];
        self.pos += rest.len() - rest.trim_start().len();
    }
    /// The next token without consuming it: `{`, `}`, a `"string"`, or a word (up to
    /// whitespace or a brace).
    fn peek_word(&mut self) -> &str {
        self.skip_ws();
        let rest = &self.text()[self.pos..];
        let len = if rest.starts_with(['{', '}']) {
            1
        } else if let Some(body) = rest.strip_prefix('"') {
            body.find('"').map(|i| i + 2).unwrap_or(rest.len())
        } else {
            rest.find(|c: char| c.is_whitespace() || c == '{' || c == '}')
                .unwrap_or(rest.len())
        };
        &rest[..len]
    }
    fn next_word(&mut self) -> String {
        let w = self.peek_word().to_string();
        self.pos += w.len();
        w
    }
    fn expect(&mut self, token: &str) -> Result<(), SpecError> {
        if self.peek_word() == token {
            self.pos += token.len();
            Ok(())
        } else {
            let found = self.peek_word().to_string();
            Err(self.error(if found.is_empty() {
                format!("expected \"{token}\", found end of block")
            } else {
                format!("expected \"{token}\", found \"{found}\"")
            }))
        }
    }
    /// The rest of the current line, trimmed; the cursor moves to the next line.
    fn rest_of_line(&mut self) -> String {
        let rest = &self.text()[self.pos..];
        let len = rest.find('\n').unwrap_or(rest.len());
        let s = rest[..len].trim().to_string();
        self.pos += len;
        s
    }
    /// After `{`: everything up to the matching `}` (strings are skipped over), consuming it.
    fn braced(&mut self) -> Result<Located, SpecError> {
        self.expect("{")?;
        let start = self.pos;
        let bytes = self.text().as_bytes();
        let mut depth = 0usize;
        let mut i = start;
        let mut in_string = false;
        while i < bytes.len() {
            let b = bytes[i];
            if in_string {
                if b == b'\\' {
                    i += 1;
                } else if b == b'"' {
                    in_string = false;
                }
            } else if b == b'"' {
                in_string = true;
            } else if b == b'{' {
                depth += 1;
            } else if b == b'}' {
                if depth == 0 {
                    let (line, col) = self.pos_of(start);
                    let text = self.text()[start..i].to_string();
                    self.pos = i + 1;
                    return Ok(Located { text, line, col });
                }
                depth -= 1;
            }
            i += 1;
        }
        Err(self.error("unclosed \"{\""))
    }

    fn tags(&mut self) -> Result<Vec<String>, SpecError> {
        if self.peek_word() != "tags" {
            return Ok(Vec::new());
        }
        self.next_word();
        self.expect("{")?;
        let mut tags = Vec::new();
        loop {
            let w = self.peek_word().to_string();
            match w.as_str() {
                "}" => {
                    self.pos += 1;
                    return Ok(tags);
                }
                "" => return Err(self.error("unclosed tags { }")),
                w if is_tag_word(w) => {
                    tags.push(w.to_string());
                    self.pos += w.len();
                }
                w => return Err(self.error(format!("invalid tag \"{w}\""))),
            }
        }
    }

    /// An io-section (with `structure`/`warning:` lines in the first block); `property:`
    /// blocks are ignored (`None`).
    fn io_block(&mut self, first: bool) -> Result<Option<Block>, SpecError> {
        let mut entries = vec!["main".to_string()];
        match self.peek_word() {
            "property:" => return Ok(None),
            "entry:" => {
                self.pos += "entry:".len();
                let names: Vec<String> = self
                    .rest_of_line()
                    .split_whitespace()
                    .map(String::from)
                    .collect();
                if names.is_empty() {
                    return Err(self.error("entry: needs at least one name"));
                }
                entries = names;
            }
            "tags" => return Err(self.error("tags { } may appear only in the first test block")),
            "error:" => {
                return Err(
                    self.error("a compile-time error: may appear only in the first test block")
                )
            }
            _ => {}
        }
        let mut cases: Vec<Case> = Vec::new();
        loop {
            let w = self.peek_word().to_string();
            match w.as_str() {
                "" => break,
                "structure" | "warning:" if !first => {
                    return Err(self.error(format!("{w} may appear only in the first test block")));
                }
                "structure" => {
                    self.next_word();
                    if self.peek_word() != "{" {
                        self.next_word(); // the pipeline name
                    }
                    self.braced()?;
                }
                "warning:" => {
                    self.pos += w.len();
                    self.rest_of_line();
                }
                _ => {
                    let case = self.case(cases.len())?;
                    cases.push(case);
                }
            }
        }
        Ok(Some(Block {
            line: self.rb.line,
            entries,
            cases,
        }))
    }

    fn case(&mut self, index: usize) -> Result<Case, SpecError> {
        let mut name = None;
        if self.peek_word().starts_with('"') {
            let w = self.next_word();
            if w.len() < 2 || !w.ends_with('"') {
                return Err(self.error("unterminated dataset name"));
            }
            name = Some(w[1..w.len() - 1].to_string());
        }
        let mut tags = Vec::new();
        loop {
            let w = self.peek_word().to_string();
            match w.as_str() {
                "input" => break,
                "" => return Err(self.error("expected \"input\", found end of block")),
                "structure" | "warning:" => {
                    return Err(self.error(format!("expected \"input\", found \"{w}\"")))
                }
                w if is_tag_word(w) => {
                    tags.push(w.to_string());
                    self.pos += w.len();
                }
                w => {
                    return Err(
                        self.error(format!("expected a case tag or \"input\", found \"{w}\""))
                    )
                }
            }
        }
        let line = self.here().0;
        self.next_word(); // input
        let random = tags.iter().any(|t| t == "random");
        let script = tags.iter().any(|t| t == "script");
        let input = if let Some(file) = self.at_file()? {
            if random {
                return Err(self.error("random input must be given in { }"));
            }
            Input::File(file)
        } else {
            let body = self.braced()?;
            if script {
                Input::Script(body.text.split_whitespace().collect::<Vec<_>>().join(" "))
            } else if random {
                Input::Random(random_items(&body)?)
            } else {
                Input::Values(body)
            }
        };
        let expect = match self.peek_word() {
            "output" => {
                self.next_word();
                match self.at_file()? {
                    Some(file) => Expect::File(file),
                    None => Expect::Values(self.braced()?),
                }
            }
            "auto" => {
                self.next_word();
                self.expect("output")?;
                Expect::Auto
            }
            "error:" => {
                self.pos += "error:".len();
                Expect::Error(self.rest_of_line())
            }
            _ => Expect::None,
        };
        Ok(Case {
            index,
            line,
            name,
            tags,
            input,
            expect,
        })
    }

    /// `@ FILE` or `@FILE`, if that comes next.
    fn at_file(&mut self) -> Result<Option<String>, SpecError> {
        let w = self.peek_word().to_string();
        let Some(rest) = w.strip_prefix('@') else {
            return Ok(None);
        };
        self.pos += w.len();
        if !rest.is_empty() {
            return Ok(Some(rest.to_string()));
        }
        let file = self.next_word();
        if file.is_empty() || file == "{" || file == "}" {
            return Err(self.error("expected a file name after \"@\""));
        }
        Ok(Some(file))
    }
}

/// The items of a `random input { }`. Types and literals are told apart when the case runs;
/// here they are only split, with brackets kept attached (`[10] [3]f32` is one type).
fn random_items(body: &Located) -> Result<Vec<String>, SpecError> {
    let mut items: Vec<String> = Vec::new();
    let mut pending = String::new();
    for word in body.text.split_whitespace() {
        pending.push_str(word);
        if !pending.ends_with(']') {
            items.push(std::mem::take(&mut pending));
        }
    }
    if !pending.is_empty() {
        return Err(SpecError {
            line: body.line,
            col: body.col,
            message: format!("incomplete random input item \"{pending}\""),
        });
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> TestSpec {
        parse_spec(src).unwrap().unwrap()
    }
    fn blocks(spec: &TestSpec) -> &[Block] {
        match &spec.kind {
            SpecKind::Blocks(b) => b,
            other => panic!("expected blocks, got {other:?}"),
        }
    }

    #[test]
    fn no_blocks() {
        assert_eq!(
            parse_spec("-- just a comment\ndef main = 1\n").unwrap(),
            None
        );
    }

    #[test]
    fn the_spec_example_has_eight_cases() {
        let src = "-- Dot product and its gradient.
-- ==
-- tags { autodiff }
-- entry: dot dot_alt
-- input { [1.0f32, 2, 3] [4f32, 5, 6] }
-- output { 32f32 }
-- \"zeros\" input { [0f32, 0] [0f32, 0] } output { 0f32 }
-- compiled random input { [100000]f32 [100000]f32 }

entry dot (xs: []f32) (ys: []f32) = f32.sum (map2 (*) xs ys)

-- ==
-- entry: grad
-- input { [1f32, 2] [3f32, 4] } output { [3f32, 4] }
-- input { [1f32] [1f32, 2] } error: invalid size|cannot match

entry grad [n] (xs: [n]f32) (ys: [n]f32) = vjp (\\xs -> dot xs ys) xs 1
";
        let spec = parse(src);
        assert_eq!(spec.tags, vec!["autodiff"]);
        assert_eq!(spec.first_line, 2);
        assert_eq!(spec.case_count(), 8);
        let b = blocks(&spec);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].entries, vec!["dot", "dot_alt"]);
        assert_eq!(b[0].cases.len(), 3);
        let c0 = &b[0].cases[0];
        assert_eq!(c0.line, 5);
        assert_eq!(
            c0.input,
            Input::Values(Located {
                text: " [1.0f32, 2, 3] [4f32, 5, 6] ".into(),
                line: 5,
                col: 11
            })
        );
        assert!(matches!(&c0.expect, Expect::Values(l) if l.text.trim() == "32f32" && l.line == 6));
        assert_eq!(b[0].cases[1].name.as_deref(), Some("zeros"));
        assert_eq!(b[0].cases[1].line, 7);
        let c2 = &b[0].cases[2];
        assert_eq!(c2.tags, vec!["compiled", "random"]);
        assert_eq!(
            c2.input,
            Input::Random(vec!["[100000]f32".into(), "[100000]f32".into()])
        );
        assert_eq!(c2.expect, Expect::None);
        assert_eq!(b[1].entries, vec!["grad"]);
        assert_eq!(b[1].line, 12);
        assert_eq!(
            b[1].cases[1].expect,
            Expect::Error("invalid size|cannot match".into())
        );
    }

    #[test]
    fn compile_error_block() {
        let spec = parse("-- ==\n-- error: Cannot unify\ndef main = 1 + true\n");
        assert_eq!(
            spec.kind,
            SpecKind::CompileError {
                regex: "Cannot unify".into(),
                line: 2
            }
        );
        assert_eq!(spec.case_count(), 1);
        let spec = parse("--  ==\n-- error:\n");
        assert_eq!(
            spec.kind,
            SpecKind::CompileError {
                regex: "".into(),
                line: 2
            }
        );
    }

    #[test]
    fn compile_error_with_later_block_is_an_error() {
        let e = parse_spec("-- ==\n-- error: x\n\n-- ==\n-- input { 1 }\n").unwrap_err();
        assert_eq!(e.line, 4);
    }

    #[test]
    fn compile_only_file_with_structure() {
        let spec =
            parse("-- Description\n-- ==\n-- structure gpu { SegMap 1 }\n-- structure { Map 2 }\n");
        assert_eq!(blocks(&spec)[0].cases.len(), 0);
        assert_eq!(spec.case_count(), 1);
    }

    #[test]
    fn files_auto_output_and_multiline_values() {
        let src = "-- ==\n-- input @ data/in.gz output @out.data\n-- input {\n--   [[1,2],\n--    [3,4]] }\n-- auto output\n-- random input { [2] [3]i32 10i64 } auto output\n";
        let spec = parse(src);
        let cases = &blocks(&spec)[0].cases;
        assert_eq!(cases[0].input, Input::File("data/in.gz".into()));
        assert_eq!(cases[0].expect, Expect::File("out.data".into()));
        assert!(
            matches!(&cases[1].input, Input::Values(l) if l.text.contains("[3,4]]") && l.line == 3)
        );
        assert_eq!(cases[1].expect, Expect::Auto);
        assert_eq!(
            cases[2].input,
            Input::Random(vec!["[2][3]i32".into(), "10i64".into()])
        );
    }

    #[test]
    fn block_ends_at_non_comment_line_and_next_opener() {
        let src = "-- ==\n-- input { 1 }\n-- ==\n-- entry: f\n-- input { 2 }\ndef main = 1\n-- input { 3 }\n";
        let spec = parse(src);
        let b = blocks(&spec);
        assert_eq!(b.len(), 2);
        assert_eq!(b[0].cases.len(), 1);
        assert_eq!(b[1].cases.len(), 1);
        assert_eq!(b[1].entries, vec!["f"]);
    }

    #[test]
    fn errors_carry_positions() {
        let e = parse_spec("-- ==\n-- input { 1 }\n--   output [1]\n").unwrap_err();
        assert_eq!((e.line, e.col), (3, 13));
        let e = parse_spec("-- ==\n-- input { 1 \n").unwrap_err();
        assert!(e.message.contains("unclosed"));
        let e = parse_spec("-- ==\n-- input { 1 }\n-- ==\n-- tags { x }\n").unwrap_err();
        assert_eq!(e.line, 4);
        let e = parse_spec("-- ==\n-- input { 1 }\n-- ==\n-- structure { }\n").unwrap_err();
        assert_eq!(e.line, 4);
    }

    #[test]
    fn script_and_warning_and_property() {
        let src =
            "-- ==\n-- script input { f 1 2 }\n-- warning: unused\n-- ==\n-- property: prop\n";
        let spec = parse(src);
        let b = blocks(&spec);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].cases[0].input, Input::Script("f 1 2".into()));
    }

    #[test]
    fn crlf_lines() {
        let spec = parse("-- ==\r\n-- input { 1 } output { 2 }\r\n");
        assert_eq!(blocks(&spec)[0].cases.len(), 1);
    }
}
