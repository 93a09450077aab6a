"""Scale-out: where rollouts and grading run (the local pool, or shards on a Ray cluster)."""
