//! The report's queries run through these: every value comes back as text
//! (NULL as the empty string), so a table beside a chart shows exactly what
//! DuckDB computed, and costs are summed as exact decimals.

use duckdb::Connection;

use super::ReportError;

/// Local times as the report writes them.
pub(super) const TS: &str = "'%Y-%m-%d %H:%M:%S'";

/// Cost as text: exact decimal sums, 6 decimals; `unknown` when no row of
/// the group has a price.
pub(super) const COST: &str = "coalesce(CAST(round(sum(cost_usd::DECIMAL(38, 12)), 6) AS DECIMAL(38, 6))::VARCHAR, 'unknown')";

/// Rows of a query, every value as text (NULL as the empty string), with
/// the column names given.
pub(super) struct Data {
    pub(super) columns: Vec<String>,
    pub(super) rows: Vec<Vec<String>>,
    /// A TOTAL row shown below the rows (`<tfoot>`), not drawn.
    pub(super) total: Option<Vec<String>>,
    /// Columns of USD whatever their name (a model's cost per day).
    pub(super) usd: Vec<usize>,
}

impl Data {
    pub(super) fn col(&self, name: &str) -> usize {
        self.columns.iter().position(|c| *c == name).unwrap_or(0)
    }
    /// Per row, the cells of `cols` joined by ` · ` (a chart's row labels).
    pub(super) fn labels(&self, cols: &[usize]) -> Vec<String> {
        self.rows
            .iter()
            .map(|r| {
                cols.iter()
                    .map(|&c| r.get(c).map_or("", String::as_str))
                    .collect::<Vec<_>>()
                    .join(" · ")
            })
            .collect()
    }
    /// A cell as a number (0 when it is not one, e.g. `unknown`).
    pub(super) fn num(&self, row: usize, col: usize) -> f64 {
        self.rows
            .get(row)
            .and_then(|r| r.get(col))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    }
}

/// The rows of `sql`, named `columns` (as many as it returns).
pub(super) fn fetch(conn: &Connection, columns: &[&str], sql: &str) -> Result<Data, ReportError> {
    let mut stmt = conn.prepare(&format!("SELECT COLUMNS(*)::VARCHAR FROM ({sql})"))?;
    let mut rows = stmt.query([])?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let n = r.as_ref().column_count();
        if n != columns.len() {
            return Err(ReportError::Query(format!(
                "{n} columns where {columns:?} were expected"
            )));
        }
        let mut row = Vec::with_capacity(n);
        for i in 0..n {
            row.push(r.get::<_, Option<String>>(i)?.unwrap_or_default());
        }
        out.push(row);
    }
    Ok(Data {
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows: out,
        total: None,
        usd: Vec::new(),
    })
}

/// One value of a one-row query.
pub(super) fn scalar(conn: &Connection, sql: &str) -> Result<String, ReportError> {
    let d = fetch(conn, &["v"], sql)?;
    Ok(d.rows
        .into_iter()
        .next()
        .and_then(|r| r.into_iter().next())
        .unwrap_or_default())
}
