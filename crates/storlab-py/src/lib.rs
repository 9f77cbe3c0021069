//! storlab's Python binding: the only crate that knows pyo3. Each wrapper
//! delegates to a storlab crate in a few lines; results cross as JSON text,
//! errors as the `storlab.errors` hierarchy (mapped in one place, `to_py`).

use pyo3::prelude::*;
use storlab_model::{Catalog, ModelError};

/// Maps a model error onto storlab.errors: catalog problems become
/// CatalogError, everything else in user input ScenarioError.
fn to_py(py: Python<'_>, e: ModelError) -> PyErr {
    let class = if e.is_catalog() { "CatalogError" } else { "ScenarioError" };
    match py.import("storlab.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((e.to_string(),))) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// Runs `f` without the GIL, then lets Python deliver a pending Ctrl-C as
/// KeyboardInterrupt.
fn released<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    let out = py.allow_threads(f);
    py.check_signals()?;
    Ok(out)
}

fn load(py: Python<'_>, files: &[(String, String)]) -> PyResult<Catalog> {
    released(py, || Catalog::from_sources(files.iter().map(|(n, t)| (n.as_str(), t.as_str()))))?.map_err(|e| to_py(py, e))
}

/// `limits_json(scenario_name, scenario_text, catalog_files) -> str`: the
/// limits record of every config, as JSON.
#[pyfunction]
fn limits_json(py: Python<'_>, scenario_name: &str, scenario_text: &str, catalog_files: Vec<(String, String)>) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let report = released(py, || storlab_model::limits(&cat, scenario_name, scenario_text))?.map_err(|e| to_py(py, e))?;
    Ok(serde_json::to_string(&report).expect("limits report serialises"))
}

/// `catalog_json(catalog_files) -> str`: every device, host, price and
/// source of the catalog, with the file each came from.
#[pyfunction]
fn catalog_json(py: Python<'_>, catalog_files: Vec<(String, String)>) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let v = serde_json::json!({
        "devices": cat.devices.values().map(|d| {
            let mut v = serde_json::to_value(d).expect("device serialises");
            v["file"] = cat.origin.get(&d.id).cloned().into();
            v
        }).collect::<Vec<_>>(),
        "hosts": cat.hosts.values().map(|h| {
            let mut v = serde_json::to_value(h).expect("host serialises");
            v["file"] = cat.origin.get(&h.id).cloned().into();
            v
        }).collect::<Vec<_>>(),
        "prices": cat.prices,
        "sources": cat.sources,
        "regions": cat.regions(),
    });
    Ok(v.to_string())
}

/// `catalog_entry_json(catalog_files, id) -> str`: one device or host with
/// its prices and the sources its numbers cite.
#[pyfunction]
fn catalog_entry_json(py: Python<'_>, catalog_files: Vec<(String, String)>, id: &str) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let entry = if let Some(d) = cat.devices.get(id) {
        serde_json::json!({"type": "device", "entry": d, "src": d.src})
    } else if let Some(h) = cat.hosts.get(id) {
        serde_json::json!({"type": "host", "entry": h, "src": h.src})
    } else {
        let all = cat.devices.keys().chain(cat.hosts.keys()).map(|s| s.as_str());
        return Err(to_py(py, ModelError::UnknownId {
            at: storlab_model::error::Location::new("catalog", "", ""),
            what: "catalog id",
            id: id.to_string(),
            suggestion: storlab_model::error::nearest(id, all),
            catalog: false,
        }));
    };
    let prices: Vec<_> = cat.prices.iter().filter(|p| p.item == id || p.item == format!("aws/rds/{}", id.rsplit('/').next().unwrap_or(""))).collect();
    let v = serde_json::json!({
        "id": id,
        "file": cat.origin.get(id),
        "type": entry["type"],
        "entry": entry["entry"],
        "prices": prices,
        "sources": cat.sources,
    });
    Ok(v.to_string())
}

fn sim_to_py(py: Python<'_>, e: storlab_sim::SimError) -> PyErr {
    use storlab_sim::SimError;
    let class = match &e {
        SimError::Model(m) => return to_py(py, m.clone()),
        SimError::NoLatency { .. } => "CatalogError",
        _ => "ScenarioError",
    };
    match py.import("storlab.errors").and_then(|m| m.getattr(class)).and_then(|c| c.call1((e.to_string(),))) {
        Ok(obj) => PyErr::from_value(obj),
        Err(err) => err,
    }
}

/// `simulate_json(scenario_name, scenario_text, scenario_dir, catalog_files,
/// period_s=None, progress=None) -> str`: the run record. `progress(fraction)`
/// is called now and then; Ctrl-C stops the run and the record keeps what
/// was simulated (`interrupted: true`).
#[pyfunction]
#[pyo3(signature = (scenario_name, scenario_text, scenario_dir, catalog_files, period_s=None, progress=None))]
fn simulate_json(
    py: Python<'_>,
    scenario_name: &str,
    scenario_text: &str,
    scenario_dir: &str,
    catalog_files: Vec<(String, String)>,
    period_s: Option<f64>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let cat = load(py, &catalog_files)?;
    let dir = std::path::PathBuf::from(scenario_dir);
    let rec = py.allow_threads(|| {
        let mut report = |fraction: f64| -> bool {
            Python::with_gil(|py| {
                if py.check_signals().is_err() {
                    return false;
                }
                if let Some(cb) = &progress {
                    if cb.call1(py, (fraction,)).is_err() {
                        return false;
                    }
                }
                true
            })
        };
        storlab_sim::simulate(&cat, scenario_name, scenario_text, &dir, period_s, &mut report)
    });
    let rec = rec.map_err(|e| sim_to_py(py, e))?;
    Ok(serde_json::to_string(&rec).expect("run record serialises"))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(limits_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_json, m)?)?;
    m.add_function(wrap_pyfunction!(catalog_entry_json, m)?)?;
    m.add_function(wrap_pyfunction!(simulate_json, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
