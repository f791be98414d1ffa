-- Ferry's storage on PostgreSQL: one table per kind of record, keyed as the domain looks them
-- up, with the constraints that carry its rules. Each record is kept whole as JSONB (the shape
-- the domain serializes); the columns beside it are what queries select, order and constrain
-- on, and money is NUMERIC. Text keys use the "C" collation, so that lists come in the byte
-- order of their keys, as on the embedded store. Nothing here needs an extension or advisory
-- locks (CockroachDB and YugabyteDB take it as it is).

CREATE TABLE suppliers (
    code TEXT COLLATE "C" PRIMARY KEY,
    record JSONB NOT NULL
);

CREATE TABLE operations_teams (
    name TEXT COLLATE "C" PRIMARY KEY,
    record JSONB NOT NULL
);

CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    key_digest TEXT NOT NULL UNIQUE,
    revoked_at TIMESTAMPTZ,
    record JSONB NOT NULL
);

CREATE TABLE import_processes (
    supplier TEXT COLLATE "C" NOT NULL,
    external TEXT COLLATE "C" NOT NULL,
    state TEXT NOT NULL,
    platform_account_number TEXT,
    account_created_at TIMESTAMPTZ,
    record JSONB NOT NULL,
    PRIMARY KEY (supplier, external)
);

CREATE TABLE accounts (
    number TEXT PRIMARY KEY,
    record JSONB NOT NULL
);

-- One row per account with records: its summary (balance, latest statement), and the row a
-- unit of work locks (SELECT ... FOR UPDATE) so that two units of one account never interleave.
CREATE TABLE account_summaries (
    account TEXT PRIMARY KEY,
    balance NUMERIC(16, 2),
    record JSONB
);

CREATE TABLE notes (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    id BIGINT NOT NULL,
    record JSONB NOT NULL,
    PRIMARY KEY (account, id)
);

-- The creation dates of the notes of each dedupe key (a digest of body and document paths, or
-- the external id: bytes, for the key holds a NUL separator).
CREATE TABLE note_keys (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    dedupe_key BYTEA NOT NULL,
    created_at JSONB NOT NULL,
    PRIMARY KEY (account, dedupe_key)
);

CREATE TABLE ledger_entries (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    id BIGINT NOT NULL,
    amount NUMERIC(16, 2) NOT NULL,
    balance_after NUMERIC(16, 2) NOT NULL,
    record JSONB NOT NULL,
    PRIMARY KEY (account, id)
);

CREATE TABLE transactions (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    transaction_id TEXT NOT NULL,
    ledger_entry_id BIGINT,
    record JSONB NOT NULL,
    PRIMARY KEY (account, transaction_id),
    FOREIGN KEY (account, ledger_entry_id) REFERENCES ledger_entries (account, id)
);

CREATE TABLE statements (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    statement_id TEXT COLLATE "C" NOT NULL,
    record JSONB NOT NULL,
    PRIMARY KEY (account, statement_id)
);

CREATE TABLE payment_instructions (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    vendor TEXT COLLATE "C" NOT NULL,
    reference TEXT COLLATE "C" NOT NULL,
    record JSONB NOT NULL,
    PRIMARY KEY (account, vendor, reference)
);

CREATE TABLE meter_points (
    account TEXT NOT NULL REFERENCES account_summaries (account),
    mpxn TEXT COLLATE "C" NOT NULL,
    record JSONB NOT NULL,
    PRIMARY KEY (account, mpxn)
);

-- Ids of notes and ledger entries, in blocks of 1000: a unit of work takes a block with one
-- nextval once it holds its account's lock, so an account's ids grow in the order its changes
-- were made, whichever instance made them.
CREATE SEQUENCE record_id_blocks;

CREATE TABLE plugins (
    supplier TEXT PRIMARY KEY,
    sha256 TEXT NOT NULL,
    record JSONB NOT NULL
);

CREATE TABLE plugin_components (
    sha256 TEXT PRIMARY KEY,
    component BYTEA NOT NULL
);

-- The event log and the outbox in one: an event waits to be published while published_at is
-- null. Written in the same transaction as the change it describes.
CREATE TABLE events (
    seq BIGSERIAL PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    subject TEXT,
    record JSONB NOT NULL,
    published_at TIMESTAMPTZ
);
CREATE INDEX events_unpublished ON events (seq) WHERE published_at IS NULL;

CREATE TABLE secrets (
    name TEXT PRIMARY KEY,
    value BYTEA NOT NULL
);
