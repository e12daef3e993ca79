-- a pipeline
CREATE OR REFRESH STREAMING TABLE events TRIGGER AVAILABLE NOW AS
SELECT id, payload
FROM STREAM read_files('landing/', format => 'json', schema => 'id BIGINT, payload VARCHAR',
                       maxFilesPerTrigger => 1);
