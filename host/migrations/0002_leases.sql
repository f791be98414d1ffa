-- Work only one instance may do at a time (the event relay, the expiry sweep): the instance
-- that holds a lease renews it before it expires; when it dies, another takes it.
CREATE TABLE leases (
    name TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
