-- Batch and node identity.
--
-- A batch is claimed once in ingested_batches by (node, sequence, the end
-- of its cycle); a batch that comes again with a claimed key is taken for
-- a resend and dropped. So the claim keeps what the batch held: a key
-- claimed before with the same content is a resend, with other content it
-- is refused, loudly, and the daemon keeps the batch aside; a sequence
-- claimed before for another cycle end (a node whose numbering started
-- again) is stored and said loudly, with both contents. Rows from before
-- this version have no content recorded (NULL): they are taken for
-- resends, as before.
ALTER TABLE ingested_batches
    ADD COLUMN content_crc32 bigint CHECK (content_crc32 BETWEEN 0 AND 4294967295),
    ADD COLUMN content_bytes bigint CHECK (content_bytes > 0);

-- With CURVE, the public key each node id belongs to, learnt the first
-- time the node id is seen (or written here by an admin beforehand, which
-- is why it does not refer to nodes): a batch naming a node id of another
-- key is refused, so one node cannot write as another. A node given a new
-- key needs its row deleted.
CREATE TABLE node_keys (
    node_id          bigint PRIMARY KEY,
    curve_public_key text NOT NULL CHECK (length(curve_public_key) = 40),  -- Z85
    first_seen       timestamptz NOT NULL DEFAULT now()
);
