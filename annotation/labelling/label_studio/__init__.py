"""Label Studio interchange of a comparison set: tasks and a Pairwise labelling config out, expert labels in.

``format`` is pure (the config, the task records, reading Label Studio's JSON export); ``importing`` stores the
labels read, all or nothing.
"""
