"""``msagent dashboard``: a league's view in the browser (ladder, payoff heatmap, ratings over
time, lineage, PSRO, run facts), served read-only from run directories while they train.

The data comes from each run's ``feed/`` (see :mod:`msagent.rundir.feed`), else its newest
checkpoint; :mod:`~msagent.dashboard.views` turns it into plain data that the page draws.
"""
