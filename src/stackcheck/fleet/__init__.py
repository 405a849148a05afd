"""Multi-rank preflight: snapshots gathered from every rank of a job (torchrun, srun), judged
for skew (:mod:`.judge`), and the collectives proven to work (:mod:`.collectives`)."""
