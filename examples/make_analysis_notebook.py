"""Write examples/analysis.ipynb from the cells below (the notebook is
generated so its source stays reviewable as plain Python; outputs are not
committed). Run: python3 examples/make_analysis_notebook.py"""
import json
import pathlib

CELLS = [
    ("markdown", """# What the agent did — a nanoload output, analysed

Reads `OUT.parquet` and the `--tables` directory of one nanoload run with
DuckDB and pandas, and plots usage per day, tokens and cost by model, the
tool mix, one session's timeline, and what survives only in secondary copies
(history the agent deleted). The last cell checks that the totals computed
here from `events` and `llm_calls` equal the `sessions` table.

Produce the input with
`nanoload HOME out.parquet --tables tables`, or set `NANOLOAD_OUT` and
`NANOLOAD_TABLES` to another run's files."""),
    ("code", """import os

import duckdb
import matplotlib.pyplot as plt
import pandas as pd

OUT = os.environ.get("NANOLOAD_OUT", "out.parquet")
TABLES = os.environ.get("NANOLOAD_TABLES", "tables")
con = duckdb.connect()
con.execute(f"CREATE VIEW events AS SELECT * FROM read_parquet('{OUT}')")
for t in ["sessions", "llm_calls", "tz_offsets", "diagnostics", "sources"]:
    con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{TABLES}/{t}.parquet')")
con.sql("SELECT agent, count(*) AS events, count(DISTINCT session_uid) AS sessions FROM events GROUP BY ALL ORDER BY ALL").df()"""),
    ("markdown", """## Usage per day

The host's local day where the load derived its UTC offset; the UTC day
where it could not (nanoclaw keeps only UTC times)."""),
    ("code", """per_day = con.sql(\"\"\"
    SELECT coalesce(CAST(timestamp_local AS DATE), CAST(timestamp_utc AS DATE)) AS day,
           turn_type, count(*) AS n
    FROM events WHERE coalesce(timestamp_local, timestamp_utc) IS NOT NULL
    GROUP BY ALL ORDER BY ALL\"\"\").df()
if len(per_day):
    ax = (per_day.pivot(index="day", columns="turn_type", values="n").fillna(0)
          .plot.bar(stacked=True, figsize=(9, 3), title="Events per day (local; UTC without an offset)"))
    ax.set_xlabel("day")
    ax.set_ylabel("events")
    plt.show()
per_day.groupby("day")["n"].sum()"""),
    ("markdown", "## Tokens and cost by model"),
    ("code", """by_model = con.sql(\"\"\"
    SELECT coalesce(model, '(unknown)') AS model, count(*) AS calls,
           sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens,
           sum(cost_usd) AS cost_usd
    FROM llm_calls GROUP BY ALL ORDER BY input_tokens DESC NULLS LAST\"\"\").df()
if len(by_model):
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3))
    by_model.set_index("model")[["input_tokens", "output_tokens"]].fillna(0).plot.barh(
        ax=a, title="Tokens by model (both agents)")
    a.set_xlabel("tokens")
    by_model.set_index("model")["cost_usd"].fillna(0).plot.barh(
        ax=b, title="Cost (USD) by model; unpriced models show 0")
    b.set_xlabel("USD")
    plt.tight_layout()
    plt.show()
by_model"""),
    ("markdown", "## The tool mix"),
    ("code", """tools = con.sql(\"\"\"
    SELECT tool_name, count(*) AS calls FROM events
    WHERE turn_type = 'tool_use' GROUP BY ALL ORDER BY calls DESC, tool_name\"\"\").df()
if len(tools):
    ax = tools.set_index("tool_name")["calls"].plot.barh(figsize=(7, 3), title="Tool calls")
    ax.set_xlabel("calls")
    plt.show()
tools"""),
    ("markdown", "## One session's timeline (the session with the most rows)"),
    ("code", """top = con.execute(\"\"\"
    SELECT session_uid, any_value(session_id) AS session_id FROM events
    WHERE session_uid IS NOT NULL GROUP BY ALL ORDER BY count(*) DESC, session_uid LIMIT 1\"\"\").fetchone()
timeline = con.execute(\"\"\"
    SELECT ordinal, timestamp_utc, turn_type, tool_name, left(text, 60) AS text
    FROM events WHERE session_uid = ? AND timestamp_utc IS NOT NULL
    ORDER BY ordinal\"\"\", [top[0] if top else None]).df()
if len(timeline):
    fig, ax = plt.subplots(figsize=(9, 3))
    for kind, rows in timeline.groupby("turn_type"):
        ax.scatter(rows["timestamp_utc"], rows["ordinal"], label=kind, s=14)
    ax.set_title(f"Session {top[1]}: each row at its UTC time")
    ax.set_xlabel("UTC time")
    ax.set_ylabel("ordinal")
    ax.legend(fontsize=7)
    plt.show()
timeline.head(20)"""),
    ("markdown", """## What was recovered after deletes

Rows kept from secondary copies (WebUI transcripts, CLI history, frozen or
backup session files) are history the store of record no longer holds."""),
    ("code", """recovered = con.sql(\"\"\"
    SELECT coalesce(session_id, '(none)') AS session_id, source_kind, count(*) AS rows
    FROM events WHERE source_role = 'secondary' GROUP BY ALL ORDER BY ALL\"\"\").df()
if len(recovered):
    ax = recovered.pivot(index="session_id", columns="source_kind", values="rows").fillna(0).plot.barh(
        stacked=True, figsize=(8, 3), title="Rows only in secondary copies")
    ax.set_xlabel("rows")
    plt.show()
recovered"""),
    ("markdown", "## Totals equal the `sessions` table"),
    ("code", """check = con.sql(\"\"\"
    WITH e AS (SELECT session_uid, count(*) AS rows FROM events
               WHERE session_uid IS NOT NULL GROUP BY ALL),
         l AS (SELECT session_uid, count(*) AS calls, sum(input_tokens) AS input_tokens,
                      sum(output_tokens) AS output_tokens, sum(cost_usd) AS cost_usd
               FROM llm_calls WHERE session_uid IS NOT NULL GROUP BY ALL)
    SELECT s.session_uid, s.rows, e.rows AS rows_here,
           coalesce(s.llm_calls, 0) AS calls, coalesce(l.calls, 0) AS calls_here,
           s.input_tokens, l.input_tokens AS input_here,
           s.output_tokens, l.output_tokens AS output_here,
           s.cost_usd, l.cost_usd AS cost_here
    FROM sessions s FULL JOIN e USING (session_uid) LEFT JOIN l USING (session_uid)\"\"\").df()
pairs = [("rows", "rows_here"), ("calls", "calls_here"), ("input_tokens", "input_here"),
         ("output_tokens", "output_here"), ("cost_usd", "cost_here")]
for a, b in pairs:
    left, right = check[a], check[b]
    same = (left.isna() & right.isna()) | ((left - right).abs() < 1e-9)
    assert same.all(), check.loc[~same, ["session_uid", a, b]]
totals = {a: round(float(check[a].fillna(0).sum()), 9) for a, _ in pairs}
print(f"totals equal the sessions table: {len(check)} sessions, {totals}")"""),
]


def main():
    cells = []
    for i, (kind, src) in enumerate(CELLS):
        cell = {"cell_type": kind, "id": f"cell-{i:02d}", "metadata": {}, "source": src.splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    nb = {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = pathlib.Path(__file__).with_name("analysis.ipynb")
    path.write_text(json.dumps(nb, indent=1) + "\n")


if __name__ == "__main__":
    main()
