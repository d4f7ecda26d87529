//! Rust errors → Python exceptions: the one place the mapping lives.
//!
//! `HetschedError(Exception)` is the base; `PlatformError`, `WorkloadError`,
//! `OptionsError` and `RunError` derive from it and from `ValueError`. The message is
//! the Rust error's one-line Display (it names the file, line and column of bad input).
//! Multiple bases cannot be declared with `create_exception!`, so the classes are made
//! with `type(...)` once per interpreter and registered on the module.

use hetsched::hetsched_rtapp::{DuplicateKeys, ReadOptions};
use hetsched::hetsched_trace::TraceFormat;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyTuple, PyType};

/// The exception classes, created on first use.
struct Classes {
    base: Py<PyType>,
    platform: Py<PyType>,
    workload: Py<PyType>,
    options: Py<PyType>,
    run: Py<PyType>,
}

static CLASSES: PyOnceLock<Classes> = PyOnceLock::new();

/// Makes `class name(*bases)` in module `hetsched` with docstring `doc`.
fn make_class<'py>(
    py: Python<'py>,
    name: &str,
    doc: &str,
    bases: Bound<'py, PyTuple>,
) -> PyResult<Py<PyType>> {
    let ns = PyDict::new(py);
    ns.set_item("__module__", "hetsched")?;
    ns.set_item("__doc__", doc)?;
    let class = py.get_type::<PyType>().call1((name, bases, ns))?;
    Ok(class.cast_into::<PyType>()?.unbind())
}

fn classes(py: Python<'_>) -> PyResult<&Classes> {
    CLASSES.get_or_try_init(py, || {
        let base = make_class(
            py,
            "HetschedError",
            "Base class of the errors hetsched raises.",
            PyTuple::new(py, [py.get_type::<PyException>()])?,
        )?;
        let sub = |name: &str, doc: &str| {
            let bases = PyTuple::new(py, [base.bind(py).clone(), py.get_type::<PyValueError>()])?;
            make_class(py, name, doc, bases)
        };
        Ok::<_, PyErr>(Classes {
            platform: sub(
                "PlatformError",
                "A platform preset or YAML file could not be loaded.",
            )?,
            workload: sub(
                "WorkloadError",
                "An rt-app workload file could not be read, or a generator's parameters are not valid.",
            )?,
            options: sub(
                "OptionsError",
                "A `set=` option, duration or argument is not valid.",
            )?,
            run: sub(
                "RunError",
                "The run could not start, or its trace could not be written.",
            )?,
            base,
        })
    })
}

/// Adds the exception classes to the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let c = classes(py)?;
    m.add("HetschedError", c.base.bind(py))?;
    m.add("PlatformError", c.platform.bind(py))?;
    m.add("WorkloadError", c.workload.bind(py))?;
    m.add("OptionsError", c.options.bind(py))?;
    m.add("RunError", c.run.bind(py))?;
    Ok(())
}

/// The Python exception for a facade error.
pub(crate) fn to_py(e: hetsched::Error) -> PyErr {
    use hetsched::hetsched_core::RunError as CoreRun;
    use hetsched::Error as E;
    let msg = e.to_string();
    Python::attach(|py| {
        let c = match classes(py) {
            Ok(c) => c,
            Err(err) => return err,
        };
        let class = match &e {
            E::Platform(_) => &c.platform,
            E::Workload(_) | E::Generator(_) => &c.workload,
            E::Options(_)
            | E::Duration(..)
            | E::Run(CoreRun::Options(_))
            | E::Experiment(_)
            | E::Input { .. } => &c.options,
            E::Run(_) | E::Io { .. } | E::Reproduce(_) | E::Report(_) | E::Backend(_) => &c.run,
        };
        PyErr::from_type(class.bind(py).clone(), msg)
    })
}

/// The `duplicate_keys` argument: `"ordered"` or `"jsonc"`.
/// `trace_format="text"|"perfetto"` (`None`: by the trace file's extension); anything
/// else is an `OptionsError`.
pub(crate) fn trace_format(name: Option<&str>) -> PyResult<Option<TraceFormat>> {
    let Some(name) = name else {
        return Ok(None);
    };
    name.parse().map(Some).map_err(|msg: String| {
        Python::attach(|py| match classes(py) {
            Ok(c) => PyErr::from_type(c.options.bind(py).clone(), format!("trace_format: {msg}")),
            Err(err) => err,
        })
    })
}

pub(crate) fn read_options(duplicate_keys: &str) -> PyResult<ReadOptions> {
    let duplicate_keys = match duplicate_keys {
        "ordered" => DuplicateKeys::Ordered,
        "jsonc" => DuplicateKeys::JsonC,
        other => {
            return Err(Python::attach(|py| match classes(py) {
                Ok(c) => PyErr::from_type(
                    c.options.bind(py).clone(),
                    format!("duplicate_keys={other:?}: expected \"ordered\" or \"jsonc\""),
                ),
                Err(err) => err,
            }))
        }
    };
    Ok(ReadOptions { duplicate_keys })
}
