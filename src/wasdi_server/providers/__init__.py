"""Outside systems behind small interfaces, each with a local default, chosen in the settings.

- ``search``: the catalogues products are found in (a local catalogue, STAC APIs, EODAG);
- ``payments``: checkouts (a local simulated one, Stripe);
- ``mail``: a Maildir outbox or SMTP;
- ``mapserver`` and ``wms``: published bands as map layers, drawn and served over WMS;
- ``raster_reads``: what a reader of users' rasters is asked (the boxed readers answer it);
- ``package_index``: the latest versions of Python packages;
- ``outbound``: the one guard every outbound fetch on a user's behalf goes through.

Below the business rules and beside the store: nothing here imports a rule, the machinery or the HTTP face.
"""
