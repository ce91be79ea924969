"""The knowledge base of a tenant: documents with stable sections (documents), the
catalogue of typed objects (catalogue) and the admin changes to both (admin)."""
