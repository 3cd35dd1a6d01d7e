//! The results of a call, taken out by type.

use crate::convert::FromValue;
use crate::Error;
use ndarray::{Array, Dimension};
use runic_data::Value;

/// The results of one call: one [`Value`] per result of the entry point (a tuple result is
/// split one level, as the CLI prints it). Take them out as host types with [`get`],
/// [`take`] or [`into_array`].
///
/// [`get`]: Outputs::get
/// [`take`]: Outputs::take
/// [`into_array`]: Outputs::into_array
#[derive(Clone, Debug, PartialEq)]
pub struct Outputs {
    entry: String,
    values: Vec<Option<Value>>,
}

impl Outputs {
    pub(crate) fn new(entry: &str, values: Vec<Value>) -> Outputs {
        Outputs {
            entry: entry.to_string(),
            values: values.into_iter().map(Some).collect(),
        }
    }

    /// How many results there are.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Result `index` as a `T` (a copy; the result stays here).
    pub fn get<T: FromValue>(&self, index: usize) -> Result<T, Error> {
        let v = match self.values.get(index) {
            None => return Err(self.missing(index)),
            Some(v) => v.as_ref().ok_or_else(|| self.taken(index))?,
        };
        T::from_value(v.clone()).map_err(|message| self.error(index, message))
    }

    /// Result `index` as a `T`, moved out (arrays are not copied); taking it again is an
    /// error.
    pub fn take<T: FromValue>(&mut self, index: usize) -> Result<T, Error> {
        if index >= self.values.len() {
            return Err(self.missing(index));
        }
        let v = self.values[index].take().ok_or_else(|| self.taken(index))?;
        T::from_value(v).map_err(|message| self.error(index, message))
    }

    /// Result `index` as an `ndarray` array of element type `T` and dimension `D`
    /// (`Ix1`, `Ix2`, …, or `IxDyn` for any rank), moved out.
    pub fn into_array<T: crate::Element, D: Dimension>(
        mut self,
        index: usize,
    ) -> Result<Array<T, D>, Error> {
        self.take(index)
    }

    /// The results as values (those not taken yet).
    pub fn into_values(self) -> Vec<Value> {
        self.values.into_iter().flatten().collect()
    }

    fn missing(&self, index: usize) -> Error {
        let n = self.values.len();
        self.error(
            index,
            format!(
                "there is no such result (the entry point has {n} result{})",
                if n == 1 { "" } else { "s" }
            ),
        )
    }

    fn taken(&self, index: usize) -> Error {
        self.error(index, "it was already taken".to_string())
    }

    fn error(&self, index: usize, message: String) -> Error {
        Error::Result {
            entry: self.entry.clone(),
            index,
            message,
        }
    }
}
