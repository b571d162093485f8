package policies

// KnownKPIIDs returns the catalog acronyms of the known-KPI direction
// table, for the test that checks them against enrich's catalog.
func KnownKPIIDs() []string {
	var ids []string
	for _, k := range knownKPIDirections {
		if k.id != "" {
			ids = append(ids, k.id)
		}
	}
	return ids
}
