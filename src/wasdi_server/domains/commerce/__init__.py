"""Commerce: subscriptions (trials, user types, payment), organizations, projects and credit packages."""
