"""A tenant's logic as data: the harness format, its validation, versions and diagram.

The engine executes a version (`opsgraph.engine.harness_node`); the built-in behaviour is
the harness of one `supervisor` step."""
