"""The local map server's WMS parts: ``protocol`` (OGC requests, capabilities, exception reports),
``styles`` (the SLD raster subset), ``render`` (layer files made at publish, drawing), ``cache`` (drawn
images on disk, bounded by bytes).  ``domains/products/maps.py`` answers requests with them; docs/maps.md."""
