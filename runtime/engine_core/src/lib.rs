//! Phalanx's native event core: runtime/engine.py's event heap, resources and pools, and
//! runtime/interpreter.py's node walkers and message processes, run without a Python call per
//! event (runtime/native_run.py drives it; docs/engine.md).
//!
//! It mirrors the Python engine event for event, so that simulated times are identical: a heap
//! of (time, sequence, action), the sequence number counted exactly where the Python engine
//! schedules an event (process starts, timeouts, grants from a queue, process ends, inboxes,
//! all-of waits, barriers), a request granted to the running process at once without the heap
//! (`happen_now`), and the callbacks of one event run in the order they were added (events.rs:
//! a 4-ary heap, and a queue beside it for the entries with no delay, taken in the heap's order).
//!
//! A message is a *program* (a short list of acquire / hold / release ops) that its network
//! declared in Python (Network.transfer_program), or a *shaped* program whose ops the core makes
//! from the message's ends when it starts (shapes.rs, Network.program_shape); the data check
//! stays in Python, which replays the log of message starts and ends in order
//! (runtime/native_run.py), but for the payload words of byte arrays, written here at memory
//! speed, and the byte comparison of what landed with the reference (data.rs).

mod api;
mod data;
mod events;
mod gates;
mod model;
mod owned;
mod resources;
mod shapes;
mod walkers;
mod wormhole;

use model::*;
use pyo3::prelude::*;

#[pymodule]
fn phalanx_engine_core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Core>()?;
    m.add_class::<owned::OwnedColumn>()?;
    m.add_function(wrap_pyfunction!(data::fill_payload_words, m)?)?;
    m.add_function(wrap_pyfunction!(data::same_bytes, m)?)?;
    m.add("FINISHED", FINISHED)?;
    m.add("NEED_RUN", NEED_RUN)?;
    m.add("DEADLOCK", DEADLOCK)?;
    m.add("STOPPED_EVENTS", STOPPED_EVENTS)?;
    m.add("STOPPED_TIME", STOPPED_TIME)?;
    m.add("SENT_TWICE", SENT_TWICE)?;
    m.add("LOG_FULL", LOG_FULL)?;
    m.add("LOG_START", LOG_START)?;
    m.add("LOG_END", LOG_END)?;
    m.add("LOG_LEAVE", LOG_LEAVE)?;
    m.add("SPAN_COMPUTE", SPAN_COMPUTE)?;
    m.add("SPAN_SEND", SPAN_SEND)?;
    m.add("SPAN_COPY", SPAN_COPY)?;
    m.add("SPAN_PHASE", SPAN_PHASE)?;
    Ok(())
}
