//! Columns the core made, handed to Python without a copy (`OwnedColumn`): numpy reads one in
//! place through the buffer protocol (np.asarray), and its vector is freed with the last array
//! over it. The spans (33 bytes each) and a finished run's log (12 bytes an entry) were copied
//! into bytes objects, so that both copies were resident at once: 3.8 MB of torus:16x16's
//! message-passing all-to-all's 4.9 MB of run memory above its plan (docs/engine.md).

use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use std::ffi::{c_int, c_void, CStr};
use std::ptr;

pub(crate) enum Values {
    U8(Vec<u8>),
    U32(Vec<u32>),
    F64(Vec<f64>),
}

/// A vector's element type as the buffer protocol names it (native byte order, standard size).
pub(crate) trait ColumnElement: Sized {
    const FORMAT: &'static CStr;
    fn values(column: Vec<Self>) -> Values;
}

/// `ColumnElement` for a type: its buffer format and its variant of `Values`.
macro_rules! column_element {
    ($t:ty, $format:expr, $variant:ident) => {
        impl ColumnElement for $t {
            const FORMAT: &'static CStr = $format;
            fn values(column: Vec<Self>) -> Values {
                Values::$variant(column)
            }
        }
    };
}

column_element!(u8, c"B", U8);
column_element!(u32, c"I", U32);
column_element!(f64, c"d", F64);

/// One read-only column of values; Python sees it as a one-dimensional buffer of its type.
#[pyclass(module = "phalanx_engine_core", frozen)]
pub(crate) struct OwnedColumn {
    values: Values,
    format: &'static CStr,
    shape: [isize; 1], // its length, where the buffer's shape points
    itemsize: isize,   // where its strides point
}

impl OwnedColumn {
    /// The vector, its spare capacity given back first (a grown vector has up to as much again).
    pub(crate) fn new<T: ColumnElement>(mut column: Vec<T>) -> Self {
        column.shrink_to_fit();
        let (len, itemsize) = (column.len() as isize, std::mem::size_of::<T>() as isize);
        OwnedColumn { values: T::values(column), format: T::FORMAT, shape: [len], itemsize }
    }

    fn start(&self) -> *const c_void {
        match &self.values {
            Values::U8(v) => v.as_ptr() as *const c_void,
            Values::U32(v) => v.as_ptr() as *const c_void,
            Values::F64(v) => v.as_ptr() as *const c_void,
        }
    }
}

#[pymethods]
impl OwnedColumn {
    fn __len__(&self) -> usize {
        self.shape[0] as usize
    }

    /// The buffer protocol, read-only: the view holds a reference to the column, whose fields
    /// (shape, itemsize, format) and values never change, so the pointers stay valid.
    unsafe fn __getbuffer__(slf: Bound<'_, Self>, view: *mut ffi::Py_buffer, flags: c_int) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("no view to fill"));
        }
        if flags & ffi::PyBUF_WRITABLE == ffi::PyBUF_WRITABLE {
            return Err(PyBufferError::new_err("a column of the core is read-only"));
        }
        let column = slf.get();
        (*view).buf = column.start() as *mut c_void;
        (*view).len = column.shape[0] * column.itemsize;
        (*view).readonly = 1;
        (*view).itemsize = column.itemsize;
        (*view).format = if flags & ffi::PyBUF_FORMAT == ffi::PyBUF_FORMAT {
            column.format.as_ptr() as *mut _
        } else {
            ptr::null_mut()
        };
        (*view).ndim = 1;
        (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
            column.shape.as_ptr() as *mut isize
        } else {
            ptr::null_mut()
        };
        (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
            &column.itemsize as *const isize as *mut isize
        } else {
            ptr::null_mut()
        };
        (*view).suboffsets = ptr::null_mut();
        (*view).internal = ptr::null_mut();
        (*view).obj = slf.into_any().into_ptr();
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}
