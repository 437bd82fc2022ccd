"""The platform: this node and the compute nodes as records (and the choice of a node for new work), and the
metrics nodes sample and push."""
