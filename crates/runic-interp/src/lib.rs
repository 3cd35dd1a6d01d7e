//! runic-interp: the reference interpreter over the typed AST.
