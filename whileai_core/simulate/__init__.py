"""Simulate: the world and its tools, the situations to play, the agents, and the run that records rows.
"""
