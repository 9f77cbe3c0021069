//! placeholder
use super::ImportError;
use crate::RunRecord;

pub fn read(file: &str, _doc: &impl std::fmt::Debug) -> Result<RunRecord, ImportError> {
    Err(ImportError::Empty { file: file.into(), format: "sysbench".into(), hint: "not yet read".into() })
}
