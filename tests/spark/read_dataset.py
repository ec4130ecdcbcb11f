"""Read a nanoload fleet dataset with PySpark (local mode) and print what
tests/dataset.rs compares with DuckDB, as one JSON object on stdout:

  types    the Spark type of events' timestamp_utc / timestamp_local and of
           every column Spark reads as an unsigned or a non-microsecond type
  events   {host: rows}
  sessions {host: rows}
  tokens   [[host, model, input_tokens, output_tokens, calls, cost_usd], ...] from llm_calls
  load_ids {host: sorted distinct load_id over all six tables}

usage: python read_dataset.py DIR
"""
import json
import sys

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

TABLES = ["events", "sessions", "llm_calls", "tz_offsets", "diagnostics", "sources"]


def main(root):
    spark = (
        SparkSession.builder.master("local[2]")
        .appName("nanoload-dataset-test")
        .config("spark.ui.enabled", "false")
        # a host named 007 stays the string "007"
        .config("spark.sql.sources.partitionColumnTypeInference.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    frames = {t: spark.read.parquet(f"{root}/{t}") for t in TABLES}
    ev = frames["events"]
    types = {f.name: f.dataType.simpleString() for f in ev.schema.fields if f.name.startswith("timestamp")}
    out = {
        "types": types,
        "events": {r["host"]: r["count"] for r in ev.groupBy("host").count().collect()},
        "sessions": {r["host"]: r["count"] for r in frames["sessions"].groupBy("host").count().collect()},
        "tokens": sorted(
            ([r["host"], r["model"], r["i"], r["o"], r["n"], r["c"]]
            for r in frames["llm_calls"]
            .groupBy("host", "model")
            .agg(
                F.sum("input_tokens").alias("i"),
                F.sum("output_tokens").alias("o"),
                F.count("*").alias("n"),
                F.round(F.sum("cost_usd"), 9).alias("c"),
            )
            .collect()),
            key=lambda r: [str(x) for x in r],
        ),
    }
    ids = None
    for t in TABLES:
        rows = frames[t].select("host", "load_id").distinct()
        ids = rows if ids is None else ids.union(rows)
    load_ids = {}
    for r in ids.distinct().collect():
        load_ids.setdefault(r["host"], []).append(r["load_id"])
    out["load_ids"] = {h: sorted(v) for h, v in load_ids.items()}
    print(json.dumps(out, sort_keys=True))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
