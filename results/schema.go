package results

// SchemaVersion is the version of the JSON Schema (draft 2020-12) that
// `show --format json` and `export --format json` follow:
// schema/tierbench-results.v<N>.json beside this file, whose changes
// docs/results-schema.md lists. A change a reader of the previous
// version would misread (a field removed, renamed or given another type
// or meaning) makes a new version; a field added is added to the current
// version's schema, since readers ignore fields they do not know.
const SchemaVersion = 1
