// Layer algo: see include/agentrl/algo/.
