"""The whileai engine: simulate, grade, measure, select, guard, export, train.

Never imports pytest. Modules are imported on demand; ``whileai`` is the public facade.
"""
