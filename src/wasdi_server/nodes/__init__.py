"""Node roles, forwarding, merges and propagation between the nodes of a deployment (gaps §8, docs/nodes.md).

``identity`` says who this node is; ``client`` makes node-to-node calls (through the outbound guard, to
registered node addresses only); ``forwarding`` sends work to the node of its workspace; ``merges`` adds
the compute nodes' answers to the main node's; ``outbox`` propagates changes durably; ``app_install``
installs an app on a compute node at its first run there; ``endpoints`` are the calls only nodes may make.
"""
