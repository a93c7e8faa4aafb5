//! The data check's payload words at memory speed (runtime/data_values.py `payload_words`).
//!
//! A byte array's payload is, word by word (8 bytes), splitmix64's output function of the
//! word's index in the global array under a seed drawn from the run's generator: a bijection of
//! the index, so no two words of an array are alike and a block that lands in a wrong place, or
//! whose bytes are wrong, differs from the reference. numpy computes the same words where the
//! extension is missing (tests/runtime/test_data_values.py holds the two to each other); here
//! they are written in one pass, in place (numpy's generator drew 1 GB of random words in about
//! 0.6 s of CPU beyond the page faults; this writes them in about 0.3 s).

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
        let mut z = seed.wrapping_add(first.wrapping_mul(GOLDEN));
        for w in words.iter_mut() {
            *w = mix(z);
            z = z.wrapping_add(GOLDEN);
        }
    });
    Ok(())
}
