//! Which entry-point types are data (§1.2), and the type hints they give the value reader
//! (§2.4, §5.7).

use runic_data::{PrimType, ValueType};
use runic_types::{Size, Type};

/// The data type of a parameter or result: a primitive scalar or an array of primitives.
/// Constant sizes are kept; any other size is unknown. `None` for opaque types.
pub fn value_type_of(ty: &Type) -> Option<ValueType> {
    match ty {
        Type::Prim(p) => Some(ValueType::scalar(PrimType::from_name(p.name())?)),
        Type::Array { elem, shape } => match &**elem {
            Type::Prim(p) => {
                let elem = PrimType::from_name(p.name())?;
                let dims = shape
                    .iter()
                    .map(|s| match s {
                        Size::Const(k) => usize::try_from(*k).ok(),
                        _ => None,
                    })
                    .collect();
                Some(ValueType { elem, dims })
            }
            _ => None,
        },
        _ => None,
    }
}

/// The hint for reading a value of this type: element type and rank only (sizes are checked
/// when the entry point is called, where the error message is the one the spec wants).
pub fn hint_of(ty: &Type) -> Option<ValueType> {
    value_type_of(ty).map(|vt| ValueType::of_rank(vt.elem, vt.rank()))
}

/// How a parameter type is written in "expected input of types" lines: `[]f32`, or the
/// type itself when it is opaque.
pub fn rank_only_name(ty: &Type) -> String {
    match hint_of(ty) {
        Some(vt) => vt.to_string(),
        None => ty.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use runic_syntax::ast::PrimType;

    #[test]
    fn data_types_and_opaque_types() {
        let arr = Type::Array {
            elem: Box::new(Type::Prim(PrimType::F32)),
            shape: vec![Size::Var("n".into()), Size::Const(3)],
        };
        assert_eq!(
            value_type_of(&arr),
            Some(ValueType {
                elem: PrimType::F32,
                dims: vec![None, Some(3)]
            })
        );
        assert_eq!(hint_of(&arr).unwrap().to_string(), "[][]f32");
        assert_eq!(
            hint_of(&Type::Prim(PrimType::Bool)),
            Some(ValueType::scalar(PrimType::Bool))
        );
        let tup = Type::tuple(vec![Type::Prim(PrimType::I32), Type::Prim(PrimType::I32)]);
        assert_eq!(hint_of(&tup), None);
        assert_eq!(rank_only_name(&tup), "(i32, i32)");
        let arr_of_tup = Type::Array {
            elem: Box::new(tup),
            shape: vec![Size::Const(2)],
        };
        assert_eq!(hint_of(&arr_of_tup), None);
    }
}
