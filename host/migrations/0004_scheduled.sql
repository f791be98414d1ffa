-- Scheduled migrations still to run, for every instance to find (each rescans them, so a
-- schedule staged through one instance runs even when that instance is gone). Only the few
-- processes with a schedule are in the index.
CREATE INDEX import_processes_scheduled ON import_processes (supplier, external)
    WHERE jsonb_typeof(record -> 'schedule') = 'object' AND state IN ('PENDING', 'ERRORED');
