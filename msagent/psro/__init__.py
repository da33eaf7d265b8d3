"""Policy-space response oracles (PSRO) on the league: meta-solvers, exact game-tree tools
for OpenSpiel games, the PSRO loop. Pure: nothing here knows of Ray."""
