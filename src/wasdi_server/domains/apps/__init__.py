"""Apps (processors): their records, files, deployment and runs, environments (package manager), the app store
and its media (reviews), payments for apps, and parameter templates."""
