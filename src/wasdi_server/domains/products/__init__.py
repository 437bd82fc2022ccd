"""Products: the files of a workspace the service knows (``service``, one module per concern), reading their
bands (``readers``), missions and search, images, map styles with their previews, and the WMS of the maps."""
