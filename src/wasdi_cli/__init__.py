"""wasdi_cli: the ``wasdi`` command line of the WASDI toolkit."""

__version__ = "0.1.0"
