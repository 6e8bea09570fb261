// Layer dist: see include/agentrl/dist/.
