// Layer model: see include/agentrl/model/.
