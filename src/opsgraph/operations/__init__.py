"""The operations layer: one module per domain, a catalogue, and the direct-call path.

Import what you need from its module (`operations.catalogue`, `operations.direct`,
`operations.references`); this package imports nothing so that `opsgraph.operations.base`
stays cheap to load.
"""
