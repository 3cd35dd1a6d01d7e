//! `rearrange` (and so `transpose`): a copy of an array with its dimensions reordered.
//!
//! The dimensions of the result that stay adjacent and in order in the source are merged
//! first, so a permutation becomes a batch of 2-D copies: the result's last two merged
//! dimensions, each `R×C` block read with strides `(sr, sc)`. A block is copied in square
//! tiles, so that both the reads of a tile (a column of the source when `sc` is large)
//! and its writes stay within a few cache lines each; a naive element loop reads one
//! cache line per element down a column. Large arrays split their tiles' rows over the
//! rayon workers.
//!
//! The first version built a vector of source positions, one per element, and gathered
//! through it: transposing `[1024][784]f32` took ~7 ms, most of a matrix product's time.

use rayon::prelude::*;
use runic_data::{with_buffer, Array, Buffer};
use std::mem::MaybeUninit;

/// The side of a square tile, in elements: a tile of `f64` reads 32 lines of 256 bytes.
const TILE: usize = 32;

/// Below this many elements a copy runs on the calling thread.
const PARALLEL_MIN: usize = 1 << 16;

/// The elements of `a` in the order of `a`'s dimensions permuted by `perm` (result
/// dimension `k` is source dimension `perm[k]`), and the result's shape. `perm` must be
/// a permutation of `0..rank`.
pub(crate) fn permute(a: &Array, perm: &[usize]) -> (Vec<usize>, Buffer) {
    let shape: Vec<usize> = perm.iter().map(|&p| a.shape[p]).collect();
    let plan = Plan::new(&a.shape, perm);
    let data = with_buffer!(&a.data, v => Buffer::from(plan.copy(v)));
    (shape, data)
}

/// A permutation as a batch of 2-D strided copies.
#[derive(Debug, PartialEq)]
struct Plan {
    /// The merged dimensions of the result above the last two: (size, source stride).
    outer: Vec<(usize, usize)>,
    /// The rows of each block: (count, source stride).
    rows: (usize, usize),
    /// The columns of each block: (count, source stride).
    cols: (usize, usize),
}

impl Plan {
    fn new(shape: &[usize], perm: &[usize]) -> Plan {
        // Row-major strides of the source.
        let mut strides = vec![1usize; shape.len()];
        for k in (0..shape.len().saturating_sub(1)).rev() {
            strides[k] = strides[k + 1] * shape[k + 1];
        }
        // The result's dimensions, outermost first, without those of size 1 (any stride
        // serves them), merged where the outer one steps exactly over the inner one.
        let mut dims: Vec<(usize, usize)> = Vec::new();
        for &p in perm {
            let (n, s) = (shape[p], strides[p]);
            if n == 1 {
                continue;
            }
            match dims.last_mut() {
                Some((m, t)) if *t == s * n => {
                    *m *= n;
                    *t = s;
                }
                _ => dims.push((n, s)),
            }
        }
        let cols = dims.pop().unwrap_or((1, 1));
        let rows = dims.pop().unwrap_or((1, 0));
        Plan {
            outer: dims,
            rows,
            cols,
        }
    }

    fn len(&self) -> usize {
        self.outer.iter().map(|d| d.0).product::<usize>() * self.rows.0 * self.cols.0
    }

    /// The source position of each block's first element, in the result's order.
    fn block_starts(&self) -> Vec<usize> {
        let mut starts = vec![0usize];
        for &(n, s) in &self.outer {
            starts = starts
                .iter()
                .flat_map(|&b| (0..n).map(move |i| b + i * s))
                .collect();
        }
        starts
    }

    fn copy<T: Copy + Send + Sync>(&self, src: &[T]) -> Vec<T> {
        let n = self.len();
        let mut out: Vec<T> = Vec::with_capacity(n);
        if n == 0 {
            return out;
        }
        let (r, c) = (self.rows.0, self.cols.0);
        let starts = self.block_starts();
        {
            let dst = &mut out.spare_capacity_mut()[..n];
            // The unit of work: TILE rows of one block.
            let band = TILE * c;
            let bands_per_block = r.div_ceil(TILE);
            let one = |(i, dst): (usize, &mut [MaybeUninit<T>])| {
                let (block, band_no) = (i / bands_per_block, i % bands_per_block);
                let row0 = band_no * TILE;
                let rows = dst.len() / c;
                self.copy_band(src, starts[block], row0, rows, dst);
            };
            // Bands never straddle blocks: each block is cut into its own bands.
            let bands = dst
                .chunks_mut(r * c)
                .flat_map(|block| block.chunks_mut(band))
                .enumerate();
            if n >= PARALLEL_MIN && rayon::current_num_threads() > 1 {
                bands.collect::<Vec<_>>().into_par_iter().for_each(one);
            } else {
                bands.for_each(one);
            }
        }
        // SAFETY: the bands cover all n elements of the result, each written above.
        unsafe { out.set_len(n) };
        out
    }

    /// Rows `row0..row0 + rows` of the block starting at source position `start` into
    /// `dst`, in tiles of TILE columns.
    fn copy_band<T: Copy>(
        &self,
        src: &[T],
        start: usize,
        row0: usize,
        rows: usize,
        dst: &mut [MaybeUninit<T>],
    ) {
        let ((_, sr), (c, sc)) = (self.rows, self.cols);
        for col0 in (0..c).step_by(TILE) {
            let cols = TILE.min(c - col0);
            for i in 0..rows {
                let from = start + (row0 + i) * sr + col0 * sc;
                let to = &mut dst[i * c + col0..i * c + col0 + cols];
                if sc == 1 {
                    for (d, s) in to.iter_mut().zip(&src[from..from + cols]) {
                        d.write(*s);
                    }
                } else {
                    for (j, d) in to.iter_mut().enumerate() {
                        d.write(src[from + j * sc]);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The permutation by definition: each result element looked up by its index.
    fn naive(shape: &[usize], perm: &[usize], src: &[u32]) -> Vec<u32> {
        let new: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
        let n: usize = new.iter().product();
        (0..n)
            .map(|mut flat| {
                let mut idx = vec![0; new.len()];
                for k in (0..new.len()).rev() {
                    idx[k] = flat % new[k];
                    flat /= new[k];
                }
                let mut pos = 0;
                let mut src_idx = vec![0; shape.len()];
                for (k, &p) in perm.iter().enumerate() {
                    src_idx[p] = idx[k];
                }
                for (k, &i) in src_idx.iter().enumerate() {
                    pos = pos * shape[k] + i;
                }
                src[pos]
            })
            .collect()
    }

    fn all_perms(r: usize) -> Vec<Vec<usize>> {
        if r == 0 {
            return vec![vec![]];
        }
        let mut out = Vec::new();
        for p in all_perms(r - 1) {
            for at in 0..=p.len() {
                let mut q = p.clone();
                q.insert(at, r - 1);
                out.push(q);
            }
        }
        out
    }

    #[test]
    fn every_permutation_matches_the_definition() {
        // Sizes around the tile's (33 = a tile and one), ones that merge or vanish, and
        // a size 0; large enough shapes to run on the rayon workers too.
        let shapes: &[&[usize]] = &[
            &[0],
            &[5],
            &[3, 0],
            &[1, 7],
            &[33, 65],
            &[300, 257],
            &[2, 1, 3],
            &[4, 33, 5],
            &[3, 40, 70],
            &[2, 3, 1, 4],
            &[3, 5, 2, 33],
        ];
        for shape in shapes {
            let n: usize = shape.iter().product();
            let src: Vec<u32> = (0..n as u32).collect();
            for perm in all_perms(shape.len()) {
                let got = Plan::new(shape, &perm).copy(&src);
                assert_eq!(
                    got,
                    naive(shape, &perm, &src),
                    "shape {shape:?} perm {perm:?}"
                );
            }
        }
    }

    #[test]
    fn adjacent_dimensions_merge_into_one_batch_of_blocks() {
        // [a][b][c] → [b][a][c]: b blocks of a rows, each row c contiguous elements.
        let p = Plan::new(&[4, 6, 5], &[1, 0, 2]);
        assert_eq!(
            (p.outer.clone(), p.rows, p.cols),
            (vec![(6, 5)], (4, 30), (5, 1))
        );
        // [g][m][n] → [g][n][m]: a batch of g transposes.
        let p = Plan::new(&[2, 3, 5], &[0, 2, 1]);
        assert_eq!(
            (p.outer.clone(), p.rows, p.cols),
            (vec![(2, 15)], (5, 1), (3, 5))
        );
        // The identity is one contiguous run.
        let p = Plan::new(&[2, 3, 5], &[0, 1, 2]);
        assert_eq!((p.outer.clone(), p.rows, p.cols), (vec![], (1, 0), (30, 1)));
    }
}
