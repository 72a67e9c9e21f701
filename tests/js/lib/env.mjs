// Imported before rivetkit/client so the client's logger picks these up.
// The client logs every rejected action at warn level; the tests provoke many
// on purpose. Override with RIVET_LOG_LEVEL=debug when investigating.
process.env.RIVET_LOG_LEVEL ??= "error";
