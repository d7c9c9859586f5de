"""The snapshot schema, as named migrations recorded in ``schema_migrations``.

This layout is a contract: :mod:`audit.duckdb_corpus` reads it (without importing this
module), the site reads it, and older snapshots must stay readable. Add a migration, never
edit one that has shipped. Bump :data:`SCHEMA_VERSION` with each.

Tables
------
meta              key/value: name, snapshot_id, created_at, parent_sha256, spec_hash,
                  tool_version, schema_version, segmentation_version
sources           one row per source: harvest status ('ok' | 'partial' | 'failed' |
                  'not_harvested'), counts, failed requests
records           one row per record *version* (record_id, version): metadata, tri-state flags
                  (migration 5: ``licence``, the record's licence as audit.licences names it —
                  ``CC-BY-4.0``, ``public-domain``, ``other:<url>``, ``unknown`` — and
                  ``licence_raw``, the source's own value; rows of older snapshots read as
                  ``unknown``, and a later harvest that sees the same version fills them in)
record_versions   per record version: order (seq), content hash, first/last seen snapshot,
                  origin ('harvest' | 'carried' | 'backfill')
record_state      per record: current version, withdrawn upstream or not
passages          (record_id, version, path): section label, text, folded text (migration 3:
                  folded is NULL where it equals the text, and the primary-key index, which
                  cost builds time and memory in proportion to the corpus and served no
                  query, is gone; the rows are unique by construction)
annotations       PubTator3 entities with spans relative to the passage text
relations         retraction/EoC/erratum/correction/preprint links, per record
responses         raw response bodies (zlib), so ``snapshot rebuild`` can re-parse
                  (migration 2 adds the credential-free form body of POST requests)
search_docs       (migration 2) BM25 index: one document per passage version, its length
search_terms      (migration 2) BM25 index: term frequencies per document (migration 4: the
                  term as a number of search_vocab; integers are stored, compared and
                  grouped at a fraction of the cost of text, which made indexing a third
                  cheaper and the table a third smaller)
search_vocab      (migration 4) BM25 index: the number of every term, one row per term
search_works      (migration 6) each current, not withdrawn record's work and the work's
                  flags, numbered; stored at the end of a build (pipeline/snapshot/works.py)
search_postings   (migration 6) the postings of search_terms in term order with what ranking
                  needs (length, record and work numbers, flags): a search reads only its
                  terms' rows. Both are valid only where ``meta.search_works`` names the
                  snapshot's own id (works.stored_works)
harvest_log       one row per request/step, for the manifest and for debugging
"""

from __future__ import annotations

from typing import NamedTuple

SCHEMA_VERSION = 6


class Migration(NamedTuple):
    id: int
    name: str
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    Migration(
        1,
        "initial",
        """
        CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR);
        CREATE TABLE sources (
            source VARCHAR PRIMARY KEY,
            status VARCHAR NOT NULL,          -- ok | partial | failed | not_harvested
            records INTEGER NOT NULL DEFAULT 0,
            passages INTEGER NOT NULL DEFAULT 0,
            failed_requests INTEGER NOT NULL DEFAULT 0,
            detail VARCHAR
        );
        CREATE TABLE records (
            record_id VARCHAR NOT NULL,       -- scheme:id, e.g. pmid:99000001, nct:NCT99000001
            version VARCHAR NOT NULL,         -- upstream version, else '1', '2', … by content hash
            source VARCHAR NOT NULL,
            content_hash VARCHAR NOT NULL,
            version_date VARCHAR,
            title VARCHAR,
            doi VARCHAR,
            pmid VARCHAR,
            pmcid VARCHAR,
            year INTEGER,
            journal VARCHAR,
            authors VARCHAR,                  -- JSON list
            publication_types VARCHAR,        -- JSON list
            content_type VARCHAR,
            status VARCHAR,                   -- e.g. trial overall status, PubMed in-process
            retracted BOOLEAN,                -- NULL = unknown
            expression_of_concern BOOLEAN,
            preprint BOOLEAN,
            metadata VARCHAR,                 -- JSON object
            PRIMARY KEY (record_id, version)
        );
        CREATE TABLE record_versions (
            record_id VARCHAR NOT NULL,
            version VARCHAR NOT NULL,
            seq INTEGER NOT NULL,             -- 1 = oldest version the lineage knows
            content_hash VARCHAR NOT NULL,
            first_seen VARCHAR NOT NULL,      -- snapshot_id
            last_seen VARCHAR NOT NULL,       -- snapshot_id
            origin VARCHAR NOT NULL,          -- harvest | carried | backfill
            PRIMARY KEY (record_id, version)
        );
        CREATE TABLE record_state (
            record_id VARCHAR PRIMARY KEY,
            source VARCHAR NOT NULL,
            current_version VARCHAR NOT NULL,
            withdrawn BOOLEAN NOT NULL DEFAULT FALSE,
            withdrawn_since VARCHAR           -- snapshot_id in which it disappeared upstream
        );
        CREATE TABLE passages (
            record_id VARCHAR NOT NULL,
            version VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            seq INTEGER NOT NULL,             -- order within the record version
            section VARCHAR,
            text VARCHAR NOT NULL,
            folded VARCHAR NOT NULL,          -- audit.folding.fold(text)
            PRIMARY KEY (record_id, version, path)
        );
        CREATE TABLE annotations (
            record_id VARCHAR NOT NULL,
            version VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            text VARCHAR,
            type VARCHAR,
            identifier VARCHAR
        );
        CREATE TABLE relations (
            record_id VARCHAR NOT NULL,
            kind VARCHAR NOT NULL,
            target VARCHAR NOT NULL,
            source VARCHAR NOT NULL,
            detail VARCHAR,
            date VARCHAR,
            first_seen VARCHAR
        );
        CREATE TABLE responses (
            id INTEGER PRIMARY KEY,
            source VARCHAR,
            method VARCHAR NOT NULL,
            url VARCHAR NOT NULL,             -- credentials removed
            status INTEGER NOT NULL,
            content_type VARCHAR,
            body BLOB,                        -- zlib-compressed
            sha256 VARCHAR NOT NULL,          -- of the uncompressed body
            fetched_at VARCHAR
        );
        CREATE TABLE harvest_log (
            ts VARCHAR,
            source VARCHAR,
            step VARCHAR,
            url VARCHAR,
            status INTEGER,
            ok BOOLEAN,
            records INTEGER,
            detail VARCHAR
        );
        """,
    ),
    Migration(
        2,
        "request_bodies_and_search_index",
        """
        -- the form of a POST request, credentials removed
        ALTER TABLE responses ADD COLUMN request_body VARCHAR;
        -- the BM25 passage index (pipeline/snapshot/index.py), one document per passage version
        CREATE TABLE search_docs (
            docid BIGINT NOT NULL,
            record_id VARCHAR NOT NULL,
            version VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            length INTEGER NOT NULL           -- index terms in the passage
        );
        CREATE TABLE search_terms (
            docid BIGINT NOT NULL,
            term VARCHAR NOT NULL,            -- lower-cased, accent-free, Porter-stemmed word
            tf INTEGER NOT NULL               -- occurrences in the passage
        );
        """,
    ),
    Migration(
        3,
        "lean_passages",
        """
        CREATE TABLE passages_v3 (
            record_id VARCHAR NOT NULL,
            version VARCHAR NOT NULL,
            path VARCHAR NOT NULL,
            seq INTEGER NOT NULL,
            section VARCHAR,
            text VARCHAR NOT NULL,
            folded VARCHAR                    -- audit.folding.fold(text); NULL: same as text
        );
        INSERT INTO passages_v3
            SELECT record_id, version, path, seq, section, text, nullif(folded, text)
            FROM passages;
        DROP TABLE passages;
        ALTER TABLE passages_v3 RENAME TO passages;
        """,
    ),
    Migration(
        4,
        "search_term_ids",
        """
        CREATE TABLE search_vocab (
            term_id INTEGER NOT NULL,         -- numbered in order of first indexing
            term VARCHAR NOT NULL             -- lower-cased, accent-free, Porter-stemmed word
        );
        INSERT INTO search_vocab
            SELECT (row_number() OVER (ORDER BY term))::INTEGER, term
            FROM (SELECT DISTINCT term FROM search_terms);
        CREATE TABLE search_terms_v4 (
            docid BIGINT NOT NULL,
            term_id INTEGER NOT NULL,         -- search_vocab.term_id
            tf INTEGER NOT NULL               -- occurrences in the passage
        );
        INSERT INTO search_terms_v4
            SELECT t.docid, v.term_id, t.tf FROM search_terms t JOIN search_vocab v USING (term);
        DROP TABLE search_terms;
        ALTER TABLE search_terms_v4 RENAME TO search_terms;
        """,
    ),
    Migration(
        5,
        "record_licences",
        """
        -- audit.licences' vocabulary; 'unknown' for every row written before the licence was
        ALTER TABLE records ADD COLUMN licence VARCHAR DEFAULT 'unknown';
        -- the source's own value (a licence URL, Europe PMC's 'cc by'…), or NULL
        ALTER TABLE records ADD COLUMN licence_raw VARCHAR;
        """,
    ),
    Migration(
        6,
        "search_works",
        """
        -- derived at the end of a build, never carried (pipeline/snapshot/works.py, index.py)
        CREATE TABLE search_works (
            record_id VARCHAR NOT NULL,       -- a current, not withdrawn record
            version VARCHAR NOT NULL,         -- its current version
            work VARCHAR NOT NULL,            -- the smallest record id of its work
            retracted BOOLEAN,                -- the work's flags, fail closed over its records
            expression_of_concern BOOLEAN,
            record_no INTEGER NOT NULL,       -- the record's rank in record id order, from 1
            work_no INTEGER NOT NULL          -- the record_no of the work's id
        );
        CREATE TABLE search_postings (
            term_id INTEGER NOT NULL,         -- stored in term_id, docid order
            docid BIGINT NOT NULL,
            tf INTEGER NOT NULL,
            length INTEGER NOT NULL,          -- search_docs.length
            record_no INTEGER,                -- search_works.record_no; NULL: not a current,
            work_no INTEGER,                  --   not withdrawn passage version
            retracted BOOLEAN,                -- the work's flags (search_works)
            expression_of_concern BOOLEAN
        );
        """,
    ),
)
