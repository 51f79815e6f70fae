"""One work queue for screening's reviews and labelling's pairwise labels.

A round (or comparison set) gives each reviewer (or expert) a queue of assignments, served in order: the next one,
the previous one done, the ones put aside. Each worker's counts in the round are stored beside it. The abstract
models here carry what both queues share (``models``), and one set of reads (``selectors``) and writes
(``services``) works on either through the field names the concrete models declare. Not a Django app: it has no
tables of its own and imports only Django and ``core``.
"""
