"""Retention: which of a thread's checkpoints it still needs, decided from its rows'
skeletons alone (ids, parents, versions, what each row stores). No I/O: the stores
read the skeletons and delete what the plan lets go (`stores.*.prune`)."""
