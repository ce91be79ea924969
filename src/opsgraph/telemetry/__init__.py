"""What an on-call engineer reads: logs with the ids of the request and the run on every
line (`logs`), metrics as CloudWatch embedded-metric lines (`metrics`), and spans through
the OpenTelemetry API (`traces`). The ids travel in context variables (`context`)."""
