use super::*;

use crate::engine::sql_str;

/// The parallel encoder writes the bytes [`ArrowWriter`] writes itself
/// for the same batches and row-group ends (three groups of several
/// batches, an empty end between two, nulls, a long text).
#[test]
fn the_parallel_encoder_writes_the_bytes_of_arrow_writer() -> Result<(), WriteError> {
    use arrow::array::{Int64Array, StringArray};
    let dir = tempfile::tempdir()?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, true),
        Field::new("text", DataType::Utf8, true),
        Field::new("kind", DataType::Utf8, true),
    ]));
    let level = ZstdLevel::try_new(ZSTD_LEVEL)?;
    let props = || {
        WriterProperties::builder()
            .set_compression(Compression::ZSTD(level))
            .set_column_dictionary_enabled(ColumnPath::from("text"), false)
            .build()
    };
    let mut sent: Vec<Option<RecordBatch>> = Vec::new();
    for group in 0..3i64 {
        for part in 0..4i64 {
            let base = group * 1000 + part * 250;
            let n: Int64Array = (base..base + 250)
                .map(|i| (i % 11 != 0).then_some(i))
                .collect();
            let text: StringArray = (base..base + 250)
                .map(|i| {
                    (i % 13 != 0).then(|| format!("t{i}-{}", "y".repeat((i as usize * 7) % 900)))
                })
                .collect();
            let kind: StringArray = (base..base + 250)
                .map(|i| Some(["user", "assistant", "tool"][i as usize % 3]))
                .collect();
            sent.push(Some(RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(n), Arc::new(text), Arc::new(kind)],
            )?));
        }
        sent.push(None);
        if group == 1 {
            sent.push(None);
        }
    }
    let (a, b) = (dir.path().join("a.parquet"), dir.path().join("b.parquet"));
    let mut plain =
        ArrowWriter::try_new(std::fs::File::create(&a)?, schema.clone(), Some(props()))?;
    for batch in &sent {
        match batch {
            Some(b) => plain.write(b)?,
            None => plain.flush()?,
        }
    }
    plain.close()?;
    let (send, receive) = std::sync::mpsc::sync_channel(sent.len());
    for batch in sent {
        send.send(batch)?;
    }
    drop(send);
    let writer = ArrowWriter::try_new(std::fs::File::create(&b)?, schema.clone(), Some(props()))?;
    encode(writer, &schema, receive)?;
    let (a, b) = (std::fs::read(a)?, std::fs::read(b)?);
    assert!(a.len() > 20_000, "{} bytes", a.len());
    assert!(a == b, "{} bytes vs {} bytes", a.len(), b.len());
    Ok(())
}

/// 3 000 rows whose place (`out_pos`) is a permutation of their
/// storage order, texts of 3–2 002 bytes (one of 50 000), a native on
/// every third; every seventh row's text and native staged (`x_wide`),
/// the others' in one blob file.
#[test]
fn events_are_written_in_out_pos_order_with_their_blob_texts() -> Result<(), WriteError> {
    let dir = tempfile::tempdir()?;
    let conn = Connection::open_in_memory()?;
    let mut blob = Vec::new();
    let mut rows = Vec::new();
    for i in 0..3000i64 {
        let pad = if i == 1500 {
            50_000
        } else {
            (i as usize * 31) % 2000
        };
        let text = format!("t{i}-{}", "x".repeat(pad));
        let native = (i % 3 == 0).then(|| format!("{{\"n\":{i}}}"));
        let wide = i % 7 == 0;
        let off = blob.len();
        if !wide {
            blob.extend_from_slice(text.as_bytes());
            blob.extend_from_slice(native.as_deref().unwrap_or("").as_bytes());
        }
        let q = |v: Option<&str>| v.map_or("NULL".to_string(), |v| format!("'{v}'"));
        rows.push(format!(
            "({i}, {pos}, {t}, {n}, {wide}, {b}, {off}, {tl}, {nl})",
            pos = (i * 1237) % 3000 + 1,
            t = q(wide.then_some(text.as_str())),
            n = q(native.as_deref().filter(|_| wide)),
            b = if wide { "NULL" } else { "1" },
            tl = text.len(),
            nl = native
                .as_ref()
                .map_or("NULL".to_string(), |n| n.len().to_string()),
        ));
    }
    let path = dir.path().join("blob-1.bin");
    std::fs::write(&path, &blob)?;
    conn.execute_batch(&format!(
        "CREATE TABLE plan (i BIGINT, out_pos BIGINT, text VARCHAR, native VARCHAR,
             x_wide BOOLEAN, x_blob INTEGER, x_off BIGINT, x_text_len BIGINT, x_native_len BIGINT);
         INSERT INTO plan VALUES {};
         CREATE TABLE events_plan AS
         SELECT *, coalesce(x_text_len, 0) + coalesce(x_native_len, 0) AS x_bytes
         FROM plan ORDER BY out_pos;
         CREATE VIEW events AS SELECT i, text, native FROM events_plan;",
        rows.join(", ")
    ))?;
    let out = dir.path().join("out.parquet");
    write_events(&conn, &BTreeMap::from([(1, path)]), &out)?;
    // every row at its out_pos, with its own text and native
    let (n, ordered, same): (i64, bool, bool) = conn.query_row(
        &format!(
            "SELECT count(*), bool_and(p.out_pos = o.n),
                 bool_and(o.text = 't' || o.i || '-' || repeat('x', CASE WHEN o.i = 1500 THEN 50000 ELSE (o.i * 31) % 2000 END)
                          AND o.native IS NOT DISTINCT FROM CASE WHEN o.i % 3 = 0 THEN '{{\"n\":' || o.i || '}}' END)
             FROM (SELECT *, row_number() OVER () AS n FROM read_parquet({})) o
             JOIN plan p USING (i)",
            sql_str(&out)
        ),
        [],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    assert_eq!((n, ordered, same), (3000, true, true));
    // the types DuckDB reads back
    let types: String = conn.query_row(
        &format!(
            "SELECT string_agg(column_type, ',') FROM (DESCRIBE SELECT * FROM read_parquet({}))",
            sql_str(&out)
        ),
        [],
        |r| r.get(0),
    )?;
    assert_eq!(types, "BIGINT,VARCHAR,VARCHAR");
    Ok(())
}

/// A plan whose stored order is not out_pos (V016 inserts it sorted;
/// here it is not): the write stops with an error naming the first row
/// out of place and leaves no row group behind it unchecked.
#[test]
fn a_plan_stored_out_of_order_is_an_error() -> Result<(), WriteError> {
    let dir = tempfile::tempdir()?;
    let conn = Connection::open_in_memory()?;
    conn.execute_batch(
        "CREATE TABLE events_plan (i BIGINT, out_pos BIGINT, text VARCHAR, native VARCHAR,
             x_wide BOOLEAN, x_blob INTEGER, x_off BIGINT, x_text_len BIGINT,
             x_native_len BIGINT, x_bytes BIGINT);
         INSERT INTO events_plan VALUES
             (1, 1, 'a', NULL, true, NULL, NULL, 1, NULL, 1),
             (2, 3, 'c', NULL, true, NULL, NULL, 1, NULL, 1),
             (3, 2, 'b', NULL, true, NULL, NULL, 1, NULL, 1);
         CREATE VIEW events AS SELECT i, text, native FROM events_plan;",
    )?;
    let out = dir.path().join("out.parquet");
    let err = write_events(&conn, &BTreeMap::new(), &out)
        .err()
        .map(|e| e.to_string());
    assert_eq!(
        err.as_deref(),
        Some("events_plan: out_pos 3 where 2 was due (rows out of order)")
    );
    Ok(())
}
