"""The Slurm side of the pipeline. A batch becomes work on the cluster either as one
array job (a task per shard) or as tickets that long-lived pilot tasks pull; what both
sides read and write on the shared file system is here (``shards``: a batch's array
directories; ``tickets``: the pilot pool's queue), the serving host's side under
``submit`` (``arrays``, ``pool``) and the compute node's side under ``node`` (``task``,
``pilot``). Neither side imports the other: they meet only in those files."""
