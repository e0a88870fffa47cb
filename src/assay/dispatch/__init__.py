"""``assay verify``: plan which checks to run, run them somewhere, and merge what they measured.

- ``plan``: selection (claims, device, stale only, a time budget, most stale first) and shards balanced by
  recorded duration;
- ``task``: what one shard runs (``pytest verify`` over its checks into its own results folder) and the
  errors recorded for the checks of a task that died;
- ``local`` and ``slurm``: the executors (pytest-xdist on this machine; a SLURM job array through submitit);
- ``progress``: tasks queued, running, done; checks passed, failed, errored;
- ``runstate``: the state file under ``build/verify/`` that ``--resume`` reads;
- ``controller``: the loop that ties them together and ends with ``assay.ledger.merge``.
"""
