"""Beyond one machine: all of PubMed on Apache Spark (``citeseal scale``, docs/scale.md).

* :mod:`pipeline.scale.history` — the pure core: one baseline or update file's bytes → its
  records' events (the PubMed parser, flags, passages and content hashes of ``snapshot
  build``), one record's events → its rows in every table (the lineage rules of
  :mod:`pipeline.snapshot.lineage`);
* :mod:`pipeline.scale.ingest` — the Spark job: a task per file, a group per record, the
  tables written as Hive-partitioned Parquet, atomically (``scale ingest``);
* :mod:`pipeline.scale.folder` — the scale folder's layout and manifest;
* :mod:`pipeline.scale.snapshot` — a scale folder → a sealed DuckDB snapshot
  (``scale snapshot``);
* :mod:`pipeline.scale.generate` — a generated baseline in the real file format, synthetic
  content, for tests and the bench (``scale generate``).

Errors: :class:`pipeline.errors.ScaleError` (no Java or PySpark here, a failed Spark job,
a folder that is not a complete scale folder); a file that cannot be parsed is reported
through it with the file's name.
"""
