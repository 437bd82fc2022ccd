"""One module per SDK group; ``wasdi_cli.main`` wires them."""
