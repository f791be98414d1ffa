-- Each supplier's counters: its campaign report's figures (accounts by state, errors by code,
-- records kept, reconciliations and their totals), moved by every change in the change's own
-- statement and read summed, never counted from the accounts. A counter is spread over a few
-- rows (shards) so that concurrent changes of one supplier seldom wait for one row's lock.
CREATE TABLE supplier_counts (
    supplier TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    shard SMALLINT NOT NULL,
    value BIGINT NOT NULL,
    PRIMARY KEY (supplier, name, shard)
);

-- One-time work Ferry does itself after the migrations (the counters of the accounts stored
-- before they were kept), each done once: its name here once it is.
CREATE TABLE store_marks (
    name TEXT PRIMARY KEY,
    done_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
