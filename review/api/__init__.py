"""The REST API (/api/v1/): thin views over the same services, selectors and forms as the web pages, so the
roles, the blind rule, leases, insert-only judgements and arbitration are the web's own. Shared machinery
(tokens, errors, Idempotency-Key, throttling) is in dedup_site.api."""
