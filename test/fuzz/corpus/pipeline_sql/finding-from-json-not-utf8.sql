SELECT 5L, 1.5D, 1.50B::DD, X'ff', r'raw\n', 'it\'s', 'a' 'b', e.x::STRING, concat_ws(',', array('a')),
  from_json(j, 'á INT, b ARRAY<STRING>'), parse_json(j):a.b[0]::INT, * EXCEPT (c)
FROM a LEFT SEMI JOIN b ON a.k = b.k LATERAL VIEW 