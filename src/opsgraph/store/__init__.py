"""The store: MongoDB client, embedded server, tenant scope, indexes, demo data."""
