//! Lexical environments: a persistent linked list of bindings, shared by closures.
//!
//! Each binding sits in a `RefCell` so that an in-place update (`let a[i] = v`, `a with ...`)
//! can take the array out of the binding it consumes and update it without copying: the
//! language's uniqueness rules guarantee that a consumed variable is not used again.

use crate::value::Value;
use std::cell::RefCell;
use std::rc::Rc;

#[derive(Debug)]
pub struct Bind<'a> {
    pub name: &'a str,
    pub val: RefCell<Value<'a>>,
    pub next: Option<Rc<Bind<'a>>>,
}

#[derive(Clone, Debug, Default)]
pub struct Env<'a> {
    pub vars: Option<Rc<Bind<'a>>>,
    /// Index of the top-level declaration the code belongs to: top-level names resolve to
    /// the latest definition at or before it.
    pub pos: usize,
}

impl<'a> Env<'a> {
    pub fn top(pos: usize) -> Env<'a> {
        Env { vars: None, pos }
    }

    pub fn bind(&mut self, name: &'a str, val: Value<'a>) {
        let next = self.vars.take();
        self.vars = Some(Rc::new(Bind {
            name,
            val: RefCell::new(val),
            next,
        }));
    }

    fn find(&self, name: &str) -> Option<&Bind<'a>> {
        let mut cur = self.vars.as_deref();
        while let Some(b) = cur {
            if b.name == name {
                return Some(b);
            }
            cur = b.next.as_deref();
        }
        None
    }

    pub fn lookup(&self, name: &str) -> Option<Value<'a>> {
        self.find(name).map(|b| b.val.borrow().clone())
    }

    pub fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// Take the value of a local variable that is being consumed, leaving the unit value.
    pub fn take(&self, name: &str) -> Option<Value<'a>> {
        self.find(name)
            .map(|b| std::mem::replace(&mut *b.val.borrow_mut(), Value::unit()))
    }
}

impl Drop for Env<'_> {
    // Unlink long chains iteratively so that dropping them cannot overflow the stack.
    fn drop(&mut self) {
        let mut cur = self.vars.take();
        while let Some(rc) = cur {
            match Rc::try_unwrap(rc) {
                Ok(mut b) => cur = b.next.take(),
                Err(_) => break,
            }
        }
    }
}
