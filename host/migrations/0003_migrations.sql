-- Bulk migrations, with their progress as last written by the instance running them: every
-- instance lists them, and one takes a job over when its instance is gone.
CREATE TABLE migrations (
    supplier TEXT COLLATE "C" NOT NULL,
    id TEXT COLLATE "C" NOT NULL,
    record JSONB NOT NULL,
    PRIMARY KEY (supplier, id)
);
