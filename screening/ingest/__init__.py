"""Getting documents in: the formats and their rules (`formats`, no Django), the read-only store of source
files (`storage`, no Django), reading an upload into rows (`reading`, no Django), and the upload services
(`uploads`)."""
