-- V019 call_prices
-- Purpose: the price of every model the calls of both agents use ("Cost"):
--          each call's model (a nanoclaw call's: its transcript's provider)
--          matched to `prices` by `provider/model`, `model`, both normalised
--          (`price_name`), by the rules of sql/shared/pricing.sql, run in
--          place of this step's `-- @pricing` line; unmatched: one
--          `price_unknown` diagnostic per (agent, provider, model).
-- Grain:   model_uses and model_prices: one row per (agent, provider, model).
-- Inputs:  stage_llm_calls, transcript_usage (V018), prices, free_models,
--          diagnostics.
-- Output:  model_uses (agent, provider, model: the models to price, with
--          the first instance and source_path using them and uses), from
--          sql/shared/pricing.sql: price_names (name, norm: the names each
--          price row answers to), model_prices (price_model: the prices
--          row, price_step: 1–4 the rule that matched, 0 a --free pattern
--          (cost 0), NULL unmatched; its prices), the macros price_name(s),
--          call_cost(…) and calls_cost(…) (V020 prices the calls and V021
--          sums sessions with them), and rows appended to diagnostics
--          (`price_unknown`).
-- Creates: table model_prices, table model_uses, table price_names
CREATE TABLE model_uses AS
SELECT 'nanobot' AS agent, provider, model,
    min(instance) AS instance, min(source_path) AS source_path, count(*) AS uses
FROM stage_llm_calls
WHERE model IS NOT NULL
GROUP BY provider, model
UNION ALL
SELECT 'nanoclaw', provider, model, min(instance), min(source_path), count(*)
FROM transcript_usage
WHERE model IS NOT NULL
GROUP BY provider, model;

-- The pricing rules (the macros price_name, call_cost and calls_cost, the
-- tables price_names and model_prices, the price_unknown diagnostics) are
-- sql/shared/pricing.sql, which readers of an output run again to price
-- its calls at read: the step runs it here, in place of the next line.
-- @pricing
