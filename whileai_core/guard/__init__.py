"""Guard: what can make a reward lie (hack scan, hollow runs, contamination, trace markers, an online monitor).
"""
