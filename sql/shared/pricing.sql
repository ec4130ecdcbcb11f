-- pricing (shared)
-- Purpose: the pricing rules (docs/design.md "Cost"), in one place: how a
--          call's model finds its price row, what one call costs from its
--          tokens, and what a group of calls (a session) costs. Run by the
--          step V019 (in place of its `-- @pricing` line) and by every
--          reader that prices a load's output again at read
--          (src/engine/mod.rs `reprice`), so both price alike.
-- Grain:   price_names: one row per name a price row answers to;
--          model_prices: one row per (agent, provider, model) of model_uses.
-- Inputs:  prices, free_models (crate::prices: the price table and the
--          --free patterns), model_uses (agent, provider, model: the
--          models the calls name, with the first instance and source_path
--          using them and uses), diagnostics, the macro diag_code.
-- Output:  the macros price_name(s), call_cost(…) and calls_cost(priced,
--          cost); price_names (name, norm, alias, price_model);
--          model_prices (agent, provider, model, price_model, price_step:
--          1–4 the rule that matched, 0 a --free pattern (cost 0), NULL
--          unmatched; input, output, cache_read, cache_write: USD per
--          token); rows appended to diagnostics (`price_unknown`, one per
--          model no rule prices).

-- The one normalisation of a model name: lower case, `.` between two digits
-- as `-` (claude-sonnet-4.5 → claude-sonnet-4-5; twice, for 3.5.1), a
-- trailing date stamp (-20250929, @20250929, -2024-08-06) removed.
CREATE MACRO price_name(s) AS regexp_replace(
    regexp_replace(regexp_replace(lower(s), '(\d)\.(\d)', '\1-\2', 'g'),
                   '(\d)\.(\d)', '\1-\2', 'g'),
    '[-@]([0-9]{8}|[0-9]{4}-[0-9]{2}-[0-9]{2})$', '');

-- USD of one call (DECIMAL, exact) from its token counts, NULLs as 0, with
-- `input` counting the cached tokens too (nanobot's input_tokens): the
-- uncached input (never below 0) at the input price, cache reads and writes
-- at their prices (the input price when the table has none), output at the
-- output price. NULL when the model has no price (p_in NULL).
CREATE MACRO call_cost(input, cache_read, cache_write, output, p_in, p_out, p_read, p_write) AS
    greatest(coalesce(input, 0) - coalesce(cache_read, 0) - coalesce(cache_write, 0), 0) * p_in
    + coalesce(cache_read, 0) * coalesce(p_read, p_in)
    + coalesce(cache_write, 0) * coalesce(p_write, p_in)
    + coalesce(output, 0) * p_out;

-- each price row under its LiteLLM key (alias 0) and, unless the key already
-- starts with it, under `<provider>/<key>` (alias 1: LiteLLM's own routing
-- name, as nanobot's `anthropic/claude-sonnet-4-5`)
CREATE TABLE price_names AS
SELECT name, price_name(name) AS norm, alias, model AS price_model
FROM (SELECT model AS name, 0 AS alias, model FROM prices
      UNION ALL
      SELECT provider || '/' || model, 1, model FROM prices
      WHERE provider IS NOT NULL AND NOT starts_with(model, provider || '/'));
-- USD of a group of calls (a session's) from each call's priced flag and
-- call_cost: their sum, NULL when one has no price (a partial sum would
-- understate it). An aggregate: used under GROUP BY.
CREATE MACRO calls_cost(priced, cost) AS CASE WHEN bool_and(priced) THEN sum(cost) END;

CREATE TABLE model_prices AS
WITH matches AS (
    -- a --free pattern (a case-insensitive glob over the model or
    -- provider/model) before any price: the user says the model costs 0
    SELECT u.agent, u.provider, u.model, 0 AS step, 0 AS alias,
        '--free ' || min(f.pattern) AS price_model
    FROM model_uses u JOIN free_models f
      ON lower(u.model) GLOB lower(f.pattern)
      OR lower(coalesce(u.provider || '/', '') || u.model) GLOB lower(f.pattern)
    GROUP BY u.agent, u.provider, u.model
    UNION ALL
    SELECT u.agent, u.provider, u.model, 1 AS step, n.alias, n.price_model
    FROM model_uses u JOIN price_names n ON n.name = u.provider || '/' || u.model
    UNION ALL
    SELECT u.agent, u.provider, u.model, 2, n.alias, n.price_model
    FROM model_uses u JOIN price_names n ON n.name = u.model
    UNION ALL
    SELECT u.agent, u.provider, u.model, 3, n.alias, n.price_model
    FROM model_uses u JOIN price_names n ON n.norm = price_name(u.provider || '/' || u.model)
    UNION ALL
    SELECT u.agent, u.provider, u.model, 4, n.alias, n.price_model
    FROM model_uses u JOIN price_names n ON n.norm = price_name(u.model)
),
best AS (
    -- the first rule that matches; within it a key before an alias, then
    -- the shortest key (the undated one), then the first by name
    SELECT * FROM matches
    QUALIFY row_number() OVER (PARTITION BY agent, provider, model
                               ORDER BY step, alias, length(price_model), price_model) = 1
)
SELECT u.agent, u.provider, u.model, b.price_model, b.step AS price_step,
    CASE WHEN b.step = 0 THEN CAST(0 AS DECIMAL(38, 18)) ELSE p.input END AS input,
    CASE WHEN b.step = 0 THEN CAST(0 AS DECIMAL(38, 18)) ELSE p.output END AS output,
    CASE WHEN b.step = 0 THEN CAST(0 AS DECIMAL(38, 18)) ELSE p.cache_read END AS cache_read,
    CASE WHEN b.step = 0 THEN CAST(0 AS DECIMAL(38, 18)) ELSE p.cache_write END AS cache_write
FROM model_uses u
LEFT JOIN best b ON b.agent = u.agent AND b.provider IS NOT DISTINCT FROM u.provider
                AND b.model = u.model
LEFT JOIN prices p ON p.model = b.price_model;

-- each model no rule prices: one warning, naming it (its first instance and
-- source_path, how many calls it leaves unpriced)
INSERT INTO diagnostics BY NAME
SELECT 'warning' AS kind, u.agent, u.instance, u.source_path,
    CAST(NULL AS BIGINT) AS source_line,
    'no price for model ' || u.model || coalesce(' (provider ' || u.provider || ')', '')
    || ': cost_usd is NULL for its ' || CAST(u.uses AS VARCHAR)
    || CASE WHEN u.agent = 'nanobot' THEN ' llm_calls rows'
            WHEN u.provider = 'anthropic' THEN ' Claude Code responses'
            ELSE ' transcript responses' END
    || ' (--prices FILE can price it)' AS message,
    CAST(NULL AS VARCHAR) AS session_id, diag_code('price_unknown') AS code
FROM model_uses u
JOIN model_prices m ON m.agent = u.agent AND m.provider IS NOT DISTINCT FROM u.provider
                   AND m.model = u.model
WHERE m.price_model IS NULL;
