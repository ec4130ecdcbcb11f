-- Rule:   an instance's `tz_offsets` ranges are well formed and disjoint:
--         first_day <= last_day, and no day lies in two ranges of one
--         instance (docs/design.md "Time": one winning offset per local day,
--         consecutive days with the same winner form one range).
-- Grain:  one row per tz_offsets row that is inverted or starts on or before
--         the last day of an earlier-starting range of its instance.
-- Inputs: tz_offsets.
WITH ranges AS (
    SELECT *,
        max(last_day) OVER (PARTITION BY instance ORDER BY first_day, last_day
                            ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS earlier_last_day
    FROM tz_offsets
)
SELECT instance, first_day, last_day, offset_minutes, earlier_last_day,
    CASE WHEN first_day > last_day THEN 'first_day after last_day'
         ELSE 'overlaps an earlier range' END AS problem
FROM ranges
WHERE first_day > last_day OR first_day <= earlier_last_day
ORDER BY ALL;
