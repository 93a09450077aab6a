"""Select: which rows to train on (select), preference pairs, and the curriculum of tasks.
"""
