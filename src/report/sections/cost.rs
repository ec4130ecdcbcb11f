//! The cost section: what the calls cost per day, per model and per
//! session, and their tokens.

use super::*;

pub(in crate::report) fn cost(
    conn: &Connection,
    p: &mut Page,
    have_tables: bool,
) -> Result<(), ReportError> {
    p.section(
        "tokens",
        "Cost and tokens",
        "The LLM calls of both agents (<code>llm_calls</code>: nanobot's <code>llm_usage</code> \
         rows and nanoclaw's Claude Code responses with counted usage) per local day \
         (<code>started_at_local</code>; the UTC day where no offset is known), per model and \
         per session. Cost is the sum of the priced calls (USD); a model the price table does \
         not know costs <code>unknown</code>, never 0, and its calls are counted as unpriced. \
         Input tokens include the cached ones.",
    );
    if !have_tables {
        p.missing("llm_calls", "Cost and tokens");
        return Ok(());
    }
    let day = call_day();
    // the models by cost; the first ones named, the rest together
    let models = fetch(
        conn,
        &["model"],
        "SELECT coalesce(model, '(none)') AS m FROM llm_calls WHERE started_at_ms IS NOT NULL
         GROUP BY m ORDER BY sum(cost_usd::DECIMAL(38, 12)) DESC NULLS LAST, count(*) DESC, m",
    )?;
    let all: Vec<String> = models.rows.iter().map(|r| r[0].clone()).collect();
    let named: Vec<String> = if all.len() <= MODEL_COLORS.len() {
        all.clone()
    } else {
        all[..MODEL_COLORS.len() - 1].to_vec()
    };
    let mut series: Series = named
        .iter()
        .zip(MODEL_COLORS)
        .map(|(m, c)| (m.clone(), c))
        .collect();
    if named.len() < all.len() {
        series.push(((OTHER_MODELS).to_string(), GREY));
    }
    let in_list = named
        .iter()
        .map(|m| sql_text(m))
        .collect::<Vec<_>>()
        .join(", ");
    let group = if named.is_empty() {
        sql_text(OTHER_MODELS)
    } else {
        format!(
            "CASE WHEN coalesce(model, '(none)') IN ({in_list}) THEN coalesce(model, '(none)') \
             ELSE {} END",
            sql_text(OTHER_MODELS)
        )
    };
    let per_model: Vec<String> = series
        .iter()
        .map(|(m, _)| {
            let m = sql_text(m);
            format!(
                "CASE WHEN count(*) FILTER (WHERE m = {m}) = 0 THEN NULL
                 ELSE coalesce(CAST(round(sum(cost_usd::DECIMAL(38, 12)) FILTER (WHERE m = {m}), 6)
                                    AS DECIMAL(38, 6))::VARCHAR, 'unknown') END"
            )
        })
        .collect();
    let mut cols: Vec<&str> = vec!["day"];
    cols.extend(series.iter().map(|(m, _)| m.as_str()));
    cols.extend(["total", "unpriced_calls", "partial"]);
    let sums = format!(
        "{}{COST}, count(*) FILTER (WHERE cost_usd IS NULL),
         CASE WHEN count(*) FILTER (WHERE cost_usd IS NULL) > 0 THEN 'partial' ELSE '' END",
        per_model
            .iter()
            .map(|c| format!("{c}, "))
            .collect::<String>()
    );
    let calls = format!(
        "SELECT *, {day} AS day, {group} AS m FROM llm_calls WHERE started_at_ms IS NOT NULL"
    );
    let mut days = fetch(
        conn,
        &cols,
        &format!("WITH c AS ({calls}) SELECT day, {sums} FROM c GROUP BY day ORDER BY day"),
    )?;
    if !days.rows.is_empty() {
        days.total = fetch(
            conn,
            &cols,
            &format!("WITH c AS ({calls}) SELECT 'TOTAL', {sums} FROM c"),
        )?
        .rows
        .into_iter()
        .next();
    }
    days.usd = (1..=series.len()).collect();
    let flagged: Vec<bool> = days
        .rows
        .iter()
        .map(|r| r.last().is_some_and(|v| !v.is_empty()))
        .collect();
    add(
        p,
        "cost-day",
        "Cost per local day by model (USD, priced calls; * a day with unpriced calls: its cost is partial)",
        days,
        Draw::Vertical(XAxis::Days, series, usd("USD"), &flagged),
    )?;
    let undated = scalar(
        conn,
        "SELECT count(*) FROM llm_calls WHERE started_at_ms IS NULL",
    )?;
    if undated != "0" {
        p.note(&format!(
            "{} calls have no start time and no day.",
            esc(&undated)
        ));
    }
    let top = fetch(
        conn,
        &[
            "title",
            "instance",
            "agent",
            "started",
            "duration",
            "models",
            "tool_calls",
            "llm_calls",
            "cost_usd",
        ],
        &format!(
            "{} LIMIT {MAX_TOP_SESSIONS}",
            top_sessions(
                &session_column(conn, "title")?,
                &session_column(conn, "instance")?
            )
        ),
    )?;
    p.note(&format!(
        "The {MAX_TOP_SESSIONS} sessions with calls that cost most (a session with an unpriced \
         call costs <code>unknown</code> and follows the priced ones), each by its title (the \
         WebUI chat's, else its first message; its id where it has neither) and instance: when \
         it started, how long it ran, on which models, with how many tool calls."
    ));
    p.list("top-sessions", &top);

    let tok_series: Series = vec![
        ("input_tokens".into(), BLUE_),
        ("output_tokens".into(), ORANGE),
    ];
    let sums = "count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),
                coalesce(sum(cache_read_tokens), 0), coalesce(sum(cache_write_tokens), 0)";
    let tok_cols = [
        "calls",
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
    ];
    let models = scalar(
        conn,
        "SELECT count(*) FROM (SELECT DISTINCT provider, model FROM llm_calls)",
    )?;
    let cost_model = fetch(
        conn,
        &["provider", "model", "cost_usd", "unpriced_calls"],
        &format!(
            "SELECT coalesce(provider, '(none)') AS p, coalesce(model, '(none)') AS m, {COST},
                    count(*) FILTER (WHERE cost_usd IS NULL)
             FROM llm_calls GROUP BY p, m
             ORDER BY sum(cost_usd::DECIMAL(38, 12)) DESC NULLS LAST, p, m
             LIMIT {MAX_MODELS}"
        ),
    )?;
    p.note(&format!(
        "Provider and model pairs: {}; at most {MAX_MODELS} are drawn.",
        esc(&models)
    ));
    let labels = cost_model.labels(&[1, 0]);
    add(
        p,
        "cost-model",
        "Cost per model (USD; unknown: no price)",
        cost_model,
        Draw::Horizontal(&labels, vec![("cost_usd".into(), GREEN_)], usd("USD")),
    )?;
    let mut cols = vec!["day"];
    cols.extend(tok_cols);
    let days = fetch(
        conn,
        &cols,
        &format!(
            "SELECT {day} AS day, {sums}
             FROM llm_calls WHERE started_at_ms IS NOT NULL GROUP BY day ORDER BY day"
        ),
    )?;
    add(
        p,
        "tokens-day",
        "Tokens per local day (the UTC day where no offset is known)",
        days,
        Draw::Vertical(XAxis::Days, tok_series.clone(), counts("tokens"), &[]),
    )?;
    let mut cols = vec!["provider", "model"];
    cols.extend(tok_cols);
    let by_model = fetch(
        conn,
        &cols,
        &format!(
            "SELECT coalesce(provider, '(none)') AS p, coalesce(model, '(none)') AS m, {sums}
             FROM llm_calls GROUP BY p, m
             ORDER BY coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) DESC, p, m
             LIMIT {MAX_MODELS}"
        ),
    )?;
    let labels = by_model.labels(&[1, 0]);
    add(
        p,
        "tokens-model",
        "Tokens per model (the most tokens first)",
        by_model,
        Draw::Horizontal(&labels, tok_series, counts("tokens")),
    )?;
    let nc = fetch(
        conn,
        &["calls", "priced", "cost_usd"],
        &format!(
            "SELECT count(*), count(cost_usd), {COST} FROM llm_calls WHERE agent = 'nanoclaw'"
        ),
    )?;
    if let Some(r) = nc.rows.first().filter(|r| r[0] != "0") {
        p.note(&format!(
            "nanoclaw: {} Claude Code responses with counted usage, {} of them priced, together \
             <span data-fact=\"nanoclaw_cost_usd\">{}</span>.",
            esc(&r[0]),
            esc(&r[1]),
            esc(&dollars(&r[2]))
        ));
    }
    Ok(())
}

/// The column of the models a chart stacked by model does not name.
pub const OTHER_MODELS: &str = "(other models)";
