"""Administration: the admin console's lookups, its user administration, and the resource types of
permissions; it reads across the other domains, and none of them reads it."""
