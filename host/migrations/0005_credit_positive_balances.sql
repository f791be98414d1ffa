-- Balances in the real platform's sign: credit positive, debit negative. The columns held
-- what the customer owed (debit positive); each is turned round once, so that a stored account
-- keeps its meaning. The records beside them are read in either sign (the domain's
-- `AccountSummary` and `LedgerEntry` tell the two apart by the name of the field).
UPDATE account_summaries SET balance = -balance WHERE balance IS NOT NULL;
UPDATE ledger_entries SET balance_after = -balance_after;
