"""Games msagent ships adapters for, each in its own subpackage: ``football`` (Google Research
Football, run in a child process from its own virtual environment) and ``fightingice``
(DareFightingICE over its socket protocol)."""
