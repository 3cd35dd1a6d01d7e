//! Strip-mined loops (`checkpoint::strip_mine`): the forward sweep of the outer loop also
//! keeps the inner tape of the last chunk, which the return sweep visits first and reads
//! back instead of running that chunk again.

use super::*;

/// The inner loop of a strip-mined loop (`checkpoint::strip_mine`) in the outer loop's
/// return sweep, whose tape the forward sweep kept when it is the last chunk.
pub(crate) struct LastChunk {
    /// Whether this is the last chunk (the first one the return sweep visits).
    pub(super) is_last: SubExp,
    /// The inner loop's tapes of the last chunk, one per parameter (`chunk` rows).
    pub(super) bufs: Vec<VName>,
    /// The strip-mined loop's results: the last chunk's results.
    pub(super) results: Vec<SubExp>,
}

/// The chunk size of a strip-mined loop (`loop p for o < m do (… loop p = p for j <
/// min(chunk, …) do …)`, as `checkpoint::strip_mine` builds it), when no parameter changes
/// shape.
pub(super) fn chunk_of(params: &[(Param, SubExp)], body: &Body) -> Option<SubExp> {
    let last = body.stms.last()?;
    let Exp::Loop {
        params: inner,
        form: LoopForm::For {
            bound: SubExp::Var(count),
            ..
        },
        body: inner_body,
    } = &last.exp
    else {
        return None;
    };
    let results: Vec<SubExp> = last.pat.iter().map(|p| SubExp::Var(p.name)).collect();
    let passes_through = inner.len() == params.len()
        && inner
            .iter()
            .zip(params)
            .all(|((_, init), (p, _))| *init == SubExp::Var(p.name));
    // An inner loop strip-mined again (a hint of more levels) is not re-executed as is.
    if body.result != results
        || !passes_through
        || checkpoint::wants_stripmining(&last.src, inner, inner_body)
    {
        return None;
    }
    if params.iter().any(|(p, _)| changes_shape(params, &p.ty))
        || inner.iter().any(|(p, _)| changes_shape(inner, &p.ty))
    {
        return None;
    }
    let inside = runic_ir::traverse::binders(body);
    body.stms
        .iter()
        .find_map(|st| match (&st.pat[..], &st.exp) {
            ([p], Exp::Basic(BasicOp::BinOp(BinOp::Min, chunk, _)))
                if p.name == *count && !matches!(chunk, SubExp::Var(c) if inside.contains(c)) =>
            {
                Some(chunk.clone())
            }
            _ => None,
        })
}

/// The forward sweep of a strip-mined loop: the outer loop with its tape (the state at the
/// start of each chunk), whose inner loop also writes each iteration's state into one
/// chunk's worth of storage, overwritten chunk after chunk. What is left is the last
/// chunk's tape, which the return sweep visits first and need not recompute: with one
/// chunk (a tape within the budget) the loop runs once before its return sweep, not twice.
/// Memory: one more chunk of states. Returns the tapes and that storage.
#[allow(clippy::too_many_arguments)]
pub(super) fn tape_keeping_last(
    b: &mut Builder,
    params: &[(Param, SubExp)],
    counter: Option<(VName, Type)>,
    bound: &SubExp,
    n: &SubExp,
    body: &Body,
    pat: &[Param],
    chunk: SubExp,
) -> R<(Vec<Tape>, Vec<VName>)> {
    let (last, before) = body
        .stms
        .split_last()
        .ok_or_else(|| AdError::internal("a strip-mined loop without its inner loop"))?;
    let Exp::Loop {
        params: inner,
        form: LoopForm::For { i: j, bound: count },
        body: inner_body,
    } = &last.exp
    else {
        return Err(AdError::internal(
            "a strip-mined loop without its inner loop",
        ));
    };
    let rows: Vec<Record> = params.iter().map(|_| Record::Row).collect();
    let stored = kept_stms(inner, inner_body);
    let mut bufs = alloc_stores(b, params, &chunk, &rows)?;
    bufs.extend(alloc_stored(b, inner_body, &stored, &chunk)?);
    let mut buf_params = Vec::new();
    for buf in &bufs {
        let ty = b.type_of(&SubExp::Var(*buf))?;
        buf_params.push((b.param("chunk", ty), SubExp::Var(*buf)));
    }
    // The outer body, its inner loop (the last statement) storing its states.
    let mut ob = Builder::new(b.names);
    ob.src = b.src.clone();
    for st in before {
        ob.add(st.clone());
    }
    let j_ty = ob.type_of(count)?;
    let stores = buf_params.iter().map(|(p, _)| p.name).collect();
    let filled = record_loop(
        &mut ob,
        inner,
        Some((*j, j_ty)),
        count,
        inner_body,
        last.pat.clone(),
        &rows,
        &stored,
        stores,
    )?;
    let result = [
        body.result.clone(),
        filled.iter().map(|v| SubExp::Var(*v)).collect(),
    ];
    let outer_body = ob.finish(result.concat());
    // The outer loop: a tape of its own parameters, the chunk's storage carried along.
    let all: Vec<(Param, SubExp)> = [params.to_vec(), buf_params.clone()].concat();
    let mut records: Vec<Record> = params.iter().map(|_| Record::Row).collect();
    records.extend(buf_params.iter().map(|_| Record::Nothing));
    let stores = alloc_stores(b, &all, n, &records)?;
    let mut kept = Vec::new();
    for (p, _) in &buf_params {
        kept.push(b.param("chunk", p.ty.clone()));
    }
    let out = [pat.to_vec(), kept.clone()].concat();
    let tapes = record_loop(
        b,
        &all,
        counter,
        bound,
        &outer_body,
        out,
        &records,
        &[],
        stores,
    )?;
    let kept = kept.iter().map(|p| p.name).collect();
    Ok((tapes.into_iter().map(Tape::Rows).collect(), kept))
}

/// The inner loop `s` of a strip-mined loop, re-executed in the outer loop's return sweep:
/// for the last chunk its tape is the one the forward sweep kept (and its results the
/// strip-mined loop's); otherwise it runs with a tape as usual.
pub(super) fn reuse_last_chunk(rev: &mut Rev, b: &mut Builder, s: &Stm, last: LastChunk) -> R<()> {
    let Exp::Loop {
        params,
        form: LoopForm::For { i, bound },
        body,
    } = &s.exp
    else {
        return Err(AdError::internal(
            "the last chunk of a loop that is not a for loop",
        ));
    };
    let n = to_i64(b, bound.clone())?;
    // The kept buffers have a chunk's rows, at least `n`: both branches give tapes of
    // that many rows (the first `n` filled), so that the kept ones need no slice, and a
    // tape the return sweep does not read is not written at all (DCE proves its writes,
    // at rows `j < n`, in bounds).
    let mut tape_types = Vec::new();
    for buf in &last.bufs {
        tape_types.push(b.type_of(&SubExp::Var(*buf))?);
    }
    let stored: usize = kept_stms(params, body)
        .iter()
        .map(|k| k.types(body).len())
        .sum();
    let chunk = match tape_types.first() {
        Some(Type::Array { shape, .. }) if tape_types.len() == params.len() + stored => {
            shape.first().cloned()
        }
        _ => None,
    }
    .ok_or_else(|| AdError::internal("a kept chunk of another loop"))?;
    let src = b.src.clone();
    let mut kept = last.results.clone();
    kept.extend(last.bufs.iter().map(|buf| SubExp::Var(*buf)));
    let then_body = Body {
        stms: Vec::new(),
        result: kept,
    };
    let mut eb = Builder::new(b.names);
    eb.src = src;
    let results: Vec<Param> = s
        .pat
        .iter()
        .map(|p| eb.param("inner", p.ty.clone()))
        .collect();
    let counter = Some((*i, eb.type_of(bound)?));
    let (tapes, values) = tape_loop(
        &mut eb,
        params,
        counter,
        bound,
        &n,
        &chunk,
        body,
        results.clone(),
        false,
    )?;
    let mut out: Vec<SubExp> = results.iter().map(|p| SubExp::Var(p.name)).collect();
    for t in &tapes {
        match t {
            Tape::Rows(v) => out.push(SubExp::Var(*v)),
            Tape::Flat { .. } | Tape::Restore(_) => {
                return Err(AdError::internal("a kept chunk not taped by rows"))
            }
        }
    }
    out.extend(values.iter().map(|v| SubExp::Var(*v)));
    let else_body = eb.finish(out);
    let tape_pat: Vec<Param> = tape_types
        .iter()
        .map(|t| b.param("tape", t.clone()))
        .collect();
    let ret = s
        .pat
        .iter()
        .chain(&tape_pat)
        .map(|p| p.ty.clone())
        .collect();
    let exp = Exp::If {
        cond: last.is_last,
        then_body,
        else_body,
        ret,
    };
    b.let_pat([s.pat.clone(), tape_pat.clone()].concat(), exp);
    let (param_tapes, stored_tapes) = tape_pat.split_at(params.len());
    let tape = Saved::Tape {
        tapes: param_tapes.iter().map(|p| Tape::Rows(p.name)).collect(),
        count: n,
        kept: None,
        stored: stored_tapes.iter().map(|p| p.name).collect(),
    };
    rev.saved.insert(s.pat[0].name, tape);
    Ok(())
}
