"""Measure: pass rates and deltas with intervals (measure), built on array-level statistics (stats).
"""
