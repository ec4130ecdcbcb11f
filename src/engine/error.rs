//! The engine's one error type: DuckDB's failures classified once, where
//! they enter, by the exception type DuckDB gives with each error.

use std::path::PathBuf;

use crate::diag::one_line;

/// What went wrong in the engine. DuckDB's failures are classified once,
/// where they enter (`From<duckdb::Error>`, `From<StepError>`), by the
/// exception type DuckDB gives with each error while the engine loads and
/// runs the steps (`errors_as_json`, [`Engine::open`]): callers decide by
/// variant, never by the words of a message. Each displays on one line.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// DuckDB ran out of memory within its limit, in a step (`step`: its
    /// file) or loading the staged rows: the one failure a higher limit
    /// can cure. `message` is DuckDB's, without its advice (its `SET`
    /// statements are not nanoload's options).
    #[error("{}: Out of Memory Error: {message}", match step {
        Some(file) => format!("sql/{file}"),
        None => "loading the staged rows".to_string(),
    })]
    OutOfMemory {
        step: Option<&'static str>,
        message: String,
        #[source]
        source: duckdb::Error,
    },
    /// Still out of memory at the last limit tried.
    #[error(
        "{cause} (the SQL steps ran out of memory at {limit}, four times the limit; give a larger --memory-limit)"
    )]
    ResourcesExhausted {
        limit: String,
        #[source]
        cause: Box<EngineError>,
    },
    /// A step failed otherwise (`message`: DuckDB's, with its type).
    #[error("sql/{file}: {message}")]
    Step {
        file: &'static str,
        message: String,
        #[source]
        source: duckdb::Error,
    },
    /// DuckDB failed outside the steps.
    #[error("{message}")]
    Database {
        message: String,
        #[source]
        source: duckdb::Error,
    },
    /// A blob file of the stage could not be read.
    #[error("{}: {source}", path.display())]
    Blob {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Not DuckDB's: a variable of the tests set to what it cannot be, a
    /// stage that does not hold what the engine was told it does.
    #[error("{0}")]
    Invalid(String),
}

impl EngineError {
    /// Whether a higher memory limit can cure this.
    pub fn is_out_of_memory(&self) -> bool {
        matches!(self, EngineError::OutOfMemory { .. })
    }
}

/// DuckDB's class of an error and its sentence on one line: the type and
/// message of its JSON (`errors_as_json`), or, from a connection that does
/// not give JSON, the text as it is and no class.
pub fn classify(e: &duckdb::Error) -> (Option<String>, String) {
    match e {
        duckdb::Error::DuckDBFailure(_, Some(text)) => match duckdb_json(text) {
            Some(j) => {
                let field = |k: &str| j.get(k).and_then(serde_json::Value::as_str).unwrap_or("");
                let kind = field("exception_type").to_string();
                let message = match field("exception_message") {
                    "" => one_line(text),
                    m => one_line(m),
                };
                (Some(kind), message)
            }
            None => (None, one_line(text)),
        },
        other => (None, one_line(&other.to_string())),
    }
}

/// Whether `e` is DuckDB running out of memory, and its sentence as DuckDB
/// prints it (`<Type> Error: …`, without its advice on settings, which are
/// not nanoload's options), from a connection that gives its errors as
/// JSON (`errors_as_json`).
pub fn sentence(e: &duckdb::Error) -> (bool, String) {
    let (kind, message) = classify(e);
    let out_of_memory = kind.as_deref() == Some(OUT_OF_MEMORY);
    let message = if out_of_memory {
        without_advice(&message)
    } else {
        message
    };
    (out_of_memory, typed(kind.as_deref(), message))
}

/// An out-of-memory message without DuckDB's advice on its settings.
fn without_advice(message: &str) -> String {
    message
        .split("Possible solutions")
        .next()
        .unwrap_or_default()
        .trim_end()
        .to_string()
}

/// DuckDB's JSON error in `text` (`errors_as_json`): the object itself, or
/// (as a prepared statement's error comes) after the `<Type> Error: `
/// DuckDB puts before it.
pub fn duckdb_json(text: &str) -> Option<serde_json::Map<String, serde_json::Value>> {
    let start = text.find('{')?;
    let before = &text[..start];
    if !(before.is_empty() || before.ends_with(" Error: ")) {
        return None;
    }
    match serde_json::from_str::<serde_json::Value>(&text[start..]) {
        Ok(serde_json::Value::Object(j)) if j.contains_key("exception_type") => Some(j),
        _ => None,
    }
}

/// DuckDB's exception type of running out of memory.
const OUT_OF_MEMORY: &str = "Out of Memory";

/// `e` of a step (`step`: its file) or of the load (`None`), classified.
fn engine_error(step: Option<&'static str>, source: duckdb::Error) -> EngineError {
    let (kind, message) = classify(&source);
    match (kind.as_deref(), step) {
        (Some(OUT_OF_MEMORY), _) => EngineError::OutOfMemory {
            step,
            message: without_advice(&message),
            source,
        },
        (kind, Some(file)) => EngineError::Step {
            file,
            message: typed(kind, message),
            source,
        },
        (kind, None) => EngineError::Database {
            message: typed(kind, message),
            source,
        },
    }
}

/// A message after its DuckDB type, as DuckDB prints it (`Binder Error: …`).
fn typed(kind: Option<&str>, message: String) -> String {
    match kind {
        Some(k) if !k.is_empty() => format!("{k} Error: {message}"),
        _ => message,
    }
}

impl From<duckdb::Error> for EngineError {
    fn from(e: duckdb::Error) -> EngineError {
        engine_error(None, e)
    }
}

impl From<crate::steps::StepError> for EngineError {
    fn from(e: crate::steps::StepError) -> EngineError {
        match e {
            crate::steps::StepError::Sql { file, source } => engine_error(Some(file), source),
            undeclared => EngineError::Invalid(undeclared.to_string()),
        }
    }
}
