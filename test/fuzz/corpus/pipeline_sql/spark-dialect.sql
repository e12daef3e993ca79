SELECT 5L, 1.5D, 1.50BD, X'ff', r'raw\n', 'it\'s', 'a' 'b', e.x::STRING, concat_ws(',', array('a')),
  from_json(j, 'a INT, b ARRAY<STRING>'), parse_json(j):a.b[0]::INT, * EXCEPT (c)
FROM a LEFT SEMI JOIN b ON a.k = b.k LATERAL VIEW OUTER explode(arr) AS v
WHERE name RLIKE '^x' DISTRIBUTE BY k SORT BY k;
SELECT dateadd(DAY, 1, d), datediff(HOUR, a, b), filter(xs, x -> x > 1), 7 div 2 MINUS SELECT 1;
