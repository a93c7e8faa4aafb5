//! The data check's payload words at memory speed (runtime/data_values.py `payload_words`).
//!
//! A byte array's payload is, word by word (8 bytes), splitmix64's output function of the
//! word's index in the global array under a seed drawn from the run's generator: a bijection of
//! the index, so no two words of an array are alike and a block that lands in a wrong place, or
//! whose bytes are wrong, differs from the reference. numpy computes the same words where the
//! extension is missing (tests/runtime/test_data_values.py holds the two to each other); here
//! they are written in one pass, in place (numpy's generator drew 1 GB of random words in about
//! 0.6 s of CPU beyond the page faults; this writes them in about 0.3 s).
//!
//! The check compares what landed with the reference byte for byte (runtime/data_check.py
//! `same_values`): `same_bytes` walks two strided byte arrays row by row at memory speed,
//! where numpy's `==` wrote a temporary of flags and then read it (torus:16x16 at 16 KB
//! compares 1 GB in 256 node-sized pieces).

use pyo3::buffer::PyBuffer;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's output function (Steele, Lea and Flood 2014): invertible, so distinct inputs
/// give distinct words.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

const MAX_FILL_THREADS: usize = 4;
const FILL_WORDS_PER_THREAD: usize = 1 << 23; // 64 MB (tests/runtime/test_data_values.py): less, one thread

/// Words `first`, `first` + 1, ... of the payload under `seed` into `words`.
fn fill(words: &mut [u64], seed: u64, first: u64) {
    let mut z = seed.wrapping_add(first.wrapping_mul(GOLDEN));
    for w in words.iter_mut() {
        *w = mix(z);
        z = z.wrapping_add(GOLDEN);
    }
}

/// Fill `out` (a writable, C-contiguous uint64 array) with the payload words of indices
/// `first`, `first` + 1, ... under `seed`: word k is mix(seed + k * GOLDEN) (wrapping).
#[pyfunction]
pub fn fill_payload_words(py: Python<'_>, out: PyBuffer<u64>, seed: u64, first: u64) -> PyResult<()> {
    if out.readonly() || !out.is_c_contiguous() {
        return Err(PyValueError::new_err("payload words go into a writable, C-contiguous uint64 array"));
    }
    let n = out.item_count();
    let words = out.buf_ptr() as usize; // (an address is Send; the buffer stays held by `out`)
    py.allow_threads(move || {
        // SAFETY: `out` holds the exporter's buffer of n u64 words, writable and contiguous
        // (checked above), until it is dropped after this closure returns.
        let words = unsafe { std::slice::from_raw_parts_mut(words as *mut u64, n) };
        // a large payload is written by a few threads, each its share of the words: the time is
        // the kernel's page faults (about 0.55 s a GB), which go on in parallel
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get()).min(MAX_FILL_THREADS)
            .min(n.div_ceil(FILL_WORDS_PER_THREAD)).max(1);
        if threads == 1 {
            return fill(words, seed, first);
        }
        let share = n.div_ceil(threads);
        std::thread::scope(|scope| {
            for (k, part) in words.chunks_mut(share).enumerate() {
                let start = first.wrapping_add((k * share) as u64);
                scope.spawn(move || fill(part, seed, start));
            }
        });
    });
    Ok(())
}

/// The bytes of a buffer's rows (its last axis, contiguous), in C order of the other axes.
struct Rows {
    base: usize, // the buffer's address (an address is Send; the buffer stays held)
    shape: Vec<usize>,
    strides: Vec<isize>,
}

impl Rows {
    /// None unless the last axis is contiguous (or the array is empty or 0-d).
    fn of(buffer: &PyBuffer<u8>) -> Option<Rows> {
        let (shape, strides) = (buffer.shape().to_vec(), buffer.strides().to_vec());
        if shape.last().is_some_and(|&n| n > 1) && strides.last() != Some(&1) {
            return None;
        }
        Some(Rows { base: buffer.buf_ptr() as usize, shape, strides })
    }

    /// Each row's start address, in C order.
    fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        let outer = &self.shape[..self.shape.len().saturating_sub(1)];
        let count: usize = if self.shape.contains(&0) { 0 } else { outer.iter().product() };
        let mut index = vec![0usize; outer.len()];
        (0..count).map(move |k| {
            if k > 0 {
                for axis in (0..index.len()).rev() {
                    index[axis] += 1;
                    if index[axis] < outer[axis] {
                        break;
                    }
                    index[axis] = 0;
                }
            }
            let offset: isize = index.iter().zip(&self.strides).map(|(&i, &s)| i as isize * s).sum();
            (self.base as isize + offset) as usize
        })
    }

    fn row_bytes(&self) -> usize {
        self.shape.last().copied().unwrap_or(1)
    }
}

/// Whether two uint8 arrays of one shape hold the same bytes, each row of their last axis
/// compared whole; None where that axis is not contiguous in both (the caller compares them
/// another way). (Arrays: any buffer of uint8, strided.)
#[pyfunction]
pub fn same_bytes(py: Python<'_>, got: PyBuffer<u8>, reference: PyBuffer<u8>) -> PyResult<Option<bool>> {
    if got.shape() != reference.shape() {
        return Err(PyValueError::new_err("same_bytes compares arrays of one shape"));
    }
    let (Some(a), Some(b)) = (Rows::of(&got), Rows::of(&reference)) else {
        return Ok(None);
    };
    let n = a.row_bytes();
    let same = py.allow_threads(move || {
        a.starts().zip(b.starts()).all(|(x, y)| {
            // SAFETY: each row start lies inside its buffer (an index within the shape, by the
            // exporter's strides) and its n bytes are contiguous (Rows::of); `got` and
            // `reference` hold the buffers until this closure returns.
            let (x, y) = unsafe {
                (std::slice::from_raw_parts(x as *const u8, n), std::slice::from_raw_parts(y as *const u8, n))
            };
            x == y
        })
    });
    Ok(Some(same))
}
