"""What the two command lines, ``wasdi`` and ``wasdi-server``, share: one look for every ``--help`` and one root
group behaviour.  Both import from here; neither imports the other (installed by the ``cli`` and ``server``
extras, which both bring Typer)."""
