// Layer train: see include/agentrl/train/.
