"""Business rules, one module per concern; ``wasdi_server.composition`` builds and wires them."""
